// The site server: Host -> publication -> files. Publishing fills this in; until a site exists
// for a host, visitors get a plain 404 page (never the API).
import type { Deps } from "../core/context";

export type SiteHandler = (req: Request, host: { kind: "site"; label: string } | { kind: "custom"; hostname: string }) => Promise<Response> | Response;

export function createSiteHandler(_deps: Deps): SiteHandler {
  return () =>
    new Response("<!doctype html><title>No site here</title><h1>No site is published at this address</h1>", {
      status: 404,
      headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
    });
}
