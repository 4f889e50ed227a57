import { Type } from "@sinclair/typebox";
import { t, type Static } from "elysia";
import { pageQuery } from "../../http/paging";

export const TagPath = t.String({
  minLength: 1,
  maxLength: 100,
  pattern: "^[A-Za-z0-9][A-Za-z0-9 ._/-]*$",
  description: "Reusable label such as `website` (not a filesystem path).",
});
export const Metadata = t.Record(t.String({ maxLength: 100 }), t.Unknown(), {
  description: "Free-form context; may hold `publication_root_directory` and `publication_forms`.",
});

/** `bucket.inbound_email`: a receiving address at the mail domain (see docs/inbound-email.md). */
export const InboundEmailInput = t.Object(
  {
    enabled: t.Boolean({ description: "true gives the bucket a receiving address (the same one again if it had one); false stops accepting mail." }),
  },
  { additionalProperties: false },
);

export const BucketInput = t.Object(
  {
    title: t.String({ minLength: 1, maxLength: 200 }),
    description: t.Optional(t.String({ maxLength: 5000 })),
    tag_paths: t.Optional(t.Array(TagPath, { maxItems: 50 })),
    metadata: t.Optional(Metadata),
    inbound_email: t.Optional(InboundEmailInput),
  },
  { additionalProperties: false },
);

export const BucketPatch = t.Object(
  {
    title: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    description: t.Optional(t.String({ maxLength: 5000 })),
    tag_paths: t.Optional(t.Array(TagPath, { maxItems: 50 })),
    metadata: t.Optional(Metadata),
    inbound_email: t.Optional(InboundEmailInput),
  },
  { additionalProperties: false },
);

export const CreateBucketBody = t.Object({ bucket: BucketInput, account_id: t.Optional(t.String()) }, { additionalProperties: false });
export const PatchBucketBody = t.Object({ bucket: BucketPatch, account_id: t.Optional(t.String()) }, { additionalProperties: false });
export const BUCKET_PAGE = { defaultLimit: 100, maxLimit: 1000 };
export const ListBucketsQuery = t.Object({
  archived: t.Optional(t.Union([t.Literal("true"), t.Literal("false")])),
  /** Only buckets carrying this label (exact match with one of their tag_paths). */
  tag: t.Optional(TagPath),
  ...pageQuery({ ...BUCKET_PAGE, order: "newest first" }),
  account_id: t.Optional(t.String()),
});
export const BucketParams = t.Object({ id: t.String({ maxLength: 64 }) });

export type BucketInput = Static<typeof BucketInput>;
export type BucketPatch = Static<typeof BucketPatch>;

// Every write body may name the account to act on (see "Account selection" in the spec).
const AccountId = t.Optional(t.String({ maxLength: 64, description: "Act on another account the credential is a member of." }));

// Bodies are never t.Optional: Elysia skips validating an optional body that is not a non-empty
// object (so `[]` or `"x"` would pass). Routes without a body get `{}` instead (routes.ts).

/** Body of archive, unarchive and lock release: nothing but account_id (or no body at all). */
export const EmptyWriteBody = t.Object({ account_id: AccountId }, { additionalProperties: false });

export const BulkBody = t.Object(
  {
    operation: t.Union([t.Literal("archive"), t.Literal("unarchive"), t.Literal("delete")], {
      description: "`archive` or `unarchive`. `delete` is refused with BULK_DELETE_NOT_SUPPORTED: delete buckets one at a time.",
    }),
    bucket_ids: t.Array(t.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 100 }),
    account_id: AccountId,
  },
  { additionalProperties: false },
);

export const DeleteBucketBody = t.Object(
  {
    confirmation: t.String({ maxLength: 200, description: "The bucket's `delete.confirmation` phrase, exactly." }),
    account_id: AccountId,
  },
  { additionalProperties: false },
);

export const LOCK_DEFAULT_SECONDS = 600;
export const LOCK_MAX_SECONDS = 3600;

export const LockBody = t.Object(
  {
    message: t.Optional(t.String({ maxLength: 500, description: "Shown to other credentials that hit the lock." })),
    // TypeBox's own Integer: Elysia's t.Integer also accepts numeric strings ("60").
    duration_seconds: t.Optional(
      Type.Integer({
        minimum: 1,
        maximum: LOCK_MAX_SECONDS,
        description: `Default ${LOCK_DEFAULT_SECONDS}, at most ${LOCK_MAX_SECONDS}; POST again to renew.`,
      }),
    ),
    account_id: AccountId,
  },
  { additionalProperties: false },
);

export const VisibilityLockBody = t.Object(
  {
    reason: t.Optional(t.String({ maxLength: 500, description: "Why visibility is frozen; shown in the dashboard and in VISIBILITY_LOCKED errors." })),
    account_id: AccountId,
  },
  { additionalProperties: false },
);

export const VARIABLE_NAME = "^[A-Z_][A-Z0-9_]{0,63}$";
export const VARIABLE_VALUE_MAX = 4096;
export const VARIABLES_MAX = 100;
const VariableName = t.String({ pattern: VARIABLE_NAME });

export const PatchVariablesBody = t.Object(
  {
    variables: t.Optional(
      t.Record(VariableName, t.String({ maxLength: VARIABLE_VALUE_MAX }), {
        additionalProperties: false,
        description: "Replaces ALL public variables (name -> value). Omit to leave them as they are.",
      }),
    ),
    secrets: t.Optional(
      t.Record(VariableName, t.Union([t.String({ maxLength: VARIABLE_VALUE_MAX }), t.Null()]), {
        additionalProperties: false,
        description: "Patches secrets: a string sets (encrypted at rest), null deletes; names not listed are kept.",
      }),
    ),
    account_id: AccountId,
  },
  { additionalProperties: false },
);

export type PatchVariablesInput = Static<typeof PatchVariablesBody>;
