// Custom domains: add, list, read, refresh and remove, and the check that moves a domain from
// pending_validation to active. Routes, MCP tools, the re-check job and the dashboard call these.
import { eq } from "drizzle-orm";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { newId, randomToken } from "../../core/ids";
import { customDomains, type DnsRecordCheck } from "../../db/schema";
import { afterCommit, transaction, type DbOrTx } from "../../db/tx";
import { entitlementsOf, getAccount, planHelp, planLimitError } from "../accounts";
import { assertVisibilityUnlocked, loadBucket, loadMutableBucket } from "../buckets";
import { notifyAccount } from "../notifications";
import { emitSiteChange, findPublication, type PublicationRow } from "../publish";
import { contest, contestedNote, contestWarning } from "./contest";
import { checkRecords } from "./dns-check";
import { managedCertificates } from "./present";
import { assertNotReserved, parseHostname } from "./hostname";
import { bucketDomains, domainById, domainsCounted, verifiedElsewhere, type DomainRow } from "./records";
import { GIVE_UP_AFTER_MS, givesUp, recheckDelay } from "./schedule";

export interface DomainLimits {
  active_count: number;
  max_custom_domains: number;
}

export function domainLimits(deps: Deps, accountId: string, db: DbOrTx = deps.db): DomainLimits {
  const account = getAccount(deps, accountId, db);
  return { active_count: domainsCounted(db, accountId), max_custom_domains: entitlementsOf(deps, account).max_custom_domains };
}

const isLive = (pub: PublicationRow | undefined): pub is PublicationRow => !!pub && (pub.status === "published" || pub.status === "publishing");

function livePublication(bucketId: string, db: DbOrTx): PublicationRow {
  const pub = findPublication(bucketId, "main", db);
  if (!isLive(pub))
    throw new ApiError("CUSTOM_DOMAIN_PUBLISH_FIRST", `Bucket ${bucketId} has no published site; publish it before adding a custom domain.`, {
      bucket_id: bucketId,
    });
  return pub;
}

function domainOfBucket(db: DbOrTx, bucketId: string, id: string): DomainRow {
  const row = domainById(db, id);
  if (!row || row.bucketId !== bucketId) throw new ApiError("CUSTOM_DOMAIN_NOT_FOUND", `Custom domain ${id} was not found on bucket ${bucketId}.`);
  return row;
}

export function listDomains(deps: Deps, actor: Actor, bucketId: string) {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_read");
  const rows = bucketDomains(deps.db, bucket.id).sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
  return { domains: rows, publication: findPublication(bucket.id, "main", deps.db) ?? null, limits: domainLimits(deps, bucket.accountId) };
}

export function getDomain(deps: Deps, actor: Actor, bucketId: string, id: string): DomainRow {
  const bucket = loadBucket(deps, actor, bucketId, "bucket_read");
  return domainOfBucket(deps.db, bucket.id, id);
}

export interface AddResult {
  domain: DomainRow;
  /** false when the bucket already had this hostname (the call is idempotent). */
  created: boolean;
  publication: PublicationRow;
  limits: DomainLimits;
}

/**
 * Add a hostname to a bucket's published site. A bucket serves one custom domain: a new hostname
 * while one is active waits as its replacement (the active one keeps serving until the new one
 * is active); a new hostname while another is still pending replaces the pending one at once.
 */
export function addDomain(deps: Deps, actor: Actor, bucketId: string, rawHostname: string): AddResult {
  const host = parseHostname(rawHostname);
  assertNotReserved(deps, host);
  const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_admin" });
  // A domain is another address of the site (and becomes its public_url): a visibility change (D283).
  assertVisibilityUnlocked(bucket);
  return transaction(deps.db, (tx) => {
    const publication = livePublication(bucket.id, tx);
    const existing = bucketDomains(tx, bucket.id);
    const same = existing.find((d) => d.hostname === host.ascii);
    if (same) return { domain: same, created: false, publication, limits: domainLimits(deps, bucket.accountId, tx) };
    // A name verified for another site may still be claimed: it moves here once its DNS proves
    // this claim and no longer the other site's, for a grace period (D319); until then it waits.
    const taken = verifiedElsewhere(tx, host.ascii, "") ? contestedNote(host.ascii) : null;
    const hasActive = existing.some((d) => d.status === "active");
    const superseded = existing.filter((d) => d.status !== "active");
    const account = getAccount(deps, bucket.accountId, tx);
    const max = entitlementsOf(deps, account).max_custom_domains;
    // A replacement takes the place of the bucket's active or pending domain: no new capacity.
    const used = domainsCounted(tx, account.id);
    if (!hasActive && superseded.length === 0 && used >= max) {
      const help = planHelp(deps, account, (e) => e.max_custom_domains > used);
      const err = planLimitError(
        max === 0 ? "The account's plan allows no custom domains." : `The account's plan allows ${max} custom domains and ${used} are in use.`,
        "max_custom_domains",
        help,
        { active_count: used, max_custom_domains: max },
      );
      throw new ApiError("CUSTOM_DOMAIN_LIMIT_REACHED", err.message, err.details);
    }
    for (const old of superseded) removeRow(deps, tx, old);
    const now = deps.clock.now();
    const domain = tx
      .insert(customDomains)
      .values({
        id: newId("pcd"),
        bucketId: bucket.id,
        accountId: bucket.accountId,
        hostname: host.ascii,
        status: "pending_validation",
        ownershipToken: randomToken(32),
        failureReason: taken,
        nextCheckAt: new Date(now.getTime() + recheckDelay(0)).toISOString(),
        createdAt: now.toISOString(),
        updatedAt: now.toISOString(),
      })
      .returning()
      .get();
    return { domain, created: true, publication, limits: domainLimits(deps, bucket.accountId, tx) };
  });
}

