import { Type } from "@sinclair/typebox";
import { t, type Static } from "elysia";
import { TagPath } from "../../buckets";
import { publishFields } from "../model";

export const MAX_SESSION_FILES = 20_000;

export const ManifestFile = t.Object({
  path: t.String({ minLength: 1, maxLength: 4096 }),
  byte_size: Type.Integer({ minimum: 0 }),
  content_type: t.Optional(t.String({ maxLength: 200 })),
  checksum: t.String({ maxLength: 64, description: "Base64 MD5 of the bytes (sent again as Content-MD5)." }),
  sha256: t.String({ maxLength: 64, description: "Hex SHA-256 of the bytes." }),
});

export const CreatePublishSessionBody = t.Object(
  {
    bucket_id: t.Optional(t.String({ maxLength: 64, description: "Publish into this bucket; otherwise bucket_title picks (or creates) one." })),
    bucket_title: t.Optional(
      t.String({
        minLength: 1,
        maxLength: 200,
        description: "Used when bucket_id is absent: the account's active bucket with this exact title, created when none exists.",
      }),
    ),
    bucket_description: t.Optional(t.String({ maxLength: 5000 })),
    bucket_tag_paths: t.Optional(t.Array(TagPath, { maxItems: 50 })),
    preview: t.Optional(t.Boolean({ description: "Publish a preview (preview-<slug>) instead of the main site." })),
    expires_in_minutes: t.Optional(Type.Integer({ minimum: 1, maximum: 43200, description: "Preview only; default 15." })),
    delete_missing: t.Optional(
      t.Boolean({ description: "Default true: bucket files not in the manifest are deleted (kept in version history). false: incremental." }),
    ),
    ...publishFields,
    files: t.Array(ManifestFile, { minItems: 1, maxItems: MAX_SESSION_FILES }),
    account_id: t.Optional(t.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);
export type CreatePublishSessionInput = Static<typeof CreatePublishSessionBody>;

export const SessionParams = t.Object({ id: t.String({ maxLength: 64 }) });
export const EmptyBody = t.Object({ account_id: t.Optional(t.String({ maxLength: 64 })) }, { additionalProperties: false });
