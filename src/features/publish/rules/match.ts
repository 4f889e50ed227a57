// The compiled rules of one deploy, ready for requests (docs/site-rules.md). Candidates come from
// the pattern index (rules/pattern.ts: static paths are one hash lookup, dynamic patterns are
// found by their first literal segment at its position); each candidate is matched on the path
// string itself, and strings are cut only for the rule that matches. "First matching rule wins"
// holds across static and dynamic rules: candidate lists are in file order and the lowest
// matching index wins.
import { matchAt, PatternIndex } from "./pattern";
import type { CompiledRules, HeaderBlock, RedirectRule } from "./syntax";

export interface RedirectMatch {
  readonly rule: RedirectRule;
  /** The destination with placeholders filled in (values %-encoded), query passed through. */
  readonly location: string;
}

/** Whether content exists at the path (Netlify's shadowing); asked only when a rule's answer depends on it. */
export type ContentCheck = boolean | (() => boolean);

/**
 * A destination cut once into literal text and capture slots. Slots below `pathSlots` are the
 * pattern's path captures; the ones above are the rule's query conditions, in order.
 */
interface Destination {
  parts: Array<string | { slot: number; splat: boolean }>;
  pathSlots: number;
  /** The answer when the destination has no placeholder and no query string is added to it. */
  fixed: RedirectMatch | null;
  /** The filled-in destination may start with `//` (its first characters come from a capture). */
  checkStart: boolean;
}

/** Remembered outcomes per deploy (paths asked without a query string), and the longest path remembered. */
export const OUTCOMES_MAX = 4_096;
const OUTCOME_PATH_MAX = 256;
const OUTCOME_LOCATION_MAX = 2_048;

/**
 * A path's outcome: the first matching rule (null: none), once asked the first forced one, and
 * the answers of the content check by its key (bit 2k: known, bit 2k + 1: content exists).
 */
interface Outcome {
  open: RedirectMatch | null;
  forced: RedirectMatch | null | undefined;
  content: number;
}
/** Keys of the content check that can be remembered (0 to 7). */
const CONTENT_KEYS = 8;

export class SiteRules {
  private readonly redirectIndex: PatternIndex;
  private readonly headerIndex: PatternIndex;
  readonly hasRedirects: boolean;
  readonly hasHeaders: boolean;
  private readonly hasForced: boolean;
  private readonly destinations: Destination[];
  /**
   * Outcomes of recently asked paths, when there are dynamic rules to spare a match (a static
   * path is one lookup either way). Bounded in entries, key and value length: a flood of
   * distinct paths empties it, never grows it.
   */
  private readonly outcomes: Map<string, Outcome> | null;
  /** What the site server's deploy cache weighs this by: the rules, and the outcomes it may keep. */
  readonly size: number;
  // Scratch reused by every lookup (a lookup runs to its end before the next one starts).
  private readonly lists: number[][] = [];
  private readonly offsets: Int32Array;

  /** `rememberOutcomes: false` turns the per-path memory off (the benchmark compares both). */
  constructor(
    private readonly compiled: CompiledRules,
    options: { rememberOutcomes?: boolean } = {},
  ) {
    this.redirectIndex = new PatternIndex(compiled.redirects.map((r) => r.from));
    this.headerIndex = new PatternIndex(compiled.headers.map((h) => h.path));
    this.destinations = compiled.redirects.map((r, i) => destinationOf(r, this.redirectIndex.patterns[i]!.names));
    this.offsets = new Int32Array(2 * Math.max(this.redirectIndex.maxSlots, this.headerIndex.maxSlots, 1));
    this.hasRedirects = compiled.redirects.length > 0;
    this.hasHeaders = compiled.headers.length > 0;
    this.hasForced = compiled.redirects.some((r) => r.force);
    this.outcomes = this.redirectIndex.hasDynamic && options.rememberOutcomes !== false ? new Map() : null;
    this.size = compiled.redirects.length + compiled.headers.length + (this.outcomes ? OUTCOMES_MAX : 0);
  }