/**
 * Delete a row; the site server is told once the deletion commits, and the name's certificate is
 * forgotten unless the name stays in use (`keepCertificate`: it changed hands, and the certificate
 * is the instance's for that name, so the new site serves it at once instead of after a new order).
 */
function removeRow(deps: Deps, tx: DbOrTx, row: DomainRow, keepCertificate = false): void {
  tx.delete(customDomains).where(eq(customDomains.id, row.id)).run();
  afterCommit(tx, () => {
    if (row.verifiedAt && !keepCertificate) deps.certificates?.forget(row.hostname);
    if (row.status === "active") announce(deps, row.bucketId);
  });
}

/**
 * The bucket is being deleted and its domains go with it by cascade: their certificates and keys
 * are forgotten once that commits, as removing each domain would (D240).
 */
export function forgetBucketCertificates(deps: Deps, bucketId: string, tx: DbOrTx): void {
  const hosts = bucketDomains(tx, bucketId)
    .filter((d) => d.verifiedAt !== null)
    .map((d) => d.hostname);
  if (hosts.length) afterCommit(tx, () => hosts.forEach((h) => deps.certificates?.forget(h)));
}

/** The site server drops its cached host lookups for the bucket's site. */
function announce(deps: Deps, bucketId: string): void {
  const pub = findPublication(bucketId, "main", deps.db);
  if (pub) emitSiteChange(deps, { publicationId: pub.id });
}

/** Remove a domain: it stops serving at once and its certificate is forgotten. */
export function removeDomain(deps: Deps, actor: Actor, bucketId: string, id: string): DomainRow {
  const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_admin" });
  // Removing an active domain takes the site off that address, as an unpublish would (D283).
  assertVisibilityUnlocked(bucket);
  return transaction(deps.db, (tx) => {
    const row = domainOfBucket(tx, bucket.id, id);
    removeRow(deps, tx, row);
    return row;
  });
}

/** Check now (the user says the records are in place): also revives a domain that gave up. */
export async function refreshDomain(deps: Deps, actor: Actor, bucketId: string, id: string): Promise<DomainRow> {
  const bucket = loadMutableBucket(deps, actor, bucketId, { need: "bucket_admin" });
  domainOfBucket(deps.db, bucket.id, id);
  const row = await checkDomain(deps, id, "refresh");
  if (!row) throw new ApiError("CUSTOM_DOMAIN_NOT_FOUND", `Custom domain ${id} was removed while it was being checked.`);
  return row;
}

/**
 * Look at a domain's DNS records (unless already verified and this is a scheduled look) and move
 * it on: verified once both records are seen, active once verified and, with automatic HTTPS,
 * its certificate issued. Returns the row as it now stands, or null when it was removed meanwhile.
 */
