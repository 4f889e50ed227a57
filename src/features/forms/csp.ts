// A site may send its own Content-Security-Policy (`_headers`). Pages that get hosted forms must
// still run what Pier adds: its scripts from the site host ('self'), the altcha widget's workers
// (data:/blob: URLs), same-origin fetches, the injected style block (by hash, unless the policy
// already allows inline styles) and, only where a form uses Turnstile, Cloudflare's script and
// frame. Everything else in the site's policy is kept as it is.
import { createHash } from "node:crypto";
import { TURNSTILE_ORIGIN } from "./turnstile";

interface Directive {
  name: string;
  sources: string[];
}

function parse(csp: string): Directive[] {
  return csp
    .split(";")
    .map((d) => d.trim().split(/\s+/).filter(Boolean))
    .filter((parts) => parts.length > 0)
    .map(([name, ...sources]) => ({ name: name!.toLowerCase(), sources }));
}

/** The hash source allowing exactly this inline <style> content. */
export const styleHash = (css: string): string => `'sha256-${createHash("sha256").update(css).digest("base64")}'`;

/** The site's policy with what hosted forms need added (the fallback chain of each directive respected). */
export function widenCspForForms(csp: string, o: { turnstile: boolean; styleHash: string }): string {
  const directives = parse(csp);
  const get = (name: string) => directives.find((d) => d.name === name);
  const ensure = (name: string, fallbacks: string[], sources: string[]) => {
    let d = get(name);
    if (!d) {
      // Absent: the browser uses the first fallback present; none present means unrestricted.
      const from = fallbacks.map(get).find((x) => x !== undefined);
      if (!from) return;
      d = { name, sources: [...from.sources] };
      directives.push(d);
    }
    d.sources = d.sources.filter((s) => s.toLowerCase() !== "'none'");
    for (const s of sources) if (!d.sources.includes(s)) d.sources.push(s);
  };
  const cf = o.turnstile ? [TURNSTILE_ORIGIN] : [];
  ensure("script-src", ["default-src"], ["'self'", ...cf]);
  ensure("worker-src", ["child-src", "script-src", "default-src"], ["'self'", "data:", "blob:"]);
  ensure("connect-src", ["default-src"], ["'self'", ...cf]);
  if (o.turnstile) ensure("frame-src", ["child-src", "default-src"], cf);
  // A hash next to 'unsafe-inline' would switch 'unsafe-inline' off for the site's own styles.
  const style = get("style-src") ?? get("default-src");
  if (!style?.sources.some((s) => s.toLowerCase() === "'unsafe-inline'")) ensure("style-src", ["default-src"], [o.styleHash]);
  return directives.map((d) => [d.name, ...d.sources].join(" ")).join("; ");
}