  /**
   * The first rule matching the decoded site `path` ("" for the root, no leading slash) and the
   * query. When content exists at the path, only forced (`!`) rules apply (Netlify's shadowing);
   * `contentExists` is asked only when that changes the answer. `contentKey` (0-7) names what
   * else than the path its answer depends on (e.g. folder form, a site setting): with one, the
   * answer is remembered with the path's outcome, so the caller must hold one deploy's content.
   */
  redirect(path: string, search: string, contentExists: ContentCheck, contentKey = -1): RedirectMatch | null {
    if (!this.hasRedirects) return null;
    let outcome: Outcome | undefined;
    let open: RedirectMatch | null;
    const outcomes = this.outcomes;
    if (outcomes !== null && search === "" && path.length <= OUTCOME_PATH_MAX) {
      outcome = outcomes.get(path);
      if (outcome === undefined) {
        outcome = { open: this.first(path, "", false), forced: undefined, content: 0 };
        if (outcome.open === null || outcome.open.location.length <= OUTCOME_LOCATION_MAX) {
          if (outcomes.size >= OUTCOMES_MAX) outcomes.clear();
          // The key owns its characters: `path` is cut from the request URL and would keep it alive.
          outcomes.set(ownCopy(path), outcome);
        }
      }
      open = outcome.open;
    } else open = this.first(path, search, false);
    // No rule, or the first one is forced: content at the path changes nothing.
    if (open === null || open.rule.force) return open;
    if (!this.contentAt(outcome, contentExists, contentKey)) return open;
    if (!this.hasForced) return null;
    if (outcome === undefined) return this.first(path, search, true);
    if (outcome.forced === undefined) outcome.forced = this.first(path, "", true);
    return outcome.forced;
  }

  private contentAt(outcome: Outcome | undefined, contentExists: ContentCheck, key: number): boolean {
    if (typeof contentExists === "boolean") return contentExists;
    if (outcome === undefined || key < 0 || key >= CONTENT_KEYS) return contentExists();
    if ((outcome.content >> (2 * key)) & 1) return ((outcome.content >> (2 * key + 1)) & 1) === 1;
    const exists = contentExists();
    outcome.content |= (1 | (exists ? 2 : 0)) << (2 * key);
    return exists;
  }

  /** Outcomes remembered now (tests check the bound). */
  get outcomesHeld(): number {
    return this.outcomes?.size ?? 0;
  }

  /** The first rule (forced ones only when `forcedOnly`) matching the path and query. */
  private first(path: string, search: string, forcedOnly: boolean): RedirectMatch | null {
    const rules = this.compiled.redirects;
    const patterns = this.redirectIndex.patterns;
    const offsets = this.offsets;
    const lists = this.lists;
    const count = this.redirectIndex.candidates(path, lists);
    let params: URLSearchParams | undefined;
    let values: string[] | undefined;
    // Each list is ascending: a list is read only up to the best match found so far.
    let best = -1;
    let bestValues: string[] | undefined;
    // The pattern whose match last wrote the capture offsets.
    let touched = -1;
    for (let l = 0; l < count; l++) {
      const list = lists[l]!;
      for (let k = 0; k < list.length; k++) {
        const i = list[k]!;
        if (best !== -1 && i >= best) break;
        const rule = rules[i]!;
        if (forcedOnly && !rule.force) continue;
        const p = patterns[i]!;
        // A static candidate came from the exact table: the whole path already matched.
        if (!p.static) {
          touched = i;
          if (!matchAt(p, path, offsets)) continue;
        }
        if (rule.query.length > 0) {
          params ??= new URLSearchParams(search);
          values = queryMatch(rule, params);
          if (values === undefined) continue;
        }
        best = i;
        bestValues = values;
        break;
      }
    }
    lists.length = 0;
    if (best === -1) return null;
    const rule = rules[best]!;
    const d = this.destinations[best]!;
    if (d.fixed !== null && (search === "" || rule.query.length > 0)) return d.fixed;
    // A later candidate may have written over the winner's capture offsets: match it again.
    if (touched !== best && !patterns[best]!.static) matchAt(patterns[best]!, path, offsets);
    return { rule, location: fill(rule, d, path, offsets, bestValues, search) };
  }

