// Where a sign-in (to Pier or to a site's gate) may send the browser afterwards: a path on the
// same host, nothing a browser could read as another host. Browsers treat `\` as `/` and drop
// tabs and newlines from URLs, so `/\evil.example` or `/<TAB>/evil.example` would become
// `//evil.example`: any backslash or control character is refused, not just a leading pair.
// Only printable ASCII is kept: the address a browser asked for reaches Pier percent-encoded,
// so anything else was typed into a form, and a character past U+00FF cannot even go into the
// Location header (building the redirect threw: a 500 after the right password).

/** `next` when it is a same-host path, else `fallback`. */
export function safeNext(next: unknown, fallback: string): string {
  if (typeof next !== "string" || next.length > 2000 || !next.startsWith("/") || next.startsWith("//")) return fallback;
  return /[^\u0021-\u007e]|\\/.test(next) ? fallback : next;
}
