// Automatic certificates for one Pier: what is served, what is owed, and when to order again.
// Orders run as jobs ("acme.issue", one per host at a time); this class decides whether a host
// may have one (host policy), keeps the served certificates in memory for the HTTPS listener
// and SMTP, answers HTTP-01 challenges, and schedules renewals and retries. A serving worker
// (`--workers`) has one too, as a follower: it serves what the primary stored, re-reading the
// table whenever another process commits, and holds no challenge answers (it relays them).
import { createPrivateKey, X509Certificate } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { LRUCache } from "lru-cache";
import type { CertificatePort, CertificateState, Deps } from "../core/context";
import { publications } from "../db/schema";
import { hostAllowed } from "./host-policy";
import { IssueError } from "./issue-error";
import type { AcmeIssuer, IssuedCertificate } from "./issuer";
import { CertificateStore, type CertificateRow } from "./store";

export const ISSUE_JOB = "acme.issue";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Waits after 1, 2, 3, ... failed orders in a row: never a tight loop on a failing validation. */
export const RETRY_BACKOFF_MS = [5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 24 * HOUR];
/** Most hosts remembered as refused at once (each costs one indexed lookup per refresh). */
const REFUSED_MEMORY = 10_000;

export interface ServedCertificate {
  host: string;
  cert: string;
  key: string;
  notAfter: Date;
}

export interface ManagerOptions {
  /**
   * A serving worker's manager: it serves the certificates the primary stored and follows the
   * table (followStore); it never repairs a stored pair and never runs an order (a worker runs
   * no jobs). It may still record a first-seen host and queue its order, which the primary runs.
   */
  follower?: boolean;
}

export class CertificateManager implements CertificatePort {
  readonly store: CertificateStore;
  /** HTTP-01 answers by token, while their order is being validated (a handful at a time). */
  readonly challenges = new Map<string, string>();
  /** Loaded with the first order: acme-client and its dependencies are ~11,000 functions a serving worker never needs. */
  private issuer: Promise<AcmeIssuer> | null = null;
  private readonly served = new Map<string, ServedCertificate>();
  /** Row state by host (mirror of the table): the per-request check is one Map lookup. */
  private readonly known = new Map<string, CertificateRow>();
  /** Names the policy just refused: a flood of unknown names costs no repeated lookups, and the memory is capped. */
  private readonly refused = new LRUCache<string, true>({ max: REFUSED_MEMORY, ttl: 30_000 });
  private readonly listeners = new Set<() => void>();
  private notifyTimer: ReturnType<typeof setTimeout> | null = null;
  /** Names the operator's own certificate (--tls-cert) covers: it wins, so they are never ordered. */
  private operatorNames: string[] = [];
  /** The bound HTTPS port, for redirects (set once the listener runs). */
  httpsPort: number | null = null;
  readonly follower: boolean;
  /** Per host, the row version (issue time and expiry) whose files were last read: a follower reads a pair once per version. */
  private readonly loaded = new Map<string, string>();
  /** The table's row count and latest update at a follower's last full read. */
  private lastMark: { rows: number; latest: string | null } | null = null;

  constructor(
    private readonly deps: Deps,
    opts: ManagerOptions = {},
  ) {
    this.follower = opts.follower ?? false;
    this.store = new CertificateStore(deps.config.dataDir, deps.db);
    const now = deps.clock.now();
    for (const row of this.store.rows()) {
      const files = row.notAfter ? this.store.readFiles(row.host) : null;
      this.loaded.set(row.host, rowVersion(row));
      if (files && usablePair(files)) this.served.set(row.host, { host: row.host, ...files, notAfter: new Date(row.notAfter!) });
      else if (row.notAfter && !this.follower) {
        // Missing files (a data dir restored without them) or a damaged pair (which would make the
        // HTTPS listener refuse every certificate list it is in): not served, and since the row
        // must not claim "issued" for what is not served, the host is ordered again at the next sweep.
        deps.log.warn("stored certificate missing or unreadable; ordering it again", { host: row.host });
        this.known.set(row.host, this.store.update(row.host, { status: "pending", notAfter: null, nextAttemptAt: now.toISOString() }, now)!);
        continue;
      }
      this.known.set(row.host, row);
    }
  }

  /** The operator's certificate (PEM) wins for the names it covers. */
  setOperatorCertificate(certPem: string | null): void {
    this.operatorNames = certPem ? certificateNames(certPem) : [];
  }

  coveredByOperator(host: string): boolean {
    return this.operatorNames.some((n) => n === host || (n.startsWith("*.") && host.endsWith(n.slice(1)) && !host.slice(0, -n.length + 1).includes(".")));
  }

  state(host: string): CertificateState {
    const row = this.known.get(host);
    if (!row) return { status: "none", reason: null, expiresAt: null };
    return { status: row.status, reason: row.lastError, expiresAt: row.notAfter };
  }

  /** The certificate served for a host, if one was issued. */
  certificateFor(host: string): ServedCertificate | null {
    return this.served.get(host) ?? null;
  }

  /** Every issued certificate, for the HTTPS listener's SNI list. */
  servedCertificates(): ServedCertificate[] {
    return [...this.served.values()].filter((c) => !this.coveredByOperator(c.host));
  }

