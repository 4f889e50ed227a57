// The in-memory side of analytics (GoatCounter's memstore): a hit that is not a person's visit
// (an asset, a bot's request) is added to its publication's counts for the hour at once, a few
// increments; a visit's raw facts go into bounded preallocated arrays, and folding them into
// counts (visitor hashes, countries, referrers, capped top lists) happens off the request, when
// the arrays fill or the flush timer fires. A flush writes the roll-ups in one transaction, so a
// crash loses at most the counts since the last flush and never a roll-up already written.
import { coarseNow, systemClock } from "../../core/clock";
import type { Deps } from "../../core/context";
import { cachedBotNames, readablePath, referrerHost, type HitKind } from "./classify";
import { HourCounts, hourKey } from "./counts";
import { countryLookup, type CountryOf } from "./geo";
import { writeRollups, writeVisitorHashes, type FlushReport } from "./rollups";
import { publicationSummary } from "./service";
import { VisitorHashes } from "./visitor-hashes";
import { UTC, ZoneDays } from "./zone";

export { CAPS, OTHER, VISITOR_HASHES_PER_HOUR, HourCounts, hourKey, dayKey } from "./counts";

/**
 * Raw visits held before they are folded. Small on purpose: every string a held visit refers to (its
 * path, user agent, address) is alive at the collector's next eden cycle, which must mark it and
 * move it to the old generation. Holding 10,000 made each eden cycle ~3x longer than with
 * analytics off (5 ms against 1.6) and the site's p99 ~50% worse; 1,000 brings both back to the
 * level of analytics off (bench/README.md, 2026-11-28). A fold of 1,000 takes well under a ms.
 */
const RAW_MAX = 1_000;
/** Visitor hashes written per transaction by the timer's flush, yielding to the site server between. */
const VISITOR_CHUNK = 1_000;
/** Header values are cut to this before the fold works on them: a 16 KiB user agent costs no more than a normal one. */
const FIELD_MAX = 512;
export const FLUSH_MS = 5_000;

const KIND_CODES: HitKind[] = ["page", "asset", "not_found"];
const DOWNLOAD_BIT = 4;

/**
 * A person's visits (page views, downloads, page paths not found) as parallel arrays of
 * primitives, allocated once: recording one stores a few references and numbers, no object per
 * request (less garbage for the collector under load).
 */
class RawVisits {
  n = 0;
  readonly at = new Float64Array(RAW_MAX);
  readonly flags = new Uint8Array(RAW_MAX);
  readonly publicationId: string[] = new Array(RAW_MAX).fill("");
  readonly label: string[] = new Array(RAW_MAX).fill("");
  readonly path: string[] = new Array(RAW_MAX).fill("");
  readonly referer: (string | null)[] = new Array(RAW_MAX).fill(null);
  readonly userAgent: string[] = new Array(RAW_MAX).fill("");
  readonly ip: string[] = new Array(RAW_MAX).fill("");
}

export class AnalyticsRecorder {
  private raw = new RawVisits();
  /** The counts the last tally went to: consecutive hits mostly share publication and hour (no key built). */
  private current: HourCounts | null = null;
  private readonly hours = new Map<string, HourCounts>();
  /**
   * A user agent's bot name (null: a person), remembered per user agent. The site server asks it
   * first: only a person's hit needs the client address (the visitor hash and the country), and
   * asking the runtime for the address is a system call.
   */
  private readonly botNames = cachedBotNames();
  readonly botOf = (userAgent: string): string | null => this.botNames(userAgent.length > FIELD_MAX ? userAgent.slice(0, FIELD_MAX) : userAgent);
  private readonly countryOf: CountryOf;
  // Traffic repeats (a page and its assets, a reader's next page): the fold remembers recent
  // answers instead of recomputing an HMAC, a URL parse or a tree lookup per hit. Cleared when
  // full, so each stays bounded.
  private readonly visitors: VisitorHashes;
  /** Referrer answers by site label, then Referer value (no key string built per hit). */
  private readonly referrers = new Map<string, Map<string, string | null | "own">>();
  private referrersHeld = 0;
  private readonly countries = new Map<string, string | null>();
  /**
   * Each publication's account time zone (daily rows are keyed by its local date). Emptied at
   * every flush, so a changed zone applies to what is counted from the next flush on, in every
   * serving process.
   */
  private readonly zones = new Map<string, ZoneDays>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private flushing = false;
  private stopped = false;
  /**
   * Epoch ms for a hit. With the system clock it is coarseNow() (a number read from a variable,
   * at most 100 ms behind: no clock call and no Date object per request); a test's fake clock is
   * asked as usual.
   */
  readonly now: () => number;

  constructor(private readonly deps: Deps) {
    this.countryOf = countryLookup(deps.config.geoipDb);
    this.visitors = new VisitorHashes(deps, REMEMBER_MAX);
    const clock = deps.clock;
    this.now = clock === systemClock ? coarseNow : () => clock.now().getTime();
  }

