import { t } from "elysia";
import { limitQuery } from "../../http/paging";
import { BucketPermissionSchema, ScopeSchema } from "../accounts";

export const RequestCodeBody = t.Object({ email: t.String({ minLength: 3, maxLength: 254 }) }, { additionalProperties: false });
export const VerifyCodeBody = t.Object(
  {
    email: t.String({ minLength: 3, maxLength: 254 }),
    code: t.String({ minLength: 1, maxLength: 20, description: "The numeric code from the email." }),
    label: t.Optional(t.String({ maxLength: 200 })),
    permission_scope: t.Optional(ScopeSchema),
    scope: t.Optional(ScopeSchema),
    bucket_access: t.Optional(t.Union([t.Literal("all"), t.Literal("selected")])),
    bucket_ids: t.Optional(t.Array(t.String({ maxLength: 64 }), { maxItems: 100 })),
    bucket_permissions: t.Optional(t.Record(t.String({ maxLength: 64 }), BucketPermissionSchema)),
  },
  { additionalProperties: false },
);

export const ActivityQuery = t.Object({ ...limitQuery({ defaultLimit: 100, maxLimit: 500 }), account_id: t.Optional(t.String()) });
export const LoginLinkBody = t.Object(
  { redirect_path: t.Optional(t.String({ maxLength: 2000 })), account_id: t.Optional(t.String()) },
  { additionalProperties: false },
);
