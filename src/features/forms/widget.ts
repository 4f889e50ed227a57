// Hosted forms in a site's HTML pages: inline where the page holds {{PIER_FORM:<name>}} or
// {{PIER_FORM}}, otherwise a floating panel (a <details> element: it opens without script) at
// the configured desktop and mobile position. /_pier/forms.js sends them in place.
import type { Deps } from "../../core/context";
import { bucketMetadataOf } from "../buckets";
import { activeFormsConfig, requiredFieldsOf, type FormsConfig } from "./config";
import { FORMS, type FormName } from "./definitions";
import { formHtml, formScripts, startedToken } from "./render";
import { turnstileSiteKey } from "./turnstile";
import { styleHash, widenCspForForms } from "./csp";
import { MACRO_NAME_MAX, macroStream } from "./page-stream";
import type { FormSite } from "./visitor";

/** Configuration changes reach pages within this time (a bucket PATCH announces nothing). */
const CONFIG_TTL_MS = 5_000;
// A name is at most MACRO_NAME_MAX letters, as in a streamed page (page-stream.ts).
const MACRO = new RegExp(`\\{\\{PIER_FORM(?::([a-z]{1,${MACRO_NAME_MAX}}))?\\}\\}`, "g");

const CSS =
  // Floating forms that share a corner stack in one column there (an opened one pushes the others
  // along instead of lying under them); the column scrolls when it is taller than the window.
  ".pier-float{position:fixed;z-index:2147483000;display:flex;flex-direction:column;gap:.5rem;width:max-content;max-width:min(22rem,92vw);max-height:calc(100vh - 2rem);overflow:auto;margin:0}" +
  ".pier-panel{font:15px/1.4 system-ui,sans-serif;background:#fff;color:#1d2330;border:1px solid #c9ced8;border-radius:10px;box-shadow:0 2px 8px rgba(0,0,0,.18);margin:0}" +
  ".pier-panel>summary{cursor:pointer;padding:.6rem 1rem;font-weight:600;list-style:none}.pier-panel[open]{padding-bottom:.6rem}" +
  ".pier-form{display:grid;gap:.3rem;padding:0 1rem;position:relative}.pier-form h2{font-size:1rem;margin:.4rem 0}.pier-form input,.pier-form textarea{font:inherit;padding:.4rem;border:1px solid #9aa3b5;border-radius:6px}" +
  ".pier-form button{margin-top:.4rem;padding:.45rem;font:inherit;font-weight:600;border:0;border-radius:6px;background:#2456d6;color:#fff;cursor:pointer}.pier-form-error{color:#b42318;font-size:.85em}" +
  ".pier-form .pier-mark{margin:.3rem 0 0}.pier-form .pier-mark button{margin:0;padding:.3rem .6rem;background:#fff;color:#2456d6;border:1px solid #2456d6}" +
  ".pier-comments{max-height:16rem;overflow:auto;font-size:.9em}.pier-comment{border-bottom:1px solid #e3e6ec;padding:.2rem 0}.pier-comment p{margin:.15rem 0}.pier-comment-by{color:#5b6475;font-size:.85em}.pier-comment-reply{margin-left:.8rem!important;color:#1f4fbf}" +
  ".pier-mark-layer{position:fixed;inset:0;z-index:2147483001;cursor:crosshair;background:rgba(20,30,60,.08)}.pier-mark-rect{position:fixed;z-index:2147483002;border:2px solid #e11d48;background:rgba(225,29,72,.15);pointer-events:none}" +
  positions("d") +
  "@media (max-width:640px){" +
  positions("m") +
  "}.pier-hp{position:absolute;left:-9999px}" +
  ".pier-sent{position:fixed;top:1rem;left:50%;transform:translateX(-50%);z-index:2147483000;margin:0;padding:.5rem 1rem;font:15px/1.4 system-ui,sans-serif;background:#ecfdf3;color:#05603a;border:1px solid #6ce9a6;border-radius:8px;box-shadow:0 2px 8px rgba(0,0,0,.18)}";
const STYLE = `<style>${CSS}</style>`;
/**
 * What a page says after a form was posted without JavaScript (the post redirects back with
 * `?pier_form=sent`): the script that shows it otherwise did not run, so the server writes it.
 */
const SENT_NOTICE = `<p class="pier-sent" role="status">Thank you: your message was sent.</p>`;
/** CSP hash source of the injected style block, for sites that send their own policy. */
export const FORMS_STYLE_HASH = styleHash(CSS);

