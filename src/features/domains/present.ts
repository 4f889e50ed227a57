// The Custom domain resource as the spec shows it, shared by REST, MCP and the dashboard.
import { isIP } from "node:net";
import { domainToUnicode } from "node:url";
import type { CertificatePort, Deps } from "../../core/context";
import type { PublicationRow } from "../publish";
import { APEX_TYPES, requiredRecords } from "./dns-check";
import { parseHostname } from "./hostname";
import type { DomainRow } from "./records";

/**
 * ssl_status when Pier manages no certificate for the name: automatic HTTPS is off, or the
 * operator's --tls-cert covers it (Pier cannot tell whether that one is valid for browsers).
 */
export const SSL_NOT_MANAGED = "not_managed";

/** Pier's certificates for `hostname`, or null when it manages none for it (see SSL_NOT_MANAGED). */
export function managedCertificates(deps: Deps, hostname: string): CertificatePort | null {
  return deps.certificates && !deps.certificates.coveredByOperator(hostname) ? deps.certificates : null;
}

export function sslState(deps: Deps, row: DomainRow): { ssl_status: string; ssl_error: string | null } {
  if (row.verifiedAt === null) return { ssl_status: "pending_validation", ssl_error: null };
  const certificates = managedCertificates(deps, row.hostname);
  if (!certificates) return { ssl_status: SSL_NOT_MANAGED, ssl_error: null };
  const s = certificates.state(row.hostname);
  if (s.status === "issued") return { ssl_status: "active", ssl_error: null };
  if (s.status === "failed") return { ssl_status: "failed", ssl_error: s.reason ?? "The certificate could not be obtained." };
  return { ssl_status: "pending_validation", ssl_error: null };
}

export function domainPublicUrl(deps: Deps, hostname: string): string {
  return deps.urls.siteUrl(hostname);
}

export function presentDomain(deps: Deps, row: DomainRow) {
  const apex = parseHostname(row.hostname).apex;
  const checkOf = (purpose: string) => row.checks.find((c) => c.purpose === purpose);
  const records = requiredRecords(deps, { hostname: row.hostname, apex, ownershipToken: row.ownershipToken }).map((r) => {
    const check = checkOf(r.purpose);
    const base = {
      ...r,
      found: check?.found ?? false,
      seen: check?.seen ?? [],
      ...(check?.error ? { lookup_error: check.error } : {}),
    };
    if (r.purpose !== "traffic") return base;
    // A base URL on an IP address cannot be a CNAME target: point the name at the address.
    const family = isIP(r.value);
    if (family) return { ...base, type: family === 6 ? "AAAA" : "A" };
    if (!apex) return base;
    return { ...base, apex: true, supported_types: [...APEX_TYPES], address_values: check?.expected_addresses ?? [] };
  });
  const ssl = sslState(deps, row);
  return {
    id: row.id,
    bucket_id: row.bucketId,
    hostname: row.hostname,
    hostname_unicode: domainToUnicode(row.hostname) || row.hostname,
    status: row.status,
    ssl_status: ssl.ssl_status,
    ssl_error: ssl.ssl_error,
    public_url: row.status === "active" ? domainPublicUrl(deps, row.hostname) : null,
    apex,
    verified: row.verifiedAt !== null,
    required_dns_records: records,
    failure_reason: row.failureReason,
    check_attempts: row.checkAttempts,
    last_checked_at: row.lastCheckedAt,
    next_check_at: row.nextCheckAt,
    verified_at: row.verifiedAt,
    activated_at: row.activatedAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** The bucket's publication as a custom-domain answer shows it: its id and current public URL. */
export function presentDomainPublication(deps: Deps, pub: PublicationRow | null) {
  if (!pub) return null;
  const active = deps.customDomainOf(pub.bucketId);
  return {
    id: pub.id,
    status: pub.status,
    public_url: active ? domainPublicUrl(deps, active) : deps.urls.siteUrl(`${pub.publicSlug}.${deps.urls.sitesDomain}`),
    managed_url: deps.urls.siteUrl(`${pub.publicSlug}.${deps.urls.sitesDomain}`),
  };
}
