// Request bodies of the git sync endpoints (docs/git-sync.md shows them with examples).
import { t, type Static } from "elysia";

export const GitSyncParams = t.Object({ id: t.String({ maxLength: 64 }) });
export const WebhookParams = t.Object({ connection_id: t.String({ maxLength: 64 }) });

export const ConnectBody = t.Object(
  {
    direction: t.Union([t.Literal("import"), t.Literal("export")], { description: "import: repository -> (empty) bucket; export: bucket -> repository" }),
    repository_url: t.Optional(t.String({ maxLength: 2000, description: "Default: the repository saved on the bucket's Git page" })),
    branch: t.Optional(t.String({ maxLength: 200 })),
    repository: t.Optional(t.String({ maxLength: 200, description: "GitHub App: the repository as owner/name (one of github_sync_setup.repositories)" })),
    installation_id: t.Optional(t.Integer({ minimum: 1, description: "GitHub App: the installation to use (default: the one on the repository's owner)" })),
  },
  { additionalProperties: false },
);
export type ConnectBody = Static<typeof ConnectBody>;

export const ExportBody = t.Object(
  {
    repository_url: t.Optional(t.String({ maxLength: 2000, description: "Default: the repository saved on the bucket's Git page" })),
    branch: t.Optional(t.String({ maxLength: 200 })),
    owner: t.Optional(
      t.String({
        maxLength: 100,
        description: "GitHub App: the organization or personal account to create the repository in (an installation's account_login)",
      }),
    ),
    name: t.Optional(t.String({ maxLength: 100, description: "GitHub App: the new repository's name (default: from the bucket's title)" })),
    installation_id: t.Optional(t.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

export const PatchBody = t.Object({ auto_publish: t.Boolean() }, { additionalProperties: false });

export const SyncBody = t.Object(
  {
    resolutions: t.Optional(
      t.Record(t.String({ maxLength: 1024 }), t.Union([t.Literal("bucket"), t.Literal("repository")]), {
        description: "For a conflict: the side that wins, for every path in github_sync.conflicts",
      }),
    ),
    resolve_all: t.Optional(
      t.Union([t.Literal("bucket"), t.Literal("repository")], {
        description: "For a conflict: one side wins for every path in github_sync.conflicts (instead of resolutions)",
      }),
    ),
  },
  { additionalProperties: false },
);
export const EmptyBody = t.Object({}, { additionalProperties: false });
