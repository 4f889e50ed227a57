// The shared look of Pier's server-rendered pages (sign-in, dashboard, device approval, ...):
// HTML templates under sites/ (embedded in the binary), a tiny template syntax, and one layout.
//
// Template syntax (deliberately small; logic stays in TypeScript):
//   {{name}}               value, HTML-escaped
//   {{{name}}}             value inserted as is (only for HTML built with `html` below)
//   {{#name}}...{{/name}}  kept when `name` is truthy
//   {{^name}}...{{/name}}  kept when `name` is falsy
import { siteAssets } from "../../sites-assets.gen";

export type TemplateVars = Record<string, string | number | boolean | null | undefined | SafeHtml>;

/** HTML that is already safe to insert (built from escaped parts). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

// Stricter than escapeHtml in src/http/html.ts on purpose: template values may land in
// unquoted attribute positions, where ` and = matter too, and any value type is accepted.
export function escapeHtml(value: unknown): string {
  return String(value ?? "").replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A stored ISO time as pages show it, to the minute: "2026-11-22 04:31 UTC" ("never" for none). */
export const shortTime = (iso: string | null): string => (iso ? `${iso.slice(0, 16).replace("T", " ")} UTC` : "never");

/** Tagged template: interpolations are escaped unless they are SafeHtml (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((v, i) => {
    const part = (x: unknown): string => (x instanceof SafeHtml ? x.value : Array.isArray(x) ? x.map(part).join("") : escapeHtml(x));
    out += part(v) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

const cache = new Map<string, string>();

/** A template from sites/ by its sites-relative path, e.g. "auth/signin.html". */
export async function loadTemplate(name: string): Promise<string> {
  let text = cache.get(name);
  if (text === undefined) {
    const path = siteAssets[name];
    if (!path) throw new Error(`template ${name} is not embedded (run scripts/gen-embeds.ts)`);
    text = await Bun.file(path).text();
    cache.set(name, text);
  }
  return text;
}

export function renderTemplate(template: string, vars: TemplateVars): string {
  // Outer sections first; repeat so sections nested inside kept ones are resolved too.
  let sections = template;
  for (let prev = ""; prev !== sections; ) {
    prev = sections;
    sections = sections.replace(/\{\{([#^])(\w+)\}\}([\s\S]*?)\{\{\/\2\}\}/, (_, kind: string, name: string, inner: string) => {
      const v = vars[name];
      const truthy = v instanceof SafeHtml ? v.value !== "" : !!v;
      return (kind === "#") === truthy ? inner : "";
    });
  }
  // One pass for {{{raw}}} and {{escaped}}: an inserted value is never scanned again, so text
  // such as "{{apiCsrf}}" in a file name or a variable shows as itself, not as the page's token.
  return sections.replace(/\{\{\{(\w+)\}\}\}|\{\{(\w+)\}\}/g, (_, raw: string | undefined, name: string | undefined) => {
    if (raw !== undefined) {
      const v = vars[raw];
      if (v !== undefined && v !== null && !(v instanceof SafeHtml)) throw new Error(`template value ${raw} must be SafeHtml`);
      return v ? v.value : "";
    }
    const v = vars[name!];
    return escapeHtml(v instanceof SafeHtml ? v.value : v);
  });
}

export interface LayoutInput {
  title: string;
  body: SafeHtml;
  /** Signed-in user: shows the account menu and a sign-out button. */
  user?: { email: string; csrf: string } | null;
  /** "narrow" for single forms (sign-in), "wide" for dashboard pages. */
  width?: "narrow" | "wide";
}

/** A full page in Pier's layout (sites/auth/layout.html). */
export async function renderPage(input: LayoutInput): Promise<string> {
  const layout = await loadTemplate("auth/layout.html");
  const nav = input.user
    ? html`<nav aria-label="Account"><a href="/dashboard">Dashboard</a><a href="/dashboard/buckets">Buckets</a><a href="/account/access">Access</a><a href="/account/security">Security</a>
<form method="post" action="/signout" class="inline"><input type="hidden" name="csrf" value="${input.user.csrf}"><button type="submit" class="link" title="Signed in as ${input.user.email}">Sign out</button></form></nav>`
    : html``;
  return renderTemplate(layout, { title: input.title, body: input.body, nav, width: input.width ?? "narrow" });
}

/** Render a page template from sites/ inside the layout. */
export async function renderView(template: string, vars: TemplateVars, layout: Omit<LayoutInput, "body">): Promise<string> {
  const body = new SafeHtml(renderTemplate(await loadTemplate(template), vars));
  return renderPage({ ...layout, body });
}

/** An alert box for an error or a notice (screen readers announce it). */
export function alertBox(message: string | null | undefined, kind: "error" | "ok" = "error"): SafeHtml {
  // Notices are looked up by a `?done=` code in plain objects: `?done=constructor` finds an
  // inherited function, which is no notice.
  if (typeof message !== "string" || !message) return html``;
  return kind === "error" ? html`<div class="alert error" role="alert">${message}</div>` : html`<div class="alert ok" role="status">${message}</div>`;
}
