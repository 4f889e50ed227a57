// The compiled rules of one deploy, ready for requests. Static paths are one hash lookup;
// dynamic patterns are indexed by their first literal segment and matched segment by segment
// (prefix from the front, suffix from the back, the one splat takes the rest): linear in the
// path's segments, no backtracking, no regular expression built from a site's file. "First
// matching rule wins" holds across both kinds: candidates are merged in file order.
import type { CompiledRules, HeaderBlock, RedirectRule, Segment } from "./syntax";

interface Pattern {
  segments: Segment[];
  splatAt: number;
}

class PatternIndex {
  private readonly exact = new Map<string, number[]>();
  private readonly byFirst = new Map<string, number[]>();
  private readonly anyFirst: number[] = [];
  readonly patterns: Pattern[];

  constructor(list: Segment[][]) {
    this.patterns = list.map((segments) => ({ segments, splatAt: segments.findIndex((s) => typeof s === "object" && "splat" in s) }));
    this.patterns.forEach((p, i) => {
      const dynamic = p.segments.some((s) => typeof s !== "string");
      const first = p.segments[0];
      const bucket = !dynamic
        ? push(this.exact, p.segments.join("/"))
        : typeof first === "string" && p.splatAt !== 0
          ? push(this.byFirst, first)
          : this.anyFirst;
      bucket.push(i);
    });
  }

  /** Indexes of the patterns that may match `path`, in file order (each still to be matched). */
  candidates(path: string, segs: string[]): number[][] {
    const out: number[][] = [];
    const exact = this.exact.get(path);
    if (exact) out.push(exact);
    const first = segs.length > 0 ? this.byFirst.get(segs[0]!) : undefined;
    if (first) out.push(first);
    if (this.anyFirst.length > 0) out.push(this.anyFirst);
    return out;
  }
}

function push(map: Map<string, number[]>, key: string): number[] {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  return list;
}

/** Walks several ascending index lists in one ascending order (a k-way merge, k <= 3). */
function* ascending(lists: number[][]): Generator<number> {
  if (lists.length === 1) {
    yield* lists[0]!;
    return;
  }
  const pos = lists.map(() => 0);
  for (;;) {
    let best = -1;
    for (let l = 0; l < lists.length; l++) {
      const v = lists[l]![pos[l]!];
      if (v !== undefined && (best === -1 || v < lists[best]![pos[best]!]!)) best = l;
    }
    if (best === -1) return;
    yield lists[best]![pos[best]!++]!;
  }
}

/** Captures of `p` against the path segments, or null. */
function matchPattern(p: Pattern, segs: string[]): Record<string, string> | null {
  const captures: Record<string, string> = {};
  const pat = p.segments;
  const one = (s: Segment, value: string) => {
    if (typeof s === "string") return s === value;
    if ("name" in s) captures[s.name] = value;
    return true;
  };
  if (p.splatAt === -1) {
    if (pat.length !== segs.length) return null;
    for (let i = 0; i < pat.length; i++) if (!one(pat[i]!, segs[i]!)) return null;
    return captures;
  }
  const before = p.splatAt;
  const after = pat.length - p.splatAt - 1;
  if (segs.length < before + after) return null;
  for (let i = 0; i < before; i++) if (!one(pat[i]!, segs[i]!)) return null;
  for (let j = 0; j < after; j++) if (!one(pat[before + 1 + j]!, segs[segs.length - after + j]!)) return null;
  captures.splat = segs.slice(before, segs.length - after).join("/");
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
    for (const i of ascending(this.redirectIndex.candidates(path, segs))) {
      const rule = this.compiled.redirects[i]!;
      if (contentExists && !rule.force) continue;
      const captures = matchPattern(this.redirectIndex.patterns[i]!, segs);
      if (!captures) continue;
      if (rule.query.length > 0) {
        params ??= new URLSearchParams(search);
        let ok = true;
        for (const [key, want] of rule.query) {
          const got = params.get(key);
          if (got === null || (typeof want === "string" && want !== "" && got !== want)) {
            ok = false;
            break;
          }
          if (typeof want === "object") captures[want.name] = got;
        }
        if (!ok) continue;
      }
      return { rule, location: destination(rule, captures, search) };
    }
    return null;
  }

  /** The header changes of every block matching `path`, in file order: value, or null to detach. */
  headers(path: string): Map<string, string | null> | null {
    if (!this.hasHeaders) return null;
    const segs = path === "" ? [] : path.split("/");
    let out: Map<string, string | null> | null = null;
    for (const i of ascending(this.headerIndex.candidates(path, segs))) {
      if (!matchPattern(this.headerIndex.patterns[i]!, segs)) continue;
      const block: HeaderBlock = this.compiled.headers[i]!;
      out ??= new Map();
      for (const name of block.detach) out.set(name, null);
      for (const [name, value] of block.set) {
        const before = out.get(name);
        // Several blocks add up; the same header from two blocks is joined, like both anchors do
        // (cookies are separate lines: the site server sends one Set-Cookie per line).
        out.set(name, before ? `${before}${name === "set-cookie" ? "\n" : ", "}${value}` : value);
      }
    }
    return out;
  }
}

const DEST_PLACEHOLDER = /:([A-Za-z_][A-Za-z0-9_]*)/g;

function destination(rule: RedirectRule, captures: Record<string, string>, search: string): string {
  let to = rule.to.replace(DEST_PLACEHOLDER, (whole, name: string) => {
    const v = captures[name];
    if (v === undefined) return whole; // e.g. a port in an absolute URL
    return name === "splat" ? v.split("/").map(encodeURIComponent).join("/") : encodeURIComponent(v);
  });
  // An empty capture must not turn `/:splat/x` into `//x`, which browsers read as another host.
  if (to.startsWith("//") || to.startsWith("/\\")) to = `/${to.replace(/^[\/\\]+/, "")}`;
  // The visitor's query string follows a rule that neither reads nor sets one (Netlify does the same).
  if (search !== "" && rule.query.length === 0 && !to.includes("?")) to += search;
  return to;
}
