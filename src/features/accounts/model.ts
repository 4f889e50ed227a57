import { t, type Static } from "elysia";

export const ScopeSchema = t.Union([t.Literal("bucket_read"), t.Literal("bucket_write"), t.Literal("bucket_admin")]);
export const BucketPermissionSchema = t.Union([t.Literal("read"), t.Literal("write"), t.Literal("admin")]);

export const CreateApiKeyBody = t.Object(
  {
    label: t.String({ minLength: 1, maxLength: 100, description: "A name that tells keys apart, e.g. `deploy bot`." }),
    permission_scope: t.Optional(ScopeSchema),
    bucket_access: t.Optional(t.Union([t.Literal("all"), t.Literal("selected")])),
    bucket_permissions: t.Optional(
      t.Record(t.String({ maxLength: 64 }), BucketPermissionSchema, {
        description: "For bucket_access `selected`: bucket id -> read | write | admin.",
      }),
    ),
    account_id: t.Optional(t.String()),
  },
  { additionalProperties: false, description: "Unknown fields are refused with 422 (a misspelt permission_scope must not fall back to the default)." },
);

export const ApiKeyParams = t.Object({ id: t.String({ maxLength: 64 }) });
export const AccountQuery = t.Object({ account_id: t.Optional(t.String()) });

export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

export const PatchAccountBody = t.Object(
  {
    time_zone: t.Optional(
      t.String({
        description: "IANA time zone whose calendar days analytics count in (e.g. `Europe/Berlin`); `UTC` by default.",
        examples: ["Europe/Berlin"],
      }),
    ),
    account_id: t.Optional(t.String()),
  },
  { additionalProperties: false, description: "Account settings to change; fields left out keep their value. Unknown fields are refused with 422." },
);
