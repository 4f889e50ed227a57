// Request bodies of the git sync endpoints (docs/git-sync.md shows them with examples).
import { t, type Static } from "elysia";

export const GitSyncParams = t.Object({ id: t.String({ maxLength: 64 }) });
export const WebhookParams = t.Object({ connection_id: t.String({ maxLength: 64 }) });

export const ConnectBody = t.Object(
  {
    direction: t.Union([t.Literal("import"), t.Literal("export")], { description: "import: repository -> (empty) bucket; export: bucket -> repository" }),
    repository_url: t.Optional(t.String({ maxLength: 2000, description: "Default: the repository saved on the bucket's Git page" })),
    branch: t.Optional(t.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ConnectBody = Static<typeof ConnectBody>;

export const ExportBody = t.Object(
  {
    repository_url: t.Optional(t.String({ maxLength: 2000, description: "Default: the repository saved on the bucket's Git page" })),
    branch: t.Optional(t.String({ maxLength: 200 })),
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
  },
  { additionalProperties: false },
);
export const EmptyBody = t.Object({}, { additionalProperties: false });