  /** The header changes of every block matching `path`, in file order: value, or null to detach. */
  headers(path: string): Map<string, string | null> | null {
    if (!this.hasHeaders) return null;
    const lists = this.lists;
    const count = this.headerIndex.candidates(path, lists);
    const matched: number[] = [];
    for (let l = 0; l < count; l++)
      for (const i of lists[l]!) {
        const p = this.headerIndex.patterns[i]!;
        if (p.static || matchAt(p, path, this.offsets)) matched.push(i);
      }
    lists.length = 0;
    if (matched.length === 0) return null;
    if (count > 1) matched.sort((a, b) => a - b);
    const out = new Map<string, string | null>();
    for (const i of matched) {
      const block: HeaderBlock = this.compiled.headers[i]!;
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

/** The values the rule's query conditions capture (by condition index), or undefined when one fails. */
function queryMatch(rule: RedirectRule, params: URLSearchParams): string[] | undefined {
  const values: string[] = [];
  for (let q = 0; q < rule.query.length; q++) {
    const [key, want] = rule.query[q]!;
    const got = params.get(key);
    if (got === null || (typeof want === "string" && want !== "" && got !== want)) return undefined;
    values[q] = got;
  }
  return values;
}

const DEST_PLACEHOLDER = /:([A-Za-z_][A-Za-z0-9_]*)/g;
const ANY_PLACEHOLDER = /:[A-Za-z_]/;

/**
 * The destination's template, built once per deploy: each `:name` points at the slot that fills
 * it. A query condition's capture wins over a path capture of the same name (it is read last);
 * a name nothing captures stays as written (e.g. a port in an absolute URL).
 */
function destinationOf(rule: RedirectRule, names: string[]): Destination {
  const to = onTheWire(rule.to);
  // Most destinations have nothing to fill in (10,000 rules are built when a process loads the deploy).
  if (!ANY_PLACEHOLDER.test(to)) {
    const fixed = { rule, location: notProtocolRelative(to) };
    return { parts: [fixed.location], pathSlots: names.length, fixed, checkStart: false };
  }
  const slotOf = new Map<string, number>();
  names.forEach((name, slot) => slotOf.set(name, slot));
  rule.query.forEach(([, want], q) => {
    if (typeof want === "object") slotOf.set(want.name, names.length + q);
  });
  const parts: Destination["parts"] = [];
  let text = "";
  for (let last = 0, m: RegExpExecArray | null; ; ) {
    m = DEST_PLACEHOLDER.exec(to);
    const slot = m === null ? undefined : slotOf.get(m[1]!);
    if (m === null || slot !== undefined) {
      text += to.slice(last, m === null ? to.length : m.index);
      if (text !== "") parts.push(text);
      text = "";
      if (m === null) break;
      parts.push({ slot: slot!, splat: m[1] === "splat" });
    } else text += to.slice(last, m.index + m[0].length);
    last = m.index + m[0].length;
  }
  DEST_PLACEHOLDER.lastIndex = 0;
  const first = parts[0];
  const fixed = parts.every((part) => typeof part === "string") ? { rule, location: notProtocolRelative(to) } : null;
  return { parts, pathSlots: names.length, fixed, checkStart: typeof first !== "string" || !/^(\/[^\/\\]|https?:)/i.test(first) };
}

/**
 * The destination as a Location header can carry it: a Headers value refuses characters past
 * Latin-1 (the answer failed with a 500) and sends Latin-1 ones as raw bytes browsers misread, so
 * characters outside printable ASCII are %-encoded as UTF-8, as browsers do with a typed URL.
 * Done when the deploy is loaded, so deploys built before this also redirect. Existing %-escapes
 * and placeholders (ASCII) are left as written.
 */
const onTheWire = (to: string) =>
  to.replace(/[^\x21-\x7e]/gu, (c) => {
    try {
      return encodeURIComponent(c);
    } catch {
      return "%EF%BF%BD"; // a lone surrogate: U+FFFD, like TextDecoder
    }
  });

/** An empty capture must not turn `/:splat/x` into `//x`, which browsers read as another host. */
const notProtocolRelative = (to: string) => (to.startsWith("//") || to.startsWith("/\\") ? `/${to.replace(/^[\/\\]+/, "")}` : to);

function fill(rule: RedirectRule, d: Destination, path: string, offsets: Int32Array, queryValues: string[] | undefined, search: string): string {
  let to = "";
  if (d.fixed !== null) to = d.fixed.location;
  else {
    for (const part of d.parts) {
      if (typeof part === "string") {
        to += part;
        continue;
      }
      const slot = part.slot;
      const v = slot < d.pathSlots ? path.slice(offsets[2 * slot]!, offsets[2 * slot + 1]!) : queryValues![slot - d.pathSlots]!;
      // Values are %-encoded (encodeURIComponent writes "/" as %2F and "%" as %25, so putting
      // the splat's slashes back touches nothing else).
      to += part.splat ? encodeURIComponent(v).replaceAll("%2F", "/") : encodeURIComponent(v);
    }
    if (d.checkStart) to = notProtocolRelative(to);
  }
  // The visitor's query string follows a rule that neither reads nor sets one (Netlify does the same).
  if (search !== "" && rule.query.length === 0 && !to.includes("?")) to += search;
  return to;
}

/** A copy of `s` that shares no characters with the string it was cut from. */
const ownCopy = (s: string) => [s, ""].join("");
