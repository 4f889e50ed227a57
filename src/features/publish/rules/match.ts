// The compiled rules of one deploy, ready for requests. Static paths are one hash lookup;
// dynamic patterns are indexed by their first literal segment before the splat, with its position
// (`/:lang/docs/*` is found under "docs" at segment 1), and matched segment by segment (prefix
// from the front, suffix from the back, the one splat takes the rest): linear in the path's
// segments, no backtracking, no regular expression built from a site's file. Only patterns with no
// literal before their splat (`/*`, `/:a/*`) are tried on every path. "First matching rule wins"
// holds across all of them: candidates are merged in file order.
import type { CompiledRules, HeaderBlock, RedirectRule, Segment } from "./syntax";

interface Pattern {
  segments: Segment[];
  splatAt: number;
}

class PatternIndex {
  private readonly exact = new Map<string, number[]>();
  /** Dynamic patterns by position, then their literal segment at that position. */
  private readonly byLiteral: Map<string, number[]>[] = [];
  /** Positions that have indexed patterns (few: a literal is usually first or second). */
  private readonly positions: number[] = [];
  private readonly fallback: number[] = [];
  readonly patterns: Pattern[];

  constructor(list: Segment[][]) {
    this.patterns = list.map((segments) => ({ segments, splatAt: segments.findIndex((s) => typeof s === "object" && "splat" in s) }));
    this.patterns.forEach((p, i) => {
      const dynamic = p.segments.some((s) => typeof s !== "string");
      if (!dynamic) return push(this.exact, p.segments.join("/")).push(i);
      const end = p.splatAt === -1 ? p.segments.length : p.splatAt;
      const at = p.segments.findIndex((s, k) => k < end && typeof s === "string");
      if (at === -1) return this.fallback.push(i);
      if (this.byLiteral[at] === undefined) {
        this.byLiteral[at] = new Map();
        this.positions.push(at);
      }
      push(this.byLiteral[at]!, p.segments[at] as string).push(i);
    });
    this.positions.sort((a, b) => a - b);
  }

  /** Indexes of the patterns that may match `path`, in file order (each still to be matched). */
  candidates(path: string, segs: string[]): number[][] {
    const out: number[][] = [];
    const exact = this.exact.get(path);
    if (exact) out.push(exact);
    for (const at of this.positions) {
      if (at >= segs.length) break;
      const list = this.byLiteral[at]!.get(segs[at]!);
      if (list) out.push(list);
    }
    if (this.fallback.length > 0) out.push(this.fallback);
    return out;
  }
}

function push(map: Map<string, number[]>, key: string): number[] {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  return list;
}

/**
 * Calls `visit` with the indexes of several ascending lists in one ascending order (a k-way
 * merge; k is small: the exact list, one per indexed position, the fallback) until it returns true.
 */
function inOrder(lists: number[][], visit: (i: number) => boolean): void {
  if (lists.length === 1) {
    for (const i of lists[0]!) if (visit(i)) return;
    return;
  }
  const pos = lists.map(() => 0);
  for (;;) {
    let best = -1;
    let bestValue = 0;
    for (let l = 0; l < lists.length; l++) {
      const v = lists[l]![pos[l]!];
      if (v !== undefined && (best === -1 || v < bestValue)) {
        best = l;
        bestValue = v;
      }
    }
    if (best === -1) return;
    pos[best]! += 1;
    if (visit(bestValue)) return;
  }
}

/** Captures of `p` against the path segments, or null (literals are checked before anything is allocated). */
function matchPattern(p: Pattern, segs: string[]): Record<string, string> | null {
  const pat = p.segments;
  const n = segs.length;
  const before = p.splatAt === -1 ? pat.length : p.splatAt;
  const after = p.splatAt === -1 ? 0 : pat.length - p.splatAt - 1;
  if (p.splatAt === -1 ? n !== pat.length : n < before + after) return null;
  for (let i = 0; i < before; i++) {
    const s = pat[i]!;
    if (typeof s === "string" && s !== segs[i]) return null;
  }
  for (let j = 0; j < after; j++) {
    const s = pat[before + 1 + j]!;
    if (typeof s === "string" && s !== segs[n - after + j]) return null;
  }
  const captures: Record<string, string> = {};
  for (let i = 0; i < before; i++) {
    const s = pat[i]!;
    if (typeof s !== "string" && "name" in s) captures[s.name] = segs[i]!;
  }
  for (let j = 0; j < after; j++) {
    const s = pat[before + 1 + j]!;
    if (typeof s !== "string" && "name" in s) captures[s.name] = segs[n - after + j]!;
  }
  if (p.splatAt !== -1) captures.splat = segs.slice(before, n - after).join("/");
  return captures;
}

export interface RedirectMatch {
  rule: RedirectRule;
  /** The destination with placeholders filled in (values %-encoded), query passed through. */
  location: string;
}

