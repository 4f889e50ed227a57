import { t } from "elysia";
import { pageQuery } from "../../../http/paging";
import { VERSION_PAGE_DEFAULT, VERSION_PAGE_MAX } from "./service";

export const VersionParams = t.Object({ id: t.String({ maxLength: 64 }), version_id: t.String({ maxLength: 64 }) });
// Versions default to 50 (at most 500), a version's files to 100 (at most 1000): each list
// refuses a limit past its own maximum, as every list does.
export const VersionPageQuery = t.Object({
  ...pageQuery({ defaultLimit: VERSION_PAGE_DEFAULT, maxLimit: VERSION_PAGE_MAX }),
  account_id: t.Optional(t.String()),
});
export const VersionFilesQuery = t.Object({ ...pageQuery({ defaultLimit: 100, maxLimit: 1000 }), account_id: t.Optional(t.String()) });
export const RestoreBody = t.Object(
  { version_id: t.String({ maxLength: 64 }), comment: t.Optional(t.String({ maxLength: 500 })), account_id: t.Optional(t.String()) },
  { additionalProperties: false },
);
