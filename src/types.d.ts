declare module "*.sql" {
  const text: string;
  export default text;
}
declare module "*.md" {
  const text: string;
  export default text;
}
declare module "*.mmdb" {
  const path: string;
  export default path;
}
declare module "*/altcha.min.js" {
  const path: string;
  export default path;
}
declare module "mailauth/lib/tools" {
  /** mailauth's header block parser (what its DKIM verifier reads fields with); `key` is the lower-cased field name. */
  export function parseHeaders(buf: Buffer): { parsed: { key: string | null; casedKey?: string; line: Buffer }[]; original: Buffer };
}
