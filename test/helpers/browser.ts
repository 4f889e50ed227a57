// A small cookie-keeping HTTP client that behaves like a browser on Pier's pages: it keeps
// host-only cookies, posts urlencoded forms, and does not follow redirects (tests check them).
export interface PageResult {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
  setCookies: string[];
}

export class Browser {
  readonly cookies = new Map<string, string>();

  constructor(
    readonly base: string,
    readonly headers: Record<string, string> = {},
  ) {}

  /** The Cookie header this browser sends (for a request the helper does not make, such as a streamed download). */
  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  private async send(method: string, path: string, body?: URLSearchParams): Promise<PageResult> {
    const headers: Record<string, string> = { ...this.headers };
    const cookie = this.cookieHeader();
    if (cookie) headers.cookie = cookie;
    if (body) headers["content-type"] = "application/x-www-form-urlencoded";
    const res = await fetch(this.base + path, { method, headers, body, redirect: "manual" });
    const setCookies = res.headers.getSetCookie();
    for (const c of setCookies) {
      const [pair, ...attrs] = c.split(";");
      const i = pair!.indexOf("=");
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (expired || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: res.status, headers: res.headers, text: await res.text(), location: res.headers.get("location"), setCookies };
  }

  get(path: string): Promise<PageResult> {
    return this.send("GET", path);
  }

  /** A list value posts the field once per item, as ticked checkboxes sharing a name do. */
  post(path: string, form: Record<string, string | string[]>): Promise<PageResult> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(form)) for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
    return this.send("POST", path, body);
  }

  /** GET a page and post its form back with the page's CSRF token plus `form`. */
  async submit(pagePath: string, action: string, form: Record<string, string>): Promise<PageResult> {
    const page = await this.get(pagePath);
    return this.post(action, { csrf: csrfOf(page.text), ...form });
  }
}

export function csrfOf(html: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(html);
  if (!m) throw new Error("no CSRF field on the page");
  return m[1]!;
}

/** A dashboard form's token (`<csrf>~<nonce>~<account>`): each one posts once (a repeat is a double submit). */
export function formTokenOf(html: string): string {
  const token = [...html.matchAll(/name="csrf" value="([^"]+)"/g)].map((m) => m[1]!).find((v) => v.includes("~"));
  if (!token) throw new Error("no dashboard form token on the page");
  return token;
}

/** A browser signed in as this user through the sign-in form. */
export async function signedIn(base: string, user: { email: string; password: string }): Promise<Browser> {
  const b = new Browser(base);
  const r = await b.submit("/signin", "/signin", { email: user.email, password: user.password });
  if (r.status !== 303) throw new Error(`sign-in answered ${r.status}`);
  return b;
}

/** Unescape the few entities Pier's templates produce (for reading values back). */
export function unescapeHtml(s: string): string {
  return s.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n))).replace(/&amp;/g, "&");
}
