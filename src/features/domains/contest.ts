// A claim on a hostname another site verified (D319): the name moves to the claim only when its
// DNS holds the claim's ownership value and no longer the holder's, and still does a grace period
// after that was first seen. The holder is warned when it is first seen, so an owner who merely
// tidied the record away has days to put it back.
import type { DnsRecordCheck } from "../../db/schema";
import { holdsOwnership, ownershipValue } from "./dns-check";
import type { DomainRow } from "./records";

/** How long the DNS must keep proving the claim (and not the holder) before the name moves. */
export const TAKEOVER_GRACE_MS = 72 * 3_600_000;

export interface ContestOutcome {
  /** When the DNS was first seen proving the claim (null: it does not now). */
  since: string | null;
  /** The claim's `failure_reason` while it waits. */
  reason: string | null;
  /** First seen at this check: warn the holder. */
  starts: boolean;
  /** The grace period is over and the DNS still proves the claim: the name moves. */
  moves: boolean;
}

const whenOf = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** Whether the records looked at hold `domain`'s ownership value. */
export function ownershipSeen(checks: DnsRecordCheck[], domain: Pick<DomainRow, "ownershipToken">): boolean {
  const ownership = checks.find((c) => c.purpose === "ownership");
  return !!ownership && holdsOwnership(ownership.seen, domain.ownershipToken);
}

export const contestedNote = (hostname: string) =>
  `${hostname} is verified for another site. It moves to this one once its ownership record (the TXT record above) holds this domain's value and no longer the other site's, for ${TAKEOVER_GRACE_MS / 3_600_000} hours; then refresh.`;

/** Where a claim on a name `holder` verified stands after a look at its records. */
export function contest(claim: DomainRow, holder: DomainRow, checks: DnsRecordCheck[], now: Date): ContestOutcome {
  const proves = checks.every((c) => c.found) && !ownershipSeen(checks, holder);
  if (!proves) return { since: null, reason: contestedNote(claim.hostname), starts: false, moves: false };
  const since = claim.contestedSince ?? now.toISOString();
  const due = Date.parse(since) + TAKEOVER_GRACE_MS;
  if (claim.contestedSince !== null && now.getTime() >= due) return { since: null, reason: null, starts: false, moves: true };
  return {
    since,
    reason: `${claim.hostname} is verified for another site, but its DNS now holds this domain's ownership record and no longer that site's: it moves to this site at ${whenOf(due)} if that is still so then (the other site's owner has been told).`,
    starts: claim.contestedSince === null,
    moves: false,
  };
}

/** The warning to the holder's account when a contest starts. */
export function contestWarning(holder: DomainRow, now: Date) {
  return {
    accountId: holder.accountId,
    kind: "custom_domain_contested",
    subject: `${holder.hostname} may move to another site`,
    body: `The DNS of ${holder.hostname} no longer holds this site's ownership record and holds another site's claim instead. Unless the record is back by ${whenOf(now.getTime() + TAKEOVER_GRACE_MS)}, the name moves to that site. To keep it, create the TXT record again: _pier-challenge.${holder.hostname} with the value ${ownershipValue(holder.ownershipToken)}.`,
    data: {
      hostname: holder.hostname,
      bucket_id: holder.bucketId,
      custom_domain_id: holder.id,
      moves_at: new Date(now.getTime() + TAKEOVER_GRACE_MS).toISOString(),
    },
  };
}
