// Request schemas of the custom-domain routes.
import { t } from "elysia";

const AccountId = t.Optional(t.String({ maxLength: 64, description: "Act on another account the credential is a member of." }));

// The bucket is :id as on every /api/v1/buckets/:id/... route (one router parameter name per position).
export const DomainsParams = t.Object({ id: t.String({ maxLength: 64 }) });
export const DomainParams = t.Object({ id: t.String({ maxLength: 64 }), domain_id: t.String({ maxLength: 64 }) });
export const AddDomainBody = t.Object(
  {
    hostname: t.String({
      maxLength: 1000,
      description: "e.g. www.example.com; upper case and a trailing dot are normalized, Unicode names are stored as punycode.",
    }),
    account_id: AccountId,
  },
  { additionalProperties: false },
);
export const EmptyBody = t.Object({ account_id: AccountId }, { additionalProperties: false });