  /** Called (coalesced) after a certificate was issued, renewed or forgotten. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * A request arrived for this host (Bun gives no SNI callback, so the Host header of the first
   * request, over HTTP or over HTTPS with the fallback certificate, is where an on-demand order
   * starts). Known hosts cost one Map lookup; unknown ones one policy check, then 30 s of memory.
   */
  noteHost(host: string): void {
    if (this.known.has(host) || this.refused.has(host)) return;
    if (!this.request(host)) this.refused.set(host, true);
  }

  /** Start obtaining a certificate when the policy allows the host; returns whether it does. */
  request(host: string): boolean {
    if (this.coveredByOperator(host) || !hostAllowed(host, this.deps)) return false;
    this.refused.delete(host);
    const row = this.known.get(host) ?? this.store.ensureRow(host, this.deps.clock.now());
    this.known.set(host, row);
    if (row.status === "pending" || (row.nextAttemptAt !== null && row.nextAttemptAt <= this.deps.clock.now().toISOString())) this.schedule(host, null);
    return true;
  }

  forget(host: string): void {
    this.known.delete(host);
    this.store.deleteRow(host);
    this.store.deleteFiles(host);
    if (this.served.delete(host)) this.notify();
  }

  /** Queue the host's order (one queued or running order per host). */
  private schedule(host: string, at: Date | null): void {
    this.deps.jobs.enqueue(ISSUE_JOB, { host }, { uniqueKey: `acme:${host}`, maxAttempts: 1, runAt: at ?? undefined });
  }

  /** The job: order the host's certificate now, record the outcome, schedule the next attempt. */
  async runOrder(host: string): Promise<Record<string, unknown>> {
    const row = this.store.row(host);
    if (!row) return { skipped: "forgotten" };
    if (this.coveredByOperator(host) || !hostAllowed(host, this.deps)) {
      // Unpublished since (or the operator's certificate covers it now): nothing to keep.
      this.forget(host);
      return { skipped: "no longer served" };
    }
    let issued: IssuedCertificate;
    try {
      issued = await (await this.loadIssuer()).issue(host);
    } catch (e) {
      return this.recordFailure(row, e);
    }
    // The table may have dropped the host while the order ran (forget): then keep nothing.
    if (!this.store.row(host)) return { skipped: "forgotten" };
    this.store.writeFiles(host, { cert: issued.cert, key: issued.key });
    const now = this.deps.clock.now();
    const updated = this.store.update(
      host,
      {
        status: "issued",
        notAfter: issued.notAfter.toISOString(),
        lastError: null,
        attempts: 0,
        nextAttemptAt: renewalTime(issued, now).toISOString(),
        issuedAt: now.toISOString(),
      },
      now,
    )!;
    this.known.set(host, updated);
    this.served.set(host, { host, cert: issued.cert, key: issued.key, notAfter: issued.notAfter });
    this.deps.log.info("certificate issued", { host, notAfter: updated.notAfter });
    this.notify();
    return { issued: host, notAfter: updated.notAfter };
  }

  private loadIssuer(): Promise<AcmeIssuer> {
    this.issuer ??= import("./issuer").then(({ AcmeIssuer }) => new AcmeIssuer(this.deps.config, this.store, this.challenges));
    // A failed load is not kept: the next order tries again.
    return this.issuer.catch((e) => {
      this.issuer = null;
      throw e;
    });
  }

  private recordFailure(row: CertificateRow, e: unknown): Record<string, unknown> {
    const now = this.deps.clock.now();
    const attempts = row.attempts + 1;
    const err = e instanceof IssueError ? e : new IssueError((e as Error).message ?? String(e), null, false);
    let waitMs = RETRY_BACKOFF_MS[Math.min(attempts, RETRY_BACKOFF_MS.length) - 1]!;
    if (err.retryAfterMs !== null) waitMs = Math.max(waitMs, err.retryAfterMs);
    else if (err.rateLimited) waitMs = Math.max(waitMs, HOUR);
    const next = new Date(now.getTime() + waitMs);
    // A renewal that failed keeps the certificate it has (still valid): issued, with the reason.
    const stillValid = row.notAfter !== null && row.notAfter > now.toISOString() && this.served.has(row.host);
    const updated = this.store.update(
      row.host,
      { status: stillValid ? "issued" : "failed", lastError: err.message, attempts, nextAttemptAt: next.toISOString() },
      now,
    );
    if (updated) this.known.set(row.host, updated);
    this.deps.log.warn("certificate order failed", { host: row.host, attempts, retryAt: next.toISOString(), error: err.message });
    return { failed: row.host, error: err.message, retryAt: next.toISOString() };
  }

  /**
   * Periodic: queue every host whose renewal or retry time passed. The order job cannot queue its
   * own successor (one queued or running job per host), so next_attempt_at in the table is the
   * schedule and this sweep is what keeps it.
   */
  sweep(): Record<string, unknown> {
    const due = this.store.due(this.deps.clock.now());
    for (const row of due) {
      this.known.set(row.host, row);
      this.schedule(row.host, null);
    }
    return { queued: due.length, dropped: this.dropForgotten() };
  }

