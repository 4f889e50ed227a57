// TypeBox schemas of the owner API for form submissions.
import { t } from "elysia";
import { pageQuery } from "../../http/paging";
import { FORM_NAMES } from "./definitions";
import { REPLY_MAX, SUBMISSION_PAGE } from "./service";

const AccountId = t.Optional(t.String({ maxLength: 64, description: "Act on another account the credential is a member of." }));

export const BucketParams = t.Object({ id: t.String({ maxLength: 64 }) });
export const SubmissionParams = t.Object({ id: t.String({ maxLength: 64 }), submission_id: t.String({ maxLength: 64 }) });

export const ListSubmissionsQuery = t.Object({
  form_name: t.Optional(t.String({ maxLength: 32, description: `One of ${FORM_NAMES.join(", ")}.` })),
  ...pageQuery({ ...SUBMISSION_PAGE, order: "newest first" }),
  account_id: AccountId,
});

export const PatchSubmissionBody = t.Object(
  {
    fields: t.Record(t.String({ maxLength: 64 }), t.String({ maxLength: 5000 }), {
      description: "New values for fields the submission already has; other names are refused.",
    }),
    account_id: AccountId,
  },
  { additionalProperties: false },
);

export const ReplyBody = t.Object(
  {
    message: t.String({ minLength: 1, maxLength: REPLY_MAX }),
    audience: t.Optional(t.Union([t.Literal("team"), t.Literal("public")], { description: "`public` only on comments submissions; default team." })),
    account_id: AccountId,
  },
  { additionalProperties: false },
);

export const DeleteSubmissionBody = t.Optional(t.Object({ account_id: AccountId }, { additionalProperties: false }));
