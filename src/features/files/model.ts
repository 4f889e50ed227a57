import { t } from "elysia";
import { pageQuery } from "../../http/paging";

export const BucketIdParams = t.Object({ id: t.String({ maxLength: 64 }) });
export const FileParams = t.Object({ id: t.String({ maxLength: 64 }), file_id: t.String({ maxLength: 64 }) });
const Page = pageQuery({ defaultLimit: 100, maxLimit: 1000 });
export const ListFilesQuery = t.Object({
  ...Page,
  q: t.Optional(t.String({ maxLength: 1024, description: "Substring of the path, e.g. `_email/`." })),
  account_id: t.Optional(t.String()),
});
export const PageQuery = t.Object({ ...Page, account_id: t.Optional(t.String()) });
export const ByPathQuery = t.Object({
  path: t.String({ maxLength: 4096, description: "Bucket-relative path, URL-encoded." }),
  account_id: t.Optional(t.String()),
});
export const PathString = t.String({ minLength: 1, maxLength: 4096 });

export const AttachBody = t.Object(
  {
    signed_blob_id: t.String({ minLength: 1, maxLength: 200 }),
    path: t.Optional(PathString),
    account_id: t.Optional(t.String()),
  },
  { additionalProperties: false },
);

export const RenameBody = t.Object(
  { path: PathString, overwrite: t.Optional(t.Boolean()), account_id: t.Optional(t.String()) },
  { additionalProperties: false },
);
export const CopyMoveBody = t.Object(
  {
    path: t.Optional(PathString),
    bucket_id: t.Optional(t.String({ maxLength: 64, description: "Target bucket (default: the same bucket)." })),
    overwrite: t.Optional(t.Boolean()),
    account_id: t.Optional(t.String()),
  },
  { additionalProperties: false },
);

export const ReorganizeBody = t.Object(
  {
    operations: t.Array(
      t.Object(
        {
          op: t.Union([t.Literal("rename"), t.Literal("move"), t.Literal("copy"), t.Literal("delete")]),
          from: PathString,
          to: t.Optional(PathString),
          overwrite: t.Optional(t.Boolean()),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 1000 },
    ),
    comment: t.Optional(t.String({ maxLength: 500 })),
    account_id: t.Optional(t.String()),
  },
  { additionalProperties: false },
);

export const AppendTextBody = t.Object(
  {
    path: PathString,
    text: t.String({ maxLength: 65536 }),
    create: t.Optional(t.Boolean({ description: "Create the file when missing (default false)." })),
    account_id: t.Optional(t.String()),
  },
  { additionalProperties: false },
);

export const LockFilesBody = t.Object(
  {
    paths: t.Array(PathString, { minItems: 1, maxItems: 1000 }),
    message: t.String({ minLength: 1, maxLength: 500 }),
    duration_seconds: t.Optional(t.Integer({ minimum: 1, maximum: 604800 })),
    account_id: t.Optional(t.String()),
  },
  { additionalProperties: false },
);

export const UnlockQuery = t.Object({
  force: t.Optional(
    t.Union([t.Literal("true"), t.Literal("false")], {
      description: "true breaks another credential's live lock; needs bucket_admin on the bucket (default false).",
    }),
  ),
  account_id: t.Optional(t.String()),
});

export const FromTemplateBody = t.Object(
  {
    template: t.String({ minLength: 1, maxLength: 64 }),
    title: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    description: t.Optional(t.String({ maxLength: 5000 })),
    account_id: t.Optional(t.String()),
  },
  { additionalProperties: false },
);
