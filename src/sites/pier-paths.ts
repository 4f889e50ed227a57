// Pier's own endpoints on site hosts, under /_pier/ (a site's own _pier/ folder is shadowed):
// gate posts and links, the analytics events script and beacon, the forms' script, widget,
// challenge, comments and posts.
import type { Deps } from "../core/context";
import { ClientEvents } from "../features/analytics";
import { FormEndpoint } from "../features/forms";
import altchaScript from "../../node_modules/altcha/dist/main/altcha.min.js" with { type: "file" };
import { siteAssets } from "../sites-assets.gen";
import type { Site } from "./directory";
import { handleGatePost, handleRecipientLink, hasAccess, type GateContext } from "./gates";
import { messageBody, pageResponse, type SiteTemplates } from "./pages";

export interface PierPathRequest {
  req: Request;
  t: SiteTemplates;
  site: Site;
  /** The site path ("_pier/..."). */
  path: string;
  search: string;
  host: string;
  extra: Record<string, string>;
  gate: () => GateContext;
  ip: () => string;
}

export class PierPaths {
  private readonly events: ClientEvents;
  private readonly forms: FormEndpoint;
  private formsScript: string | null = null;

  constructor(private readonly deps: Deps) {
    this.events = new ClientEvents(deps);
    this.forms = new FormEndpoint(deps);
  }

  answer(p: PierPathRequest): Promise<Response> | Response {
    const { req, t, site, path, extra, host } = p;
    const method = req.method;
    const deps = this.deps;
    const notHere = () => pageResponse(t, 404, "Not found", messageBody("Not found", "There is nothing at this address."), extra);
    if (method === "POST" && path.startsWith("_pier/gate/"))
      return handleGatePost(p.gate(), req, path.slice("_pier/gate/".length)).then((res) => res ?? notHere());
    if (method === "GET" && path === "_pier/gate/recipient" && site.accessMode === "require_email") return handleRecipientLink(p.gate(), p.search);
    if ((method === "GET" || method === "HEAD") && path === "_pier/events.js") return this.events.scriptResponse(site.clientEvents, extra);
    if (method === "POST" && path === "_pier/event") {
      // A gated site's events are its admitted visitors'; anyone else is answered alike and not counted.
      return this.events.receive(req, site, p.ip(), site.accessMode === "public" || hasAccess(deps, req, site, host));
    }
    if ((method === "GET" || method === "HEAD") && path === "_pier/forms.js") {
      const headers = {
        "content-type": "text/javascript; charset=utf-8",
        "cache-control": "public, max-age=300",
        "x-content-type-options": "nosniff",
        ...extra,
      };
      if (this.formsScript !== null) return new Response(this.formsScript, { headers });
      return Bun.file(siteAssets["site/forms.js"]!)
        .text()
        .then((text) => new Response((this.formsScript = text), { headers }));
    }
    if ((method === "GET" || method === "HEAD") && path === "_pier/altcha.js") {
      // The proof-of-work widget, from the site host itself (no CDN).
      return new Response(Bun.file(altchaScript), {
        headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff", ...extra },
      });
    }
    if (method === "GET" && path === "_pier/form/challenge") {
      if (site.accessMode !== "public" && !hasAccess(deps, req, site, host)) return notHere();
      return this.forms.challenge(site);
    }
    if (method === "GET" && path === "_pier/form/comments") {
      if (site.accessMode === "public" || !hasAccess(deps, req, site, host)) return notHere();
      return this.forms.comments(site);
    }
    if (method === "POST" && path.startsWith("_pier/form/")) {
      // A gated site's forms are for the visitors who passed its gate.
      if (site.accessMode !== "public" && !hasAccess(deps, req, site, host)) {
        return pageResponse(t, 403, "Sign in first", messageBody("Sign in first", "Open the site and sign in, then send the form again."), extra);
      }
      return this.forms.receive(req, site, path.slice("_pier/form/".length), p.ip(), host, (status, title, body, headers) =>
        pageResponse(t, status, title, body, { ...extra, ...headers }),
      );
    }
    return notHere();
  }
}
