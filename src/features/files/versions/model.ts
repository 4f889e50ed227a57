import { t } from "elysia";
import { pageQuery } from "../../../http/paging";

export const VersionParams = t.Object({ id: t.String({ maxLength: 64 }), version_id: t.String({ maxLength: 64 }) });
// Versions default to 50 (at most 500), a version's files to 100 (at most 1000).
export const VersionPageQuery = t.Object({ ...pageQuery({ defaultLimit: 50, maxLimit: 1000 }), account_id: t.Optional(t.String()) });
export const RestoreBody = t.Object(
  { version_id: t.String({ maxLength: 64 }), comment: t.Optional(t.String({ maxLength: 500 })), account_id: t.Optional(t.String()) },
  { additionalProperties: false },
);
