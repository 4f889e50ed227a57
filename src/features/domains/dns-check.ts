// The two DNS records a custom domain needs, and checking them through a real resolver
// (--dns-resolver, default the system's). Ownership: a TXT record holding the domain's own
// token, so a name someone else verified cannot be claimed by copying records. Traffic: the
// name points at Pier: a CNAME for subdomains; for apex names, which cannot hold a CNAME, an
// ALIAS/ANAME/flattened CNAME or A/AAAA records, seen as addresses equal to the Pier host's.
import { Resolver } from "node:dns/promises";
import { isIP } from "node:net";
import type { Deps } from "../../core/context";
import type { DnsRecordCheck } from "../../db/schema";
import { apiHostname } from "./hostname";

export const OWNERSHIP_LABEL = "_pier-challenge";
export const OWNERSHIP_PREFIX = "pier-domain-verification=";
export const APEX_TYPES = ["ALIAS", "ANAME", "CNAME flattening", "A", "AAAA"] as const;

export interface DomainNames {
  hostname: string;
  apex: boolean;
  ownershipToken: string;
}

export interface RequiredRecord {
  type: "TXT" | "CNAME";
  name: string;
  value: string;
  purpose: "ownership" | "traffic";
}

export const ownershipName = (hostname: string) => `${OWNERSHIP_LABEL}.${hostname}`;
export const ownershipValue = (token: string) => `${OWNERSHIP_PREFIX}${token}`;
/** Whether TXT values seen at the ownership name hold this domain row's token. */
export const holdsOwnership = (values: string[], token: string) => values.includes(ownershipValue(token));

/** The host a traffic record points at: the name Pier answers on (the base URL's host). */
export const trafficTarget = (deps: Deps) => apiHostname(deps);

export function requiredRecords(deps: Deps, d: DomainNames): RequiredRecord[] {
  return [
    { type: "TXT", name: ownershipName(d.hostname), value: ownershipValue(d.ownershipToken), purpose: "ownership" },
    { type: "CNAME", name: d.hostname, value: trafficTarget(deps), purpose: "traffic" },
  ];
}

const NOT_THERE = new Set(["ENOTFOUND", "ENODATA", "NOTFOUND", "NODATA", "ENONAME"]);
const canonical = (name: string) => name.toLowerCase().replace(/\.$/, "");

type Lookup = { values: string[]; error: string | null };

async function ask(run: () => Promise<string[]>): Promise<Lookup> {
  try {
    return { values: await run(), error: null };
  } catch (e) {
    const code = (e as { code?: string }).code ?? "";
    if (NOT_THERE.has(code)) return { values: [], error: null };
    return { values: [], error: `DNS lookup failed (${code || (e as Error).message})` };
  }
}

function resolverFor(deps: Deps): Resolver {
  // Bounded: a check runs in a request (refresh) and must answer in seconds, not minutes.
  const r = new Resolver({ timeout: 1_500, tries: 2 });
  if (deps.config.dnsResolver) r.setServers([deps.config.dnsResolver]);
  return r;
}

/** The addresses the Pier host resolves to (or is): what an apex's A/AAAA records must equal. */
async function pierAddresses(r: Resolver, target: string): Promise<string[]> {
  if (isIP(target)) return [target];
  const [v4, v6] = await Promise.all([ask(() => r.resolve4(target)), ask(() => r.resolve6(target))]);
  return [...v4.values, ...v6.values];
}

/** Look up both records now. Never throws: a resolver failure is a not-found with its reason. */
export async function checkRecords(deps: Deps, d: DomainNames): Promise<DnsRecordCheck[]> {
  const r = resolverFor(deps);
  const target = canonical(trafficTarget(deps));
  const byAddress = d.apex || isIP(target) !== 0;
  // All questions at once: a slow or silent resolver then costs one timeout, not one per question.
  const none = Promise.resolve({ values: [], error: null } as Lookup);
  const [txt, cname, v4, v6, expected] = await Promise.all([
    ask(async () => (await r.resolveTxt(ownershipName(d.hostname))).map((chunks) => chunks.join(""))),
    ask(async () => (await r.resolveCname(d.hostname)).map(canonical)),
    byAddress ? ask(() => r.resolve4(d.hostname)) : none,
    byAddress ? ask(() => r.resolve6(d.hostname)) : none,
    byAddress ? pierAddresses(r, target) : Promise.resolve([]),
  ]);
  const ownership: DnsRecordCheck = {
    purpose: "ownership",
    found: holdsOwnership(txt.values, d.ownershipToken),
    seen: txt.values,
    error: txt.error,
  };
  let traffic: DnsRecordCheck = { purpose: "traffic", found: cname.values.includes(target), seen: cname.values, error: cname.error };
  if (!traffic.found && byAddress) {
    // Flattened CNAMEs and ALIAS records answer with the target's addresses, as A/AAAA records do.
    const seen = [...v4.values, ...v6.values];
    const found = seen.length > 0 && expected.length > 0 && seen.every((a) => expected.includes(a));
    traffic = { purpose: "traffic", found, seen: [...cname.values, ...seen], error: v4.error ?? cname.error, expected_addresses: expected };
  }
  return [ownership, traffic];
}
