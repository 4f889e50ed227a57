// Request schemas of the publishing routes.
import { Type } from "@sinclair/typebox";
import { t, type Static } from "elysia";
import { pageQuery } from "../../http/paging";

const AccountId = t.Optional(t.String({ maxLength: 64, description: "Act on another account the credential is a member of." }));
const AccessMode = t.Union([t.Literal("public"), t.Literal("password"), t.Literal("require_email")]);
const SiteMode = t.Union([t.Literal("static"), t.Literal("spa")], { description: "spa answers deep links with the index page." });

/** Fields shared by publish, preview and publish sessions. */
export const publishFields = {
  site_mode: t.Optional(SiteMode),
  site_type: t.Optional(t.Literal("website", { description: "Compatibility; prefer site_mode." })),
  access_mode: t.Optional(AccessMode),
  password: t.Optional(t.String({ minLength: 6, maxLength: 200, description: "password mode; omitted: kept, or generated the first time." })),
  regenerate_password: t.Optional(t.Boolean()),
  expires_at: t.Optional(t.Union([t.String({ format: "date-time" }), t.Null()])),
  publication_root_directory: t.Optional(
    t.String({
      maxLength: 1024,
      description: 'Top-level folder served as the site root; "" = the whole bucket. Default: bucket metadata.publication_root_directory.',
    }),
  ),
  slug_suggestions: t.Optional(t.Array(t.String({ maxLength: 200 }), { maxItems: 20 })),
  title: t.Optional(t.String({ maxLength: 200 })),
  tracking_enabled: t.Optional(t.Boolean()),
  publication_analytics_enabled: t.Optional(t.Boolean()),
  publication_client_events_enabled: t.Optional(t.Boolean()),
  analytics_enabled: t.Optional(t.Boolean({ description: "Alias of publication_analytics_enabled." })),
  client_events_enabled: t.Optional(t.Boolean({ description: "Alias of publication_client_events_enabled." })),
  clean_urls: t.Optional(t.Boolean({ description: "/about serves about.html and /about.html redirects to /about. Default: on (kept on republish)." })),
};

export const PublishBody = t.Object({ ...publishFields, account_id: AccountId }, { additionalProperties: false });
export const PreviewBody = t.Object(
  {
    ...publishFields,
    expires_in_minutes: t.Optional(Type.Integer({ minimum: 1, maximum: 43200, description: "Default 15, at most 43200 (30 days)." })),
    account_id: AccountId,
  },
  { additionalProperties: false },
);
export type PublishInput = Static<typeof PublishBody> & { expires_in_minutes?: number };

export const EmptyBody = t.Object({ account_id: AccountId }, { additionalProperties: false });
export const BucketParams = t.Object({ id: t.String({ maxLength: 64 }) });
export const PublicationParams = t.Object({ id: t.String({ maxLength: 64 }) });
export const ManifestQuery = t.Object({
  include_manifest: t.Optional(t.Union([t.Literal("true"), t.Literal("false")])),
  account_id: t.Optional(t.String()),
});
export const RetryQuery = t.Object({
  kind: t.Optional(
    t.Union([t.Literal("main"), t.Literal("preview")], {
      description: "The main site or the preview; default: the main site when its build needs a retry, else the preview.",
    }),
  ),
  account_id: AccountId,
});
export const PUBLICATION_PAGE = { defaultLimit: 100, maxLimit: 1000 };
export const ListPublicationsQuery = t.Object({
  include_manifest: t.Optional(t.Union([t.Literal("true"), t.Literal("false")])),
  ...pageQuery({ ...PUBLICATION_PAGE, order: "newest first" }),
  account_id: t.Optional(t.String()),
});

/** Leads a page at a time: a busy site (or one flooded through a catch-all domain) gathers thousands. */
export const LEADS_PAGE = { defaultLimit: 100, maxLimit: 1000 };
export const AccessQuery = t.Object({
  ...pageQuery({ ...LEADS_PAGE, order: "leads, most recent first" }),
  account_id: t.Optional(t.String()),
});

export const PatchPublicationBody = t.Object(
  {
    title: t.Optional(t.String({ maxLength: 200 })),
    description: t.Optional(t.String({ maxLength: 2000, description: "Shown on Auto-Index listings ({{description}})." })),
    site_mode: t.Optional(SiteMode),
    site_type: t.Optional(t.Literal("website")),
    tracking_enabled: t.Optional(t.Boolean()),
    publication_analytics_enabled: t.Optional(t.Boolean()),
    publication_client_events_enabled: t.Optional(t.Boolean()),
    analytics_enabled: t.Optional(t.Boolean()),
    client_events_enabled: t.Optional(t.Boolean()),
    expires_at: t.Optional(t.Union([t.String({ format: "date-time" }), t.Null()])),
    clean_urls: t.Optional(t.Boolean({ description: "/about serves about.html; /about.html redirects to /about." })),
    account_id: AccountId,
  },
  { additionalProperties: false },
);
export type PatchPublicationInput = Static<typeof PatchPublicationBody>;

export const PatchAccessBody = t.Object(
  {
    access_mode: AccessMode,
    password: t.Optional(t.String({ minLength: 6, maxLength: 200 })),
    regenerate_password: t.Optional(t.Boolean()),
    account_id: AccountId,
  },
  { additionalProperties: false },
);

export const RecipientLinksBody = t.Object(
  {
    emails: t.Array(t.String({ format: "email", maxLength: 254 }), { minItems: 1, maxItems: 100 }),
    expires_in_days: t.Optional(Type.Integer({ minimum: 1, maximum: 90, description: "Default 30." })),
    account_id: AccountId,
  },
  { additionalProperties: false },
);

export const SlugBody = t.Object({ public_slug: t.String({ minLength: 1, maxLength: 63 }), account_id: AccountId }, { additionalProperties: false });

export const DeployParams = t.Object({ id: t.String({ maxLength: 64 }), deploy_id: t.String({ maxLength: 64 }) });
export const ListDeploysQuery = t.Object({
  ...pageQuery({ defaultLimit: 20, maxLimit: 100, order: "newest first" }),
  account_id: t.Optional(t.String()),
});
export const RollbackBody = t.Object(
  {
    deploy_id: t.Optional(t.String({ minLength: 1, maxLength: 64, description: "The deploy to serve; omitted: the one before the live deploy." })),
    account_id: AccountId,
  },
  { additionalProperties: false },
);
