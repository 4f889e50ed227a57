// Path patterns matched on the request path string itself: no split into an array, no
// substring per segment. A pattern is compiled once per deploy into the literals and capture
// slots before its splat (the head) and after it (the tail); a match walks the head from the
// front with indexOf("/"), the tail from the back with lastIndexOf("/"), compares literals in
// place (startsWith at an offset) and records only where each capture starts and ends. Strings
// are cut for the one rule that matches. Linear in the path, no backtracking, no regular
// expression built from a site's file.
import type { Segment } from "./syntax";

/** A literal segment, or the index of the capture slot a placeholder fills. */
type Part = string | number;

export interface CompiledPattern {
  head: Part[];
  tail: Part[];
  /** Capture slot of the `*` splat; -1 when the pattern has none. */
  splat: number;
  /** Slot -> capture name (`splat` for the splat). */
  names: string[];
  /** No placeholder and no splat: matched by one hash lookup of the whole path. */
  static: boolean;
}

export function compilePattern(segments: Segment[]): CompiledPattern {
  const head: Part[] = [];
  const tail: Part[] = [];
  const names: string[] = [];
  let splat = -1;
  for (const s of segments) {
    const into = splat === -1 ? head : tail;
    if (typeof s === "string") into.push(s);
    else if ("splat" in s) splat = names.push("splat") - 1;
    else into.push(names.push(s.name) - 1);
  }
  return { head, tail, splat, names, static: names.length === 0 };
}

/**
 * Does `path` (decoded, no leading slash, "" for the root) match `p`? On a match `at` holds,
 * for each capture slot s, its start at [2s] and end at [2s + 1] in `path`. Literals are
 * checked as the walk meets them, so a mismatch costs no allocation at all.
 */
export function matchAt(p: CompiledPattern, path: string, at: Int32Array): boolean {
  const len = path.length;
  const head = p.head;
  // `pos` is where the next segment starts; `more` says whether one is left (the root has none).
  let pos = 0;
  let more = len > 0;
  for (let i = 0; i < head.length; i++) {
    if (!more) return false;
    let end = path.indexOf("/", pos);
    if (end === -1) {
      end = len;
      more = false;
    }
    const part = head[i]!;
    if (typeof part === "string") {
      if (end - pos !== part.length || !path.startsWith(part, pos)) return false;
    } else {
      at[2 * part] = pos;
      at[2 * part + 1] = end;
    }
    pos = end + 1;
  }
  if (p.splat === -1) return !more;
  // The tail from the back, within what the head left ([pos, len) when `more`).
  const tail = p.tail;
  let end = len;
  for (let j = tail.length - 1; j >= 0; j--) {
    if (!more) return false;
    const slash = end > pos ? path.lastIndexOf("/", end - 1) : -1;
    let start: number;
    if (slash < pos) {
      start = pos;
      more = false;
    } else start = slash + 1;
    const part = tail[j]!;
    if (typeof part === "string") {
      if (end - start !== part.length || !path.startsWith(part, start)) return false;
    } else {
      at[2 * part] = start;
      at[2 * part + 1] = end;
    }
    end = start - 1;
  }
  // The splat takes what is left between head and tail, possibly nothing.
  at[2 * p.splat] = more ? pos : 0;
  at[2 * p.splat + 1] = more ? end : 0;
  return true;
}

/**
 * Candidate patterns for a path: static ones by one hash lookup of the whole path; dynamic ones
 * by their first literal segment before the splat, with its position (`/:lang/docs/*` is found
 * under "docs" at segment 1); only patterns with no literal before their splat (`/*`, `/:a/*`)
 * are tried on every path. Each list is in file order. A hash lookup of a string cut from the
 * request costs more than the rest of a match, so a lookup is skipped when no key has the
 * length of what would be looked up.
 */
export class PatternIndex {
  readonly patterns: CompiledPattern[];
  private readonly exact = new Map<string, number[]>();
  private readonly exactLengths: LengthSet;
  /** Dynamic patterns by position, then their literal segment at that position. */
  private readonly byLiteral: Map<string, number[]>[] = [];
  private readonly literalLengths: LengthSet[] = [];
  /** Positions that have indexed patterns, ascending (few: a literal is usually first or second). */
  private readonly positions: number[] = [];
  private readonly fallback: number[] = [];
  /** Capture slots of the widest pattern (the scratch offsets a match needs). */
  readonly maxSlots: number;
  readonly hasDynamic: boolean;

  constructor(list: Segment[][]) {
    this.patterns = list.map(compilePattern);
    this.exactLengths = new LengthSet();
    let maxSlots = 0;
    this.patterns.forEach((p, i) => {
      maxSlots = Math.max(maxSlots, p.names.length);
      if (p.static) {
        const key = (p.head as string[]).join("/");
        this.exactLengths.add(key.length);
        return push(this.exact, key).push(i);
      }
      const at = p.head.findIndex((s) => typeof s === "string");
      if (at === -1) return this.fallback.push(i);
      if (this.byLiteral[at] === undefined) {
        this.byLiteral[at] = new Map();
        this.literalLengths[at] = new LengthSet();
        this.positions.push(at);
      }
      const literal = p.head[at] as string;
      this.literalLengths[at]!.add(literal.length);
      push(this.byLiteral[at]!, literal).push(i);
    });
    this.positions.sort((a, b) => a - b);
    this.maxSlots = maxSlots;
    this.hasDynamic = this.patterns.some((p) => !p.static);
  }

  /** Fills `out` with the candidate lists of `path` and returns how many there are. */
  candidates(path: string, out: number[][]): number {
    let count = 0;
    if (this.exactLengths.has(path.length)) {
      const exact = this.exact.get(path);
      if (exact !== undefined) out[count++] = exact;
    }
    const positions = this.positions;
    if (positions.length > 0 && path !== "") {
      // Walk to each indexed position once, left to right.
      let segment = 0;
      let pos = 0;
      for (let k = 0; k < positions.length; k++) {
        const want = positions[k]!;
        while (segment < want) {
          const slash = path.indexOf("/", pos);
          if (slash === -1) return this.withFallback(out, count);
          pos = slash + 1;
          segment++;
        }
        let end = path.indexOf("/", pos);
        if (end === -1) end = path.length;
        if (!this.literalLengths[want]!.has(end - pos)) continue;
        const list = this.byLiteral[want]!.get(path.slice(pos, end));
        if (list !== undefined) out[count++] = list;
      }
    }
    return this.withFallback(out, count);
  }

  private withFallback(out: number[][], count: number): number {
    if (this.fallback.length > 0) out[count++] = this.fallback;
    return count;
  }
}

/** Which lengths some key has (lengths past the table share its last slot). */
class LengthSet {
  private readonly seen = new Uint8Array(LENGTHS_TRACKED + 1);
  add(length: number): void {
    this.seen[Math.min(length, LENGTHS_TRACKED)] = 1;
  }
  has(length: number): boolean {
    return this.seen[length < LENGTHS_TRACKED ? length : LENGTHS_TRACKED] === 1;
  }
}
const LENGTHS_TRACKED = 512;

function push(map: Map<string, number[]>, key: string): number[] {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  return list;
}
