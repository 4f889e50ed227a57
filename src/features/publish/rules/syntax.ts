// `_redirects` and `_headers` (the syntax Netlify and Cloudflare Pages share) -> a compiled rule
// set stored with the deploy (docs/site-rules.md). Parsed once when the deploy is built, never
// per request. A faulty line never fails the publish: it becomes a warning with its line number
// and is skipped. Patterns are kept as segment lists, never turned into regular expressions, so
// a request cannot make the matcher backtrack (rules/match.ts).

export const REDIRECTS_FILE = "_redirects";
export const HEADERS_FILE = "_headers";
/** Far past Cloudflare Pages' 2,000 static + 100 dynamic redirects and 100 header rules. */
export const MAX_REDIRECT_RULES = 10_000;
export const MAX_DYNAMIC_REDIRECT_RULES = 1_000;
export const MAX_HEADER_BLOCKS = 1_000;
export const MAX_HEADERS_PER_BLOCK = 50;
/** Bytes of each rules file read; a bigger file is cut there (with a warning). */
export const MAX_RULES_FILE_BYTES = 2 * 1024 * 1024;
const MAX_LINE_CHARS = 4_096;
const MAX_SEGMENTS = 64;
/** Warnings listed on the publication; the rest are counted. */
export const MAX_LISTED_WARNINGS = 100;

export const REDIRECT_STATUSES = new Set([200, 301, 302, 303, 307, 308, 404]);

/** A path pattern: literal segments, `:name` placeholders, at most one `*` splat segment. */
export type Segment = string | { name: string } | { splat: true };

export interface RedirectRule {
  line: number;
  from: Segment[];
  /** Query conditions: the parameter must be present; a value of `:name` captures it. */
  query: Array<[string, string | { name: string }]>;
  to: string;
  status: number;
  force: boolean;
}

export interface HeaderBlock {
  line: number;
  path: Segment[];
  set: Array<[string, string]>;
  detach: string[];
}

export interface RulesWarning {
  file: typeof REDIRECTS_FILE | typeof HEADERS_FILE;
  line: number;
  message: string;
}

export interface CompiledRules {
  redirects: RedirectRule[];
  headers: HeaderBlock[];
}

/** What the publication shows: counts and the warnings (the first MAX_LISTED_WARNINGS). */
export interface RulesSummary {
  redirects: number;
  headers: number;
  warnings: RulesWarning[];
  warnings_not_listed?: number;
}

/**
 * Headers a `_headers` file can neither set nor detach: Pier's protective and framing headers
 * and the gate's cookies. Set-Cookie is handled apart (allowed on custom domains only).
 */
export const PROTECTED_HEADERS = new Set([
  "x-content-type-options",
  "vary",
  "content-length",
  "content-encoding",
  "content-range",
  "accept-ranges",
  "transfer-encoding",
  "connection",
  "etag",
  "location",
]);

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const PLACEHOLDER = /^:[A-Za-z_][A-Za-z0-9_]*$/;
const DEST_PLACEHOLDER = /:([A-Za-z_][A-Za-z0-9_]*)/g;

export function compileRules(redirectsText: string | null, headersText: string | null): { rules: CompiledRules; summary: RulesSummary } {
  const warnings: RulesWarning[] = [];
  const redirects = redirectsText === null ? [] : parseRedirects(redirectsText, warnings);
  const headers = headersText === null ? [] : parseHeaders(headersText, warnings);
  warnings.sort((a, b) => (a.file === b.file ? a.line - b.line : a.file === REDIRECTS_FILE ? -1 : 1));
  const summary: RulesSummary = { redirects: redirects.length, headers: headers.length, warnings: warnings.slice(0, MAX_LISTED_WARNINGS) };
  if (warnings.length > MAX_LISTED_WARNINGS) summary.warnings_not_listed = warnings.length - MAX_LISTED_WARNINGS;
  return { rules: { redirects, headers }, summary };
}

