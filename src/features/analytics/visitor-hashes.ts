// Visitor hashes: HMAC(day salt, address + user agent + publication), with the day's salt kept
// in the database for the day (a restart or a second serving process hashes alike) and forgotten
// after it. Recent answers are remembered, so a reader's next visits cost map lookups, not HMACs.
import { randomBytes } from "node:crypto";
import type { Deps } from "../../core/context";
import { dayKey } from "./counts";
import { pruneSalts } from "./rollups";

const DAY_MS = 86_400_000;

export class VisitorHashes {
  private readonly salts = new Map<string, string>();
  // Hashes by "day publication", then user agent, then IP: nested lookups reuse the strings'
  // cached hash codes (the user agent was just looked up for its bot name) instead of building
  // and hashing one long key per hit. Cleared when `max` are held, so it stays bounded.
  private readonly hashes = new Map<string, Map<string, Map<string, string>>>();
  private hashesHeld = 0;
  /** The last visit's day, publication and their map: consecutive visits mostly share them (no key built). */
  private lastDay = "";
  private lastPublicationId = "";
  private lastByAgent: Map<string, Map<string, string>> | null = null;

  constructor(
    private readonly deps: Deps,
    private readonly max: number,
  ) {}

  /**
   * HMAC(day salt, IP + user agent + publication): the same person on the same site on the same
   * day gives the same value; another day or site gives an unrelated one, and once the day's salt
   * is deleted nobody can recompute it from an IP. `day` is the local date of the site's account
   * (one salt per date, whatever the zone), so a day's uniques are those of its local day.
   */
  hash(day: string, publicationId: string, ip: string, userAgent: string): string {
    let byAgent = this.lastByAgent;
    if (byAgent === null || day !== this.lastDay || publicationId !== this.lastPublicationId) {
      const scope = `${day} ${publicationId}`;
      byAgent = this.hashes.get(scope) ?? null;
      if (byAgent === null) this.hashes.set(scope, (byAgent = new Map()));
      this.lastDay = day;
      this.lastPublicationId = publicationId;
      this.lastByAgent = byAgent;
    }
    let byIp = byAgent.get(userAgent);
    if (byIp === undefined) byAgent.set(userAgent, (byIp = new Map()));
    const known = byIp.get(ip);
    if (known !== undefined) return known;
    if (this.hashesHeld >= this.max) {
      this.hashes.clear();
      this.hashesHeld = 0;
      this.hashes.set(`${day} ${publicationId}`, (byAgent = new Map([[userAgent, (byIp = new Map())]])));
      this.lastByAgent = byAgent;
    }
    // Bun's native HMAC: node:crypto's createHmac is a stream object and cost ~20 µs a call here.
    const hash = new Bun.CryptoHasher("sha256", this.saltFor(day)).update(`${ip}\n${userAgent}\n${publicationId}`).digest("base64url").slice(0, 22);
    byIp.set(ip, hash);
    this.hashesHeld += 1;
    return hash;
  }

  private saltFor(day: string): string {
    let salt = this.salts.get(day);
    if (salt !== undefined) return salt;
    // Kept in the database for the day so a restart does not count everyone again.
    const read = () => (this.deps.sqlite.query("SELECT salt FROM analytics_salts WHERE day = ?").get(day) as { salt: string } | null)?.salt;
    salt = read();
    if (salt === undefined) {
      this.deps.sqlite.query("INSERT OR IGNORE INTO analytics_salts (day, salt) VALUES (?, ?)").run(day, randomBytes(32).toString("base64url"));
      // Another serving process may have stored the day's salt first: every process hashes with
      // the stored one, or a person reaching two processes counts twice that day.
      salt = read()!;
    }
    this.salts.set(day, salt);
    return salt;
  }

  /** After a flush: salts of days before yesterday are forgotten, here and in the database. */
  forgetOldSalts(): void {
    const yesterday = dayKey(this.deps.clock.now().getTime() - DAY_MS);
    for (const day of this.salts.keys()) {
      if (day >= yesterday) continue;
      this.salts.delete(day);
      this.hashes.clear(); // remembered hashes of a forgotten salt go with it
      this.hashesHeld = 0;
      this.lastByAgent = null;
    }
    pruneSalts(this.deps, yesterday);
  }
}
