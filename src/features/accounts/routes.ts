// Account routes: the browser pages (sign-up, sign-in, dashboard landing, account access,
// two-factor), the REST twin of Account access for API keys, and the account resource (settings). Key management is for a
// signed-in owner/admin (session, with the X-Pier-CSRF header, in sudo mode) or the account
// owner's key.
import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import { must, type authPlugin } from "../../http/auth";
import { createNamedKey, listAccountKeys, revokeAccountKey } from "./access-keys";
import { presentKey } from "./keys";
import { AccountQuery, ApiKeyParams, CreateApiKeyBody, PatchAccountBody } from "./model";
import { accountPages } from "./pages-account";
import { authPages } from "./pages-auth";
import { readAccount, updateAccountSettings } from "./settings";
import { requireSudo } from "./sudo";

const tags = ["API keys"];

export const accountRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "accounts" })
    .use(authPages(deps))
    .use(accountPages(deps))
    .use(auth)
    .get(
      "/api/v1/api_keys",
      ({ actor }) => ({
        data: { api_keys: listAccountKeys(deps, must(actor)).map(presentKey) },
      }),
      { auth: "bucket_admin", query: AccountQuery, detail: { tags, summary: "List the account's active API keys (account owner/admin only)" } },
    )
    .post(
      "/api/v1/api_keys",
      ({ actor, body, set, request }) => {
        requireSudo(deps, request, must(actor));
        const { key, record } = createNamedKey(deps, must(actor), body);
        set.status = 201;
        return { data: { api_key: key, key: presentKey(record) } };
      },
      {
        auth: "bucket_admin",
        body: CreateApiKeyBody,
        detail: { tags, summary: "Create a named API key (plans with named_api_keys; the key is returned once)" },
      },
    )
    .delete(
      "/api/v1/api_keys/:id",
      ({ actor, params, request }) => {
        requireSudo(deps, request, must(actor));
        revokeAccountKey(deps, must(actor), params.id);
        return { data: { revoked: true, id: params.id } };
      },
      { auth: "bucket_admin", params: ApiKeyParams, query: AccountQuery, detail: { tags, summary: "Revoke an API key (it stops working at once)" } },
    )
    .get("/api/v1/account", ({ actor }) => ({ data: { account: readAccount(deps, must(actor)) } }), {
      auth: "bucket_read",
      query: AccountQuery,
      detail: {
        tags: ["Account"],
        summary: "The account the key acts on: id, name, state and settings (time_zone)",
        description:
          "`data.account`: `id`, `name`, `state` (`active` or `read_only`), `read_only`, `time_zone` (IANA name whose calendar days analytics count in; `UTC` by default), `created_at`.",
      },
    })
    .patch("/api/v1/account", ({ actor, body }) => ({ data: { account: updateAccountSettings(deps, must(actor), body) } }), {
      auth: "bucket_admin",
      body: PatchAccountBody,
      detail: {
        tags: ["Account"],
        summary: "Change account settings: time_zone (account-wide bucket_admin: an owner or admin)",
        description:
          'Answers `data.account` as GET does. A `time_zone` that is not one of the runtime\'s IANA names (or `UTC`), spelt exactly, is 422 `VALIDATION_FAILED` with `details.field: "time_zone"`. Analytics windows follow the new zone at once; hits counted from then on are keyed by its local dates.',
      },
    });
