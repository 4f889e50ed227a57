// Custom-domain routes: validate, call one service function, wrap in { data }.
import { Elysia } from "elysia";
import type { Deps } from "../../core/context";
import { must, type authPlugin } from "../../http/auth";
import { AddDomainBody, DomainParams, DomainsParams, EmptyBody } from "./model";
import { presentDomain, presentDomainPublication } from "./present";
import { addDomain, getDomain, listDomains, refreshDomain, removeDomain } from "./service";

const tags = ["Custom domains"];
const base = "/api/v1/buckets/:id/custom_domains";

export const domainRoutes = (deps: Deps, auth: ReturnType<typeof authPlugin>) =>
  new Elysia({ name: "custom-domains" })
    .use(auth)
    .onTransform((ctx) => {
      if (ctx.body === undefined && ctx.request.method !== "GET") (ctx as { body: unknown }).body = {};
    })
    .get(
      base,
      ({ actor, params }) => {
        const r = listDomains(deps, must(actor), params.id);
        return {
          data: {
            custom_domains: r.domains.map((d) => presentDomain(deps, d)),
            publication: presentDomainPublication(deps, r.publication),
            limits: r.limits,
          },
        };
      },
      {
        auth: "bucket_read",
        params: DomainsParams,
        detail: { tags, summary: "The bucket's custom domains, its site's public URL and the account's domain limits" },
      },
    )
    .post(
      base,
      ({ actor, params, body, set }) => {
        const r = addDomain(deps, must(actor), params.id, body.hostname);
        set.status = r.created ? 201 : 200;
        return { data: { custom_domain: presentDomain(deps, r.domain), publication: presentDomainPublication(deps, r.publication), limits: r.limits } };
      },
      {
        auth: "bucket_admin",
        params: DomainsParams,
        body: AddDomainBody,
        detail: { tags, summary: "Add (or replace) the custom domain of a published bucket; returns the DNS records to create (201)" },
      },
    )
    .get(
      `${base}/:domain_id`,
      ({ actor, params }) => ({ data: { custom_domain: presentDomain(deps, getDomain(deps, must(actor), params.id, params.domain_id)) } }),
      { auth: "bucket_read", params: DomainParams, detail: { tags, summary: "One custom domain with its DNS records and their last check" } },
    )
    .post(
      `${base}/:domain_id/refresh`,
      async ({ actor, params }) => ({
        data: { custom_domain: presentDomain(deps, await refreshDomain(deps, must(actor), params.id, params.domain_id)) },
      }),
      {
        auth: "bucket_admin",
        params: DomainParams,
        body: EmptyBody,
        detail: { tags, summary: "Check the DNS records (and certificate) now; active once everything is in place" },
      },
    )
    .delete(
      `${base}/:domain_id`,
      ({ actor, params }) => {
        const row = removeDomain(deps, must(actor), params.id, params.domain_id);
        return { data: { custom_domain: { ...presentDomain(deps, row), status: "removed", public_url: null }, removed: true } };
      },
      { auth: "bucket_admin", params: DomainParams, body: EmptyBody, detail: { tags, summary: "Remove a custom domain: it stops serving at once" } },
    );
