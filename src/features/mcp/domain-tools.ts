// MCP custom-domain tools. Each calls the same service as the matching REST route
// (src/features/domains/routes.ts) and answers with the same presenter.
import { t } from "elysia";
import { addDomain, getDomain, listDomains, presentDomain, presentDomainPublication, refreshDomain, removeDomain } from "../domains";
import type { McpTool } from "./tools";

const BucketId = t.String({ pattern: "^bkt_[a-z0-9]{1,40}$", description: "Bucket id (bkt_...), from bucket_list." });
const DomainId = t.String({ pattern: "^pcd_[a-z0-9]{1,40}$", description: "Custom domain id (pcd_...), from custom_domain_list or custom_domain_add." });
const OneDomain = t.Object({ bucket_id: BucketId, custom_domain_id: DomainId }, { additionalProperties: false });

const records =
  "The answer lists required_dns_records (type, name, value, purpose ownership or traffic, found): tell the user to create each one at their DNS provider. For an apex hostname (apex: true) the traffic record needs a provider with ALIAS, ANAME or CNAME flattening (supported_types), or A/AAAA records with address_values; otherwise suggest the www. name.";

export const domainTools: McpTool[] = [
  {
    name: "custom_domain_list",
    scope: "bucket_read",
    description:
      "The bucket's custom domains with their status (pending_validation, active, failed), ssl_status, DNS records and whether each was found, the site's current public_url, and limits (active_count, max_custom_domains). Same as GET /api/v1/buckets/:bucket_id/custom_domains. Needs bucket_read on the bucket.",
    inputSchema: t.Object({ bucket_id: BucketId }, { additionalProperties: false }),
    mutates: false,
    run: (deps, actor, a: { bucket_id: string }) => {
      const r = listDomains(deps, actor, a.bucket_id);
      return { custom_domains: r.domains.map((d) => presentDomain(deps, d)), publication: presentDomainPublication(deps, r.publication), limits: r.limits };
    },
  },
  {
    name: "custom_domain_add",
    scope: "bucket_admin",
    description: `Serve the bucket's published site on a hostname the user controls (same as POST /api/v1/buckets/:bucket_id/custom_domains). Publish the bucket first (CUSTOM_DOMAIN_PUBLISH_FIRST otherwise). ${records} The domain is pending_validation until both records are seen; Pier re-checks on its own, or call custom_domain_refresh once the user created them. Adding another hostname while one is active replaces it: the old one serves until the new one is active. Fails with CUSTOM_DOMAIN_LIMIT_REACHED past the plan's max_custom_domains. Needs bucket_admin on the bucket.`,
    inputSchema: t.Object(
      { bucket_id: BucketId, hostname: t.String({ maxLength: 1000, description: "e.g. www.example.com (Unicode names are accepted)." }) },
      { additionalProperties: false },
    ),
    mutates: true,
    run: (deps, actor, a: { bucket_id: string; hostname: string }) => {
      const r = addDomain(deps, actor, a.bucket_id, a.hostname);
      return { custom_domain: presentDomain(deps, r.domain), publication: presentDomainPublication(deps, r.publication), limits: r.limits, created: r.created };
    },
  },
  {
    name: "custom_domain_get",
    scope: "bucket_read",
    description: `One custom domain with its records' last check (same as GET /api/v1/buckets/:bucket_id/custom_domains/:id). ${records} Needs bucket_read on the bucket.`,
    inputSchema: OneDomain,
    mutates: false,
    run: (deps, actor, a: { bucket_id: string; custom_domain_id: string }) => ({
      custom_domain: presentDomain(deps, getDomain(deps, actor, a.bucket_id, a.custom_domain_id)),
    }),
  },
  {
    name: "custom_domain_refresh",
    scope: "bucket_admin",
    description:
      "Check a custom domain's DNS records (and certificate) now, after the user created them (same as POST /api/v1/buckets/:bucket_id/custom_domains/:id/refresh). status becomes active when everything is in place; otherwise each record's found says which one is missing. Needs bucket_admin on the bucket.",
    inputSchema: OneDomain,
    mutates: true,
    run: async (deps, actor, a: { bucket_id: string; custom_domain_id: string }) => ({
      custom_domain: presentDomain(deps, await refreshDomain(deps, actor, a.bucket_id, a.custom_domain_id)),
    }),
  },
  {
    name: "custom_domain_remove",
    scope: "bucket_admin",
    description:
      "Remove a custom domain (same as DELETE /api/v1/buckets/:bucket_id/custom_domains/:id): it stops serving at once and the managed <slug> address stays. Needs bucket_admin on the bucket.",
    inputSchema: OneDomain,
    mutates: true,
    run: (deps, actor, a: { bucket_id: string; custom_domain_id: string }) => {
      const row = removeDomain(deps, actor, a.bucket_id, a.custom_domain_id);
      return { custom_domain: { ...presentDomain(deps, row), status: "removed", public_url: null }, removed: true };
    },
  },
];