  /**
   * The hot path: the request's facts as they came (strings are not cut, parsed or hashed here).
   * `label` is the site host's first label, or a custom domain's whole hostname; `bot` is botOf(userAgent); `ip` is the client
   * address of a person's visit (isVisit) and "" for any other hit (a bot, an asset); `referer`
   * is read only for a person's page. Never throws into the site server.
   */
  hit(
    at: number,
    publicationId: string,
    label: string,
    path: string,
    kind: HitKind,
    download: boolean,
    referer: string | null,
    userAgent: string,
    bot: string | null,
    ip: string,
  ): void {
    // Most hits are a page's assets or a crawler's requests: a few increments, nothing held.
    if (ip === "" || bot !== null) return this.tally(at, publicationId, path, kind, download, bot);
    const r = this.raw;
    const i = r.n;
    r.at[i] = at;
    r.flags[i] = (kind === "page" ? 0 : kind === "asset" ? 1 : 2) | (download ? DOWNLOAD_BIT : 0);
    r.publicationId[i] = publicationId;
    // Only what the fold will read is held: every string kept here until the fold is work for
    // the garbage collector while the site server allocates its answers.
    r.label[i] = referer === null ? "" : label; // the site's own host tells navigation from referrers
    r.path[i] = kind === "asset" ? "" : path; // pages and 404s have top lists, downloads none
    r.referer[i] = referer;
    r.userAgent[i] = userAgent;
    r.ip[i] = ip;
    r.n = i + 1;
    if (r.n === RAW_MAX) this.fold();
  }

  /** A hit that is not a visit, counted at once: it needs no address, hash, referrer or country. */
  private tally(at: number, publicationId: string, path: string, kind: HitKind, download: boolean, bot: string | null): void {
    let c = this.current;
    if (c === null || c.publicationId !== publicationId || at < c.fromMs || at >= c.untilMs) c = this.current = this.countsFor(publicationId, at);
    countServed(c, at, kind, download, path.length > FIELD_MAX ? path.slice(0, FIELD_MAX) : path);
    if (bot !== null) {
      c.hitsBots += 1;
      c.count("bot", bot);
    }
  }

  /** A client event (outbound click or download) reported by the events script. */
  event(publicationId: string, type: "click" | "download", at: number): void {
    const c = this.countsFor(publicationId, at);
    if (type === "click") c.clicks += 1;
    else c.downloads += 1;
    c.touch(at);
  }

  /**
   * The publication resource's `analytics` field. A method here (not an import of this feature)
   * because publish sits below analytics: analytics reads publications, publish shows the figure.
   */
  summary(pub: { id: string; accountId: string }) {
    return publicationSummary(this.deps, pub);
  }

  /** Write what was counted since the last flush (one transaction). Tests call it directly. */
  flush(): FlushReport {
    this.fold();
    const batch = [...this.hours.values()].filter((c) => !c.empty);
    const report = batch.length ? writeRollups(this.deps, batch) : { rows: 0, publications: 0 };
    const current = hourKey(this.now());
    for (const [key, c] of this.hours) {
      if (c.hour < current) this.hours.delete(key);
      else c.reset();
    }
    this.visitors.forgetOldSalts();
    this.zones.clear();
    this.current = null; // it may be an hour just deleted
    return report;
  }

  /**
   * The timer's flush: visitor hashes first, a chunk per small transaction with a turn of the
   * event loop between (the site server answers in between), then the roll-ups in one
   * transaction. Hits recorded meanwhile join the same flush.
   */
  async flushInSteps(): Promise<FlushReport> {
    if (this.flushing) return { rows: 0, publications: 0 };
    this.flushing = true;
    try {
      this.fold();
      for (const c of [...this.hours.values()]) {
        while (c.visitors.size > 0) {
          const chunk: string[] = [];
          for (const hash of c.visitors) {
            chunk.push(hash);
            c.visitors.delete(hash);
            if (chunk.length === VISITOR_CHUNK) break;
          }
          c.visitorsWritten += writeVisitorHashes(this.deps, c.publicationId, c.day, chunk);
          await new Promise<void>((resolve) => setImmediate(resolve));
          // stop() flushed everything meanwhile and the database may be closing: nothing left to do.
          if (this.stopped) return { rows: 0, publications: 0 };
          this.fold();
        }
      }
      return this.flush();
    } finally {
      this.flushing = false;
    }
  }

  start(): void {
    if (this.timer) return;
    this.stopped = false;
    this.timer = setInterval(() => void this.flushQuietly(true), FLUSH_MS);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopped = true;
    void this.flushQuietly(false);
  }