export class SiteRules {
  private readonly redirectIndex: PatternIndex;
  private readonly headerIndex: PatternIndex;
  readonly hasRedirects: boolean;
  readonly hasHeaders: boolean;
  private readonly hasForced: boolean;
  /** Each redirect's destination cut into parts, on its first match. */
  private readonly destinations: DestinationPart[][] = [];
  /** Rules held (the site server's cache weighs deploys by it). */
  readonly size: number;

  constructor(private readonly compiled: CompiledRules) {
    this.redirectIndex = new PatternIndex(compiled.redirects.map((r) => r.from));
    this.headerIndex = new PatternIndex(compiled.headers.map((h) => h.path));
    this.hasRedirects = compiled.redirects.length > 0;
    this.hasHeaders = compiled.headers.length > 0;
    this.hasForced = compiled.redirects.some((r) => r.force);
    this.size = compiled.redirects.length + compiled.headers.length;
  }

  /**
   * The first rule matching the decoded site `path` ("" for the root, no leading slash) and the
   * query. When content exists at the path, only forced (`!`) rules apply (Netlify's shadowing).
   */
  redirect(path: string, search: string, contentExists: boolean): RedirectMatch | null {
    if (!this.hasRedirects || (contentExists && !this.hasForced)) return null;
    const segs = path === "" ? [] : path.split("/");
    let params: URLSearchParams | undefined;
    let found: RedirectMatch | null = null;
    inOrder(this.redirectIndex.candidates(path, segs), (i) => {
      const rule = this.compiled.redirects[i]!;
      if (contentExists && !rule.force) return false;
      const captures = matchPattern(this.redirectIndex.patterns[i]!, segs);
      if (!captures) return false;
      if (rule.query.length > 0) {
        params ??= new URLSearchParams(search);
        for (const [key, want] of rule.query) {
          const got = params.get(key);
          if (got === null || (typeof want === "string" && want !== "" && got !== want)) return false;
          if (typeof want === "object") captures[want.name] = got;
        }
      }
      const parts = (this.destinations[i] ??= destinationParts(rule.to));
      found = { rule, location: destination(rule, parts, captures, search) };
      return true;
    });
    return found;
  }

  /** The header changes of every block matching `path`, in file order: value, or null to detach. */
  headers(path: string): Map<string, string | null> | null {
    if (!this.hasHeaders) return null;
    const segs = path === "" ? [] : path.split("/");
    let out: Map<string, string | null> | null = null;
    inOrder(this.headerIndex.candidates(path, segs), (i) => {
      if (!matchPattern(this.headerIndex.patterns[i]!, segs)) return false;
      const block: HeaderBlock = this.compiled.headers[i]!;
      const changes = (out ??= new Map<string, string | null>());
      for (const name of block.detach) changes.set(name, null);
      for (const [name, value] of block.set) {
        const before = changes.get(name);
        // Several blocks add up; the same header from two blocks is joined, like both anchors do
        // (cookies are separate lines: the site server sends one Set-Cookie per line).
        changes.set(name, before ? `${before}${name === "set-cookie" ? "\n" : ", "}${value}` : value);
      }
      return false;
    });
    return out;
  }
}

const DEST_PLACEHOLDER = /:([A-Za-z_][A-Za-z0-9_]*)/g;

/** A destination cut once into literal text and placeholders (`whole` is put back when nothing was captured). */
type DestinationPart = string | { name: string; whole: string };

function destinationParts(to: string): DestinationPart[] {
  const parts: DestinationPart[] = [];
  let last = 0;
  for (const m of to.matchAll(DEST_PLACEHOLDER)) {
    if (m.index > last) parts.push(to.slice(last, m.index));
    parts.push({ name: m[1]!, whole: m[0] });
    last = m.index + m[0].length;
  }
  if (last < to.length) parts.push(to.slice(last));
  return parts;
}

function destination(rule: RedirectRule, parts: DestinationPart[], captures: Record<string, string>, search: string): string {
  let to = "";
  for (const part of parts) {
    if (typeof part === "string") {
      to += part;
      continue;
    }
    const v = captures[part.name];
    // No capture of that name: e.g. a port in an absolute URL.
    to += v === undefined ? part.whole : part.name === "splat" ? v.split("/").map(encodeURIComponent).join("/") : encodeURIComponent(v);
  }
  // An empty capture must not turn `/:splat/x` into `//x`, which browsers read as another host.
  if (to.startsWith("//") || to.startsWith("/\\")) to = `/${to.replace(/^[\/\\]+/, "")}`;
  // The visitor's query string follows a rule that neither reads nor sets one (Netlify does the same).
  if (search !== "" && rule.query.length === 0 && !to.includes("?")) to += search;
  return to;
}