  /**
   * `pier admin certs forget` runs in another process and deletes the row and files; the
   * running server notices here and stops serving the certificate (within a sweep interval).
   */
  private dropForgotten(): number {
    const inTable = new Set(this.store.rows().map((r) => r.host));
    let dropped = 0;
    for (const host of [...this.known.keys()]) {
      if (inTable.has(host)) continue;
      this.known.delete(host);
      if (this.served.delete(host)) dropped++;
    }
    if (dropped) this.notify();
    return dropped;
  }

  /**
   * A follower's refresh, called when another process committed (SQLite's data_version): the
   * table is read again; a host whose issue time or expiry changed has its pair read from the
   * store (the primary writes the files before the row, so they are in place), a host gone from
   * the table stops being served, and the listener is swapped only when what is served changed.
   * A pair that does not load keeps the certificate served before it (still valid) and is not
   * read again until its row changes.
   */
  followStore(): void {
    // Most commits are not about certificates: one aggregate (no row reaches JavaScript) says
    // whether the table changed since the last full read. A write in the same millisecond as
    // that read would leave both figures as they were, so a table written in the last two
    // seconds is read in full anyway.
    const mark = this.store.changeMark();
    const recent = mark.latest !== null && Date.parse(mark.latest) > this.deps.clock.now().getTime() - 2000;
    if (!recent && mark.rows === this.lastMark?.rows && mark.latest === this.lastMark.latest) return;
    this.lastMark = mark;
    const rows = this.store.rows();
    const inTable = new Set<string>();
    let changed = false;
    for (const row of rows) {
      inTable.add(row.host);
      this.known.set(row.host, row);
      const version = rowVersion(row);
      if (this.loaded.get(row.host) === version) continue;
      this.loaded.set(row.host, version);
      if (!row.notAfter) {
        if (this.served.delete(row.host)) changed = true;
        continue;
      }
      const files = this.store.readFiles(row.host);
      if (files && usablePair(files)) {
        this.served.set(row.host, { host: row.host, ...files, notAfter: new Date(row.notAfter) });
        changed = true;
      } else this.deps.log.warn("stored certificate missing or unreadable; not served by this worker", { host: row.host });
    }
    for (const host of [...this.known.keys()]) {
      if (inTable.has(host)) continue;
      this.known.delete(host);
      this.loaded.delete(host);
      if (this.served.delete(host)) changed = true;
    }
    if (changed) this.notify();
  }

  /** At start: the API host and the MX host are wanted at once (nobody may have asked yet). */
  requestEagerHosts(hosts: string[]): void {
    for (const h of hosts) this.request(h);
  }

  /** A publication changed: a live site or preview gets its certificate now rather than on first visit. */
  publicationChanged(publicationId: string): void {
    const p = this.deps.db
      .select({ kind: publications.kind, slug: publications.publicSlug })
      .from(publications)
      .where(and(eq(publications.id, publicationId)))
      .get();
    if (!p) return;
    const host = `${p.kind === "preview" ? "preview-" : ""}${p.slug}.${this.deps.urls.sitesDomain}`;
    this.request(host);
  }

  private notify(): void {
    if (this.notifyTimer) return;
    // Coalesced: a burst of issued certificates swaps the HTTPS listener once.
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = null;
      for (const l of this.listeners) {
        try {
          l();
        } catch (e) {
          this.deps.log.error("certificate change listener failed", { error: e });
        }
      }
    }, 50);
  }

  close(): void {
    if (this.notifyTimer) clearTimeout(this.notifyTimer);
    this.notifyTimer = null;
    this.listeners.clear();
  }
}

/** Never sooner than this after an issuance: a very short-lived certificate (or a skewed clock) cannot make a tight loop. */
const MIN_RENEWAL_GAP_MS = 10 * MINUTE;

/** Renew at two thirds of the lifetime (Let's Encrypt's 90 days: at day 60). */
export function renewalTime(c: { notBefore: Date; notAfter: Date }, issuedAt: Date): Date {
  const life = c.notAfter.getTime() - c.notBefore.getTime();
  return new Date(Math.max(c.notBefore.getTime() + Math.floor((life * 2) / 3), issuedAt.getTime() + MIN_RENEWAL_GAP_MS));
}

/** DNS names a PEM certificate covers (its subjectAltName, lower-case). */
export function certificateNames(pem: string): string[] {
  try {
    const x = new X509Certificate(pem);
    return (x.subjectAltName ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.startsWith("DNS:"))
      .map((s) => s.slice(4).toLowerCase());
  } catch {
    return [];
  }
}

/** What a follower compares to know a host's certificate changed: a renewal has a new issue time and expiry. */
const rowVersion = (row: CertificateRow): string => (row.notAfter ? `${row.issuedAt}|${row.notAfter}` : "");

/** True when the certificate and key parse and belong together (what the TLS library will accept). */
function usablePair(files: { cert: string; key: string }): boolean {
  try {
    return new X509Certificate(files.cert).checkPrivateKey(createPrivateKey(files.key));
  } catch {
    return false;
  }
}
