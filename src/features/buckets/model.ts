import { t, type Static } from "elysia";

export const TagPath = t.String({ minLength: 1, maxLength: 100, pattern: "^[A-Za-z0-9][A-Za-z0-9 ._/-]*$", description: "Reusable label such as `website` (not a filesystem path)." });
export const Metadata = t.Record(t.String({ maxLength: 100 }), t.Unknown(), { description: "Free-form context; may hold `publication_root_directory` and `publication_forms`." });

export const BucketInput = t.Object({
  title: t.String({ minLength: 1, maxLength: 200 }),
  description: t.Optional(t.String({ maxLength: 5000 })),
  tag_paths: t.Optional(t.Array(TagPath, { maxItems: 50 })),
  metadata: t.Optional(Metadata),
}, { additionalProperties: false });

export const BucketPatch = t.Object({
  title: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  description: t.Optional(t.String({ maxLength: 5000 })),
  tag_paths: t.Optional(t.Array(TagPath, { maxItems: 50 })),
  metadata: t.Optional(Metadata),
}, { additionalProperties: false });

export const CreateBucketBody = t.Object({ bucket: BucketInput, account_id: t.Optional(t.String()) }, { additionalProperties: false });
export const PatchBucketBody = t.Object({ bucket: BucketPatch, account_id: t.Optional(t.String()) }, { additionalProperties: false });
export const ListBucketsQuery = t.Object({
  archived: t.Optional(t.Union([t.Literal("true"), t.Literal("false")])),
  account_id: t.Optional(t.String()),
});
export const BucketParams = t.Object({ id: t.String({ maxLength: 64 }) });

export type BucketInput = Static<typeof BucketInput>;
export type BucketPatch = Static<typeof BucketPatch>;