/** Lines of a rules file, cut at MAX_RULES_FILE_BYTES (a warning names the first line dropped). */
function linesOf(text: string, file: RulesWarning["file"], warnings: RulesWarning[]): string[] {
  const lines = text.split(/\r?\n/);
  if (Buffer.byteLength(text) <= MAX_RULES_FILE_BYTES) return lines;
  let bytes = 0;
  for (let i = 0; i < lines.length; i++) {
    bytes += Buffer.byteLength(lines[i]!) + 1;
    if (bytes > MAX_RULES_FILE_BYTES) {
      warnings.push({ file, line: i + 1, message: `The file is larger than ${MAX_RULES_FILE_BYTES / 1024 / 1024} MiB: lines from ${i + 1} on are ignored.` });
      return lines.slice(0, i);
    }
  }
  return lines;
}

/** `/a/:id/*` -> segments; null when the pattern cannot be used. */
export function parsePattern(raw: string): { segments: Segment[] } | { error: string } {
  if (!raw.startsWith("/")) return { error: `The path "${clip(raw)}" must start with "/" (host patterns are not supported).` };
  const parts = raw === "/" ? [] : raw.replace(/\/$/, "").slice(1).split("/");
  if (parts.length > MAX_SEGMENTS) return { error: `The path has more than ${MAX_SEGMENTS} segments.` };
  const segments: Segment[] = [];
  const names = new Set<string>();
  for (const p of parts) {
    if (p === "") return { error: `The path "${clip(raw)}" has an empty segment ("//").` };
    if (p === "*") {
      if (segments.some((s) => typeof s === "object" && "splat" in s)) return { error: "Only one * splat is allowed per path." };
      segments.push({ splat: true });
    } else if (p.startsWith(":")) {
      if (!PLACEHOLDER.test(p)) return { error: `"${clip(p)}" is not a valid placeholder (letters, digits and _ after ":").` };
      if (p === ":splat") return { error: ':splat is the name of the * match; use "*" in the path.' };
      if (names.has(p)) return { error: `The placeholder ${p} appears twice.` };
      names.add(p);
      segments.push({ name: p.slice(1) });
    } else if (p.includes("*")) {
      return { error: `"${clip(p)}": a * splat must be a whole segment ("/docs/*").` };
    } else if (/[\s?#]/.test(p)) {
      return { error: `"${clip(p)}" holds a space, "?" or "#".` };
    } else {
      // Matched against the decoded request path: `/caf%C3%A9` and `/café` are the same rule.
      let literal = p;
      try {
        literal = decodeURIComponent(p);
      } catch {
        return { error: `"${clip(p)}" holds a malformed %-escape.` };
      }
      if (literal.includes("/")) return { error: `"${clip(p)}" encodes a "/".` };
      segments.push(literal);
    }
  }
  return { segments };
}

export const isDynamic = (segments: Segment[]) => segments.some((s) => typeof s !== "string");

function parseRedirects(text: string, warnings: RulesWarning[]): RedirectRule[] {
  const warn = (line: number, message: string) => warnings.push({ file: REDIRECTS_FILE, line, message });
  const rules: RedirectRule[] = [];
  let dynamic = 0;
  let overLimit = 0;
  let firstOver = 0;
  const lines = linesOf(text, REDIRECTS_FILE, warnings);
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const line = lines[i]!.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (line.length > MAX_LINE_CHARS) {
      warn(n, `The line is longer than ${MAX_LINE_CHARS} characters.`);
      continue;
    }
    const tokens = line.replace(/\s#.*$/, "").split(/\s+/);
    if (tokens.length < 2) {
      warn(n, "A rule needs a source path and a destination: `from to [status]`.");
      continue;
    }
    const from = parsePattern(tokens[0]!);
    if ("error" in from) {
      warn(n, from.error);
      continue;
    }
    // Between source and destination: query conditions (`id=:id`).
    let k = 1;
    const query: RedirectRule["query"] = [];
    let bad: string | null = null;
    while (k < tokens.length - 1 && tokens[k]!.includes("=") && !tokens[k]!.startsWith("/") && !/^https?:/i.test(tokens[k]!)) {
      const [key, ...rest] = tokens[k]!.split("=");
      const value = rest.join("=");
      if (!key) bad = `"${clip(tokens[k]!)}" is not a query condition (name=value).`;
      else if (value.startsWith(":")) {
        if (!PLACEHOLDER.test(value)) bad = `"${clip(value)}" is not a valid placeholder.`;
        else query.push([key, { name: value.slice(1) }]);
      } else query.push([key, value]);
      k++;
    }
    if (bad) {
      warn(n, bad);
      continue;
    }
    const to = tokens[k];
    if (to === undefined) {
      warn(n, "The rule has no destination.");
      continue;
    }
    const statusToken = tokens[k + 1];
    if (tokens.length > k + 2) {
      warn(n, `Unexpected text after the status: "${clip(tokens.slice(k + 2).join(" "))}" (conditions such as Country= or Role= are not supported).`);
      continue;
    }
    let status = 302;
    let force = false;
    if (statusToken !== undefined) {
      const m = /^(\d{3})(!?)$/.exec(statusToken);
      if (!m || !REDIRECT_STATUSES.has(Number(m[1]))) {
        warn(n, `Unknown status "${clip(statusToken)}": use 301, 302, 303, 307, 308 (redirects), 200 (rewrite) or 404, optionally with "!".`);
        continue;
      }
      status = Number(m[1]);
      force = m[2] === "!";
    }
    const absolute = /^https?:\/\//i.test(to);
    if (!absolute && !to.startsWith("/")) {
      warn(n, `The destination "${clip(to)}" must be a path starting with "/" or an http(s):// URL.`);
      continue;
    }
    if (to.startsWith("//")) {
      warn(n, `The destination "${clip(to)}" is a protocol-relative URL; write https:// for another origin.`);
      continue;
    }
    if (absolute && (status === 200 || status === 404)) {
      warn(n, `A ${status} rule serves a file of this site; it cannot fetch "${clip(to)}" from another origin (Pier never proxies).`);
      continue;
    }
    const known = new Set<string>(query.flatMap(([, v]) => (typeof v === "object" ? [v.name] : [])));
    for (const s of from.segments) if (typeof s === "object") known.add("name" in s ? s.name : "splat");
    const missingName = [...to.matchAll(DEST_PLACEHOLDER)].map((m) => m[1]!).find((name) => !known.has(name));
    if (missingName !== undefined) {
      warn(n, `The destination uses :${missingName}, which the source does not capture.`);
      continue;
    }
    const isDyn = isDynamic(from.segments);
    if (rules.length >= MAX_REDIRECT_RULES || (isDyn && dynamic >= MAX_DYNAMIC_REDIRECT_RULES)) {
      if (overLimit++ === 0) firstOver = n;
      continue;
    }
    if (isDyn) dynamic++;
    rules.push({ line: n, from: from.segments, query, to, status, force });
  }
  if (overLimit > 0)
    warn(
      firstOver,
      `${overLimit} rule(s) from this line on are over the limits (${MAX_REDIRECT_RULES} rules, of which ${MAX_DYNAMIC_REDIRECT_RULES} with placeholders or splats) and are ignored.`,
    );
  flagLoops(rules, warn);
  return rules;
}

/**
 * Browsers follow redirects: `/a /b 301` with `/b /a 301` sends visitors round in circles.
 * Static rules only (the ones whose chain is knowable); the rules are kept, the owner is told.
 */
function flagLoops(rules: RedirectRule[], warn: (line: number, message: string) => void): void {
  const next = new Map<string, RedirectRule>();
  const key = (segments: Segment[]) => `/${segments.join("/")}`;
  for (const r of rules) {
    if (r.status < 300 || r.status >= 400 || r.query.length > 0 || isDynamic(r.from)) continue;
    const k = key(r.from);
    if (!next.has(k)) next.set(k, r);
  }
  const flagged = new Set<RedirectRule>();
  for (const start of next.values()) {
    const seen = new Set<RedirectRule>([start]);
    let cur = start;
    for (let step = 0; step < 32; step++) {
      const target = cur.to.split(/[?#]/)[0]!.replace(/(.)\/$/, "$1");
      const r = next.get(target);
      if (!r) break;
      if (r === start) {
        if (!flagged.has(start)) warn(start.line, `This redirect is part of a loop (${[...seen].map((s) => key(s.from)).join(" -> ")} -> ${key(start.from)}).`);
        flagged.add(start);
        break;
      }
      if (seen.has(r)) break;
      seen.add(r);
      cur = r;
    }
  }
}

function parseHeaders(text: string, warnings: RulesWarning[]): HeaderBlock[] {
  const warn = (line: number, message: string) => warnings.push({ file: HEADERS_FILE, line, message });
  const blocks: HeaderBlock[] = [];
  let current: HeaderBlock | null = null;
  let skipping = false;
  let overLimit = 0;
  let firstOver = 0;
  const lines = linesOf(text, HEADERS_FILE, warnings);
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const raw = lines[i]!;
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (line.length > MAX_LINE_CHARS) {
      warn(n, `The line is longer than ${MAX_LINE_CHARS} characters.`);
      continue;
    }
    const indented = /^\s/.test(raw);
    if (!indented) {
      current = null;
      skipping = true;
      const p = parsePattern(line);
      if ("error" in p) {
        warn(n, p.error);
        continue;
      }
      if (blocks.length >= MAX_HEADER_BLOCKS) {
        if (overLimit++ === 0) firstOver = n;
        continue;
      }
      current = { line: n, path: p.segments, set: [], detach: [] };
      blocks.push(current);
      skipping = false;
      continue;
    }
    if (current === null) {
      if (!skipping) warn(n, "A header line needs a path line above it.");
      continue;
    }
    if (current.set.length + current.detach.length >= MAX_HEADERS_PER_BLOCK) {
      warn(n, `A block holds at most ${MAX_HEADERS_PER_BLOCK} header lines.`);
      continue;
    }
    if (line.startsWith("!")) {
      const name = line.slice(1).trim();
      if (!TOKEN.test(name)) {
        warn(n, `"${clip(name)}" is not a header name.`);
        continue;
      }
      if (PROTECTED_HEADERS.has(name.toLowerCase())) {
        warn(n, `${name} is set by Pier and cannot be detached.`);
        continue;
      }
      current.detach.push(name.toLowerCase());
      continue;
    }
    const colon = line.indexOf(":");
    const name = colon === -1 ? "" : line.slice(0, colon).trim();
    const value = colon === -1 ? "" : line.slice(colon + 1).trim();
    if (!TOKEN.test(name)) {
      warn(n, "A header line is `Name: value` (or `! Name` to detach a header).");
      continue;
    }
    if (/[^\t\u0020-\u007e\u0080-\u00ff]/.test(value)) {
      warn(n, `The value of ${name} holds control characters or characters outside Latin-1 (%-encode them).`);
      continue;
    }
    const lower = name.toLowerCase();
    if (PROTECTED_HEADERS.has(lower)) {
      warn(n, `${name} is set by Pier and cannot be replaced.`);
      continue;
    }
    if (lower === "set-cookie") warn(n, "Set-Cookie is only sent on custom domains (under the shared sites domain it could shadow other sites' cookies).");
    if (lower === "clear-site-data" && /"(cookies|\*)"/i.test(value))
      warn(n, 'Clear-Site-Data "cookies" (or "*") is only sent on custom domains (under the shared sites domain it would clear every site\'s cookies).');
    current.set.push([lower, value]);
  }
  if (overLimit > 0) warn(firstOver, `${overLimit} block(s) from this line on are over the limit of ${MAX_HEADER_BLOCKS} and are ignored.`);
  return blocks;
}

const clip = (s: string) => (s.length > 80 ? `${s.slice(0, 77)}...` : s);