function positions(kind: "d" | "m"): string {
  const reset = "top:auto;bottom:auto;left:auto;right:auto;transform:none";
  const at: Record<string, string> = {
    "top-left": "top:1rem;left:1rem",
    "top-center": "top:1rem;left:50%;transform:translateX(-50%)",
    "top-right": "top:1rem;right:1rem",
    "center-left": "top:50%;left:1rem;transform:translateY(-50%)",
    center: "top:50%;left:50%;transform:translate(-50%,-50%)",
    "center-right": "top:50%;right:1rem;transform:translateY(-50%)",
    "bottom-left": "bottom:1rem;left:1rem",
    "bottom-center": "bottom:1rem;left:50%;transform:translateX(-50%)",
    "bottom-right": "bottom:1rem;right:1rem",
  };
  return Object.entries(at)
    .map(([name, css]) => `.pier-float.pier-${kind}-${name}{${reset};${css}}`)
    .join("");
}

export class FormWidget {
  private readonly configs = new Map<string, { config: FormsConfig | null; until: number }>();

  constructor(private readonly deps: Deps) {}

  /** Whether the site's pages get forms at all (cheap: cached per bucket). */
  active(site: FormSite): boolean {
    const config = this.config(site.bucketId);
    return config !== null && [...config.forms.values()].some((f) => f.hosted && (f.name !== "comments" || site.accessMode !== "public"));
  }

  /** A site's own CSP (from `_headers`) widened for what injected forms need on its pages. */
  widenCsp(site: FormSite, csp: string): string {
    const config = this.config(site.bucketId);
    return widenCspForForms(csp, { turnstile: config !== null && turnstileSiteKey(this.deps, config) !== null, styleHash: FORMS_STYLE_HASH });
  }

  /** The page with its macros filled and the floating forms it did not place inline. */
  inject(site: FormSite, html: string, pagePath: string, sent = false): string {
    const page = this.pageForms(site, pagePath, sent);
    if (page === null) return html;
    const filled = html.replace(MACRO, (_m, name: string | undefined) => page.macro(name));
    const addition = page.end();
    const end = filled.lastIndexOf("</body>");
    return end === -1 ? filled + addition : filled.slice(0, end) + addition + filled.slice(end);
  }

  /**
   * The same for a page too large to read whole (D269), as it streams: macros filled alike, the
   * floating forms and scripts added after the page's last byte instead of before `</body>`.
   */
  injectStream(site: FormSite, pagePath: string, sent = false): TransformStream<Uint8Array, Uint8Array> | null {
    const page = this.pageForms(site, pagePath, sent);
    return page === null ? null : macroStream(page.macro, page.end);
  }

  /**
   * One page view's forms: what each macro becomes (each form once a page, at its first macro: a
   * page repeating macros would otherwise make every view render forms times macros, 11 bytes of
   * page for a few KB of answer each, and a second copy would repeat the form's element ids; later
   * macros go blank), then what the page ends with (the forms no macro placed, floating, and the
   * style and scripts). Null when the site has no hosted form.
   */
  private pageForms(site: FormSite, pagePath: string, sent: boolean): { macro: (name: string | undefined) => string; end: () => string } | null {
    const config = this.config(site.bucketId);
    if (!config) return null;
    const hosted = [...config.forms.values()].filter((f) => f.hosted && (f.name !== "comments" || site.accessMode !== "public"));
    if (hosted.length === 0) return null;
    const turnstile = turnstileSiteKey(this.deps, config);
    const render = (name: FormName) =>
      formHtml(name, {
        required: requiredFieldsOf(config, config.forms.get(name)!),
        started: startedToken(this.deps, site.id, name),
        returnPath: pagePath,
        challenge: true,
        turnstileSiteKey: turnstile ?? undefined,
      });
    const inline = new Set<FormName>();
    const macro = (name: string | undefined) => {
      const chosen = hosted.filter((f) => (name === undefined || f.name === name) && !inline.has(f.name));
      for (const f of chosen) inline.add(f.name);
      return chosen.map((f) => render(f.name)).join("");
    };
    const end = () => {
      const corners = new Map<string, string[]>();
      for (const f of hosted) {
        if (inline.has(f.name)) continue;
        const corner = `pier-d-${f.position.desktop} pier-m-${f.position.mobile}`;
        const panel = `<details class="pier-panel" data-pier-widget="${f.name}"><summary>${FORMS[f.name].label}</summary>${render(f.name)}</details>`;
        corners.set(corner, [...(corners.get(corner) ?? []), panel]);
      }
      const floating = [...corners].map(([corner, panels]) => `<div class="pier-float ${corner}">${panels.join("")}</div>`).join("");
      return `${STYLE}${sent ? SENT_NOTICE : ""}${floating}${formScripts(turnstile !== null)}`;
    };
    return { macro, end };
  }

  private config(bucketId: string): FormsConfig | null {
    const now = performance.now();
    const cached = this.configs.get(bucketId);
    if (cached && cached.until > now) return cached.config;
    if (this.configs.size > 10_000) this.configs.clear();
    const bucket = bucketMetadataOf(this.deps, bucketId);
    const config = bucket ? activeFormsConfig(bucket.metadata) : null;
    this.configs.set(bucketId, { config, until: now + CONFIG_TTL_MS });
    return config;
  }
}