  private async flushQuietly(inSteps: boolean): Promise<void> {
    try {
      if (inSteps) await this.flushInSteps();
      else this.flush();
    } catch (e) {
      // The batch is dropped (at most one interval of counts): retrying a failing write forever
      // would let memory grow with the traffic.
      this.deps.log.error("analytics flush failed", { error: (e as Error).message });
      for (const c of this.hours.values()) c.dropBatch();
    }
  }

  private countsFor(publicationId: string, at: number): HourCounts {
    const hour = hourKey(at);
    const zone = this.zoneDaysOf(publicationId);
    const { day, fromMs, untilMs } = zone.segment(at);
    const key = `${publicationId} ${hour} ${day}`;
    let c = this.hours.get(key);
    if (!c) {
      c = new HourCounts(publicationId, hour, day);
      this.hours.set(key, c);
    }
    c.fromMs = fromMs;
    c.untilMs = untilMs;
    return c;
  }

  private zoneDaysOf(publicationId: string): ZoneDays {
    let z = this.zones.get(publicationId);
    if (z === undefined) {
      const row = this.deps.sqlite
        .query("SELECT a.time_zone AS zone FROM publications p JOIN accounts a ON a.id = p.account_id WHERE p.id = ?")
        .get(publicationId) as { zone: string } | null;
      z = zoneDays(row?.zone ?? UTC);
      this.zones.set(publicationId, z);
    }
    return z;
  }

  /** Raw visits -> hour counts. Countries, referrers and hashes are computed here, not per request. */
  private fold(): void {
    const r = this.raw;
    const n = r.n;
    if (n === 0) return;
    r.n = 0;
    const sitesDomain = this.deps.urls.sitesDomain;
    let c: HourCounts | null = null;
    for (let i = 0; i < n; i++) {
      const at = r.at[i]!;
      const publicationId = r.publicationId[i]!;
      // Consecutive hits mostly share publication and hour: skip the map lookup then.
      if (c === null || c.publicationId !== publicationId || at < c.fromMs || at >= c.untilMs) c = this.countsFor(publicationId, at);
      const flags = r.flags[i]!;
      const kind = KIND_CODES[flags & 3]!;
      let path = r.path[i]!;
      if (path.length > FIELD_MAX) path = path.slice(0, FIELD_MAX);
      let userAgent = r.userAgent[i]!;
      if (userAgent.length > FIELD_MAX) userAgent = userAgent.slice(0, FIELD_MAX);
      countServed(c, at, kind, (flags & DOWNLOAD_BIT) !== 0, path);
      const ip = r.ip[i]!;
      c.addVisitor(this.visitors.hash(c.day, publicationId, ip, userAgent));
      if (kind !== "page") continue;
      // The top lists describe people reading pages: bots have their own list, assets follow pages.
      c.count("path", readablePath(path));
      let referer = r.referer[i]!;
      if (referer !== null && referer.length > FIELD_MAX * 4) referer = referer.slice(0, FIELD_MAX * 4);
      const ref = referer === null ? null : this.referrerOf(referer, r.label[i]!, sitesDomain);
      if (ref !== "own") c.count("referrer", ref ?? "direct");
      const country = remember(this.countries, ip, this.countryOf);
      if (country !== null) c.count("country", country);
    }
  }

  private referrerOf(referer: string, label: string, sitesDomain: string): string | null | "own" {
    let bySite = this.referrers.get(label);
    const known = bySite?.get(referer);
    if (known !== undefined) return known;
    if (this.referrersHeld >= REMEMBER_MAX) {
      this.referrers.clear();
      this.referrersHeld = 0;
      bySite = undefined;
    }
    if (bySite === undefined) this.referrers.set(label, (bySite = new Map()));
    // A label has no dot; a custom domain's hostname always has one and is the host itself.
    const answer = referrerHost(referer, label.includes(".") ? label : `${label}.${sitesDomain}`);
    bySite.set(referer, answer);
    this.referrersHeld += 1;
    return answer;
  }
}

/** What every counted hit adds, visit or not: its time, the totals, a missing path's top list. */
function countServed(c: HourCounts, at: number, kind: HitKind, download: boolean, path: string): void {
  c.touch(at);
  c.hits += 1;
  if (kind === "asset") c.hitsAssets += 1;
  else if (kind === "not_found") {
    c.hitsNotFound += 1;
    c.count("not_found", readablePath(path));
  }
  if (download) c.downloads += 1;
}

/** One ZoneDays per zone name, shared by the publications of every account in it. */
const zoneDaysByName = new Map<string, ZoneDays>();
function zoneDays(zone: string): ZoneDays {
  let z = zoneDaysByName.get(zone);
  if (z === undefined) zoneDaysByName.set(zone, (z = new ZoneDays(zone)));
  return z;
}

const REMEMBER_MAX = 20_000;
function remember<V>(cache: Map<string, V>, key: string, compute: (key: string) => V): V {
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  if (cache.size >= REMEMBER_MAX) cache.clear();
  const value = compute(key);
  cache.set(key, value);
  return value;
}