export async function checkDomain(deps: Deps, id: string, mode: "refresh" | "scheduled"): Promise<DomainRow | null> {
  const before = domainById(deps.db, id);
  if (!before) return null;
  const lookDns = mode === "refresh" || before.verifiedAt === null;
  const names = { hostname: before.hostname, apex: parseHostname(before.hostname).apex, ownershipToken: before.ownershipToken };
  // DNS is asked outside any transaction: it takes network time (DbOrTx bodies are synchronous).
  const checks: DnsRecordCheck[] = lookDns ? await checkRecords(deps, names) : before.checks;
  const now = deps.clock.now();
  const verified = transaction(deps.db, (tx) => {
    const row = domainById(tx, id);
    if (!row) return null;
    let verifiedAt = row.verifiedAt;
    let failureReason: string | null = null;
    let contestedSince: string | null = null;
    if (verifiedAt === null) {
      const other = verifiedElsewhere(tx, row.hostname, row.id);
      if (!other) {
        if (checks.every((c) => c.found)) verifiedAt = now.toISOString();
      } else {
        const c = contest(row, other, checks, now);
        ({ since: contestedSince, reason: failureReason } = c);
        if (c.starts) notifyAccount(deps, contestWarning(other, now), tx);
        if (c.moves) {
          // The name's DNS has proved this claim, and not the other site's, for the grace period: it changed hands.
          handOver(deps, tx, other);
          verifiedAt = now.toISOString();
        }
      }
    }
    // Verified and waiting for its certificate: the ACME side keeps its own retry schedule, and a
    // look at the certificate state costs nothing, so it is looked at every minute.
    const awaitingCertificate = verifiedAt !== null;
    const attempts = mode === "refresh" || awaitingCertificate ? 0 : row.checkAttempts + 1;
    let status = row.status === "failed" && mode === "refresh" ? "pending_validation" : row.status;
    let nextCheckAt: string | null = status === "active" ? null : new Date(now.getTime() + recheckDelay(attempts)).toISOString();
    if (status === "pending_validation" && verifiedAt === null && mode === "scheduled" && givesUp(attempts)) {
      status = "failed";
      nextCheckAt = null;
      failureReason ??= `The DNS records were not found within ${GIVE_UP_AFTER_MS / 86_400_000} days of checks. Create them, then refresh the domain.`;
    } else if (status === "pending_validation" && row.verifiedAt !== null && mode === "scheduled" && waitedTooLong(row, now)) {
      // Verified, yet no certificate a week after its records were last seen (the verifying check
      // or a refresh): the name no longer reaches Pier, or its site is down. Looking every minute
      // would go on for ever; it stops like an unverified claim does (D282).
      status = "failed";
      nextCheckAt = null;
      failureReason = `No certificate could be obtained for ${row.hostname} within ${GIVE_UP_AFTER_MS / 86_400_000} days of its records being found. Check that its traffic record still points at Pier and its site is published, then refresh the domain.`;
    }
    tx.update(customDomains)
      .set({
        verifiedAt,
        status: status as DomainRow["status"],
        failureReason,
        checks,
        lastCheckedAt: lookDns ? now.toISOString() : row.lastCheckedAt,
        nextCheckAt,
        checkAttempts: attempts,
        contestedSince,
        updatedAt: now.toISOString(),
      })
      .where(eq(customDomains.id, id))
      .run();
    return { row, verified: verifiedAt !== null && status !== "active" };
  });
  if (!verified) return null;
  if (verified.verified && certificateReady(deps, verified.row.hostname)) activate(deps, id);
  return domainById(deps.db, id) ?? null;
}

/**
 * The site that held a name whose owner now proves another claim loses it: its row goes (the
 * site stops answering there; the certificate stays for the claim taking the name over) and its
 * account is told why.
 */
function handOver(deps: Deps, tx: DbOrTx, from: DomainRow): void {
  removeRow(deps, tx, from, true);
  notifyAccount(
    deps,
    {
      accountId: from.accountId,
      kind: "custom_domain_lost",
      subject: `${from.hostname} now serves another site`,
      body: `The DNS of ${from.hostname} no longer held this site's ownership record and held another site's claim instead, for the whole grace period after you were warned, so the name moved to that site. Your site answers at its managed address again; to get the name back, put this bucket's ownership record back in DNS and add the domain again.`,
      data: { hostname: from.hostname, bucket_id: from.bucketId, custom_domain_id: from.id },
    },
    tx,
  );
}

/** A verified domain's wait for its certificate, counted from the last look at its records. */
function waitedTooLong(row: DomainRow, now: Date): boolean {
  const since = Date.parse(row.lastCheckedAt ?? row.verifiedAt!);
  return now.getTime() - since >= GIVE_UP_AFTER_MS;
}

/**
 * Without automatic HTTPS, or for a name the operator's certificate covers (never ordered), there
 * is nothing to wait for (D240); otherwise the certificate must be issued.
 */
function certificateReady(deps: Deps, hostname: string): boolean {
  const certificates = managedCertificates(deps, hostname);
  if (!certificates) return true;
  certificates.request(hostname);
  return certificates.state(hostname).status === "issued";
}

/** The domain serves from now on; the bucket's previous active domain (if replaced) stops. */
function activate(deps: Deps, id: string): void {
  transaction(deps.db, (tx) => {
    const row = domainById(tx, id);
    if (!row || row.status === "active") return;
    const now = deps.clock.now().toISOString();
    for (const old of bucketDomains(tx, row.bucketId)) if (old.id !== row.id && old.status === "active") removeRow(deps, tx, old);
    tx.update(customDomains)
      .set({ status: "active", activatedAt: now, nextCheckAt: null, failureReason: null, updatedAt: now })
      .where(eq(customDomains.id, id))
      .run();
    afterCommit(tx, () => announce(deps, row.bucketId));
  });
}
