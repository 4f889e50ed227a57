import { t } from "elysia";

export const VersionParams = t.Object({ id: t.String({ maxLength: 64 }), version_id: t.String({ maxLength: 64 }) });
export const VersionPageQuery = t.Object({ limit: t.Optional(t.Numeric({ minimum: 1, maximum: 1000 })), offset: t.Optional(t.Numeric({ minimum: 0 })), account_id: t.Optional(t.String()) });
export const RestoreBody = t.Object({ version_id: t.String({ maxLength: 64 }), comment: t.Optional(t.String({ maxLength: 500 })), account_id: t.Optional(t.String()) }, { additionalProperties: false });
