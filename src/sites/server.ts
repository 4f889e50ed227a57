// The site server: Host -> publication -> deploy file. Serving rules (docs/sites.md):
// index.html/index.htm for directories, else an Auto-Index; static sites answer 404 (the site's
// own 404.html when present); spa sites answer deep links with the root index page; directories
// without a trailing slash redirect; gates run before anything of the site is revealed.
import type { Deps } from "../core/context";
import { FormWidget } from "../features/forms";
import { clientIp } from "../http/request-info";
import type { RequestNote } from "../http/request-metrics";
import { AutoIndex } from "./autoindex";
import type { SiteChanges } from "./changes";
import { CACHE_HTML, contentExists, SiteContent, type SiteRequest } from "./content";
import { countHit } from "./counting";
import { SiteDirectory, type Manifest, type Site } from "./directory";
import { applySiteHeaders, FileServer, isComplete } from "./files";
import { emailGatePage, hasAccess, passwordGatePage, type GateContext } from "./gates";
import { loadSiteTemplates, messageBody, pageResponse, type SiteTemplates } from "./pages";
import { parseRequestPath, splitUrl } from "./paths";
import { PierPaths } from "./pier-paths";
import { siteHeadersFor } from "./site-headers";

export { CACHE_ASSET, CACHE_HTML, CACHE_PRIVATE } from "./content";
export { withSiteHeaders } from "./site-headers";

export type SiteHandler = (
  req: Request,
  host: { kind: "site"; label: string } | { kind: "custom"; hostname: string },
  clientIp?: () => string,
) => Promise<Response> | Response;

const PREVIEW_HEADERS = { "x-robots-tag": "noindex, nofollow" };
const NO_HEADERS = {};

/** Each handler's site directory, for forgetChangedSites. */
const directories = new WeakMap<SiteHandler, SiteDirectory>();

/**
 * Drop this handler's cached host lookups of the publications another process changed (serving
 * workers, src/sites/changes.ts), or all of them. Deploy manifests stay: a deploy never changes.
 */
export function forgetChangedSites(handler: SiteHandler, changes: SiteChanges): void {
  const directory = directories.get(handler);
  if (!directory) return;
  if (changes.all) directory.forgetAll();
  else for (const id of changes.publicationIds) directory.forget(id);
}

export function createSiteHandler(deps: Deps, note: RequestNote | null = null): SiteHandler {
  const directory = new SiteDirectory(deps);
  const files = new FileServer(deps.blobs, undefined, deps.metrics.siteBytes);
  const content = new SiteContent(files, new AutoIndex(deps, files), new FormWidget(deps));
  const pierPaths = new PierPaths(deps);
  let templates: SiteTemplates | null = null;
  const loading = loadSiteTemplates().then((t) => (templates = t));

  // What the synchronous part of the last handle() call looked up, so counting it does not
  // repeat the site lookup or read and split req.url again (Bun builds that string per read).
  // Reset at each call; read right after handle() returns, before any other request runs.
  let handledSite: Site | null = null;
  let handledPath: string | null = null;
  let handled: SiteRequest | null = null;

  const recorded: SiteHandler = (req, hostKind, ipOf = () => clientIp(req)) => {
    handledSite = null;
    handledPath = null;
    handled = null;
    const res = handle(req, hostKind, ipOf);
    // A custom domain serves its bucket's main site and becomes its public URL: its readers count too.
    const custom = hostKind.kind === "custom";
    const site = handledSite ?? (custom ? directory.byCustomHost(hostKind.hostname) : directory.byLabel(hostKind.label));
    if (!site?.analytics || site.deployId === null || site.status !== "published") return res;
    const pathname = handledPath ?? splitUrl(req.url).pathname;
    const label = custom ? hostKind.hostname : hostKind.label;
    if (res instanceof Response) {
      countHit(deps, req, res, site, label, pathname, (handled as SiteRequest | null)?.fileType ?? null, ipOf);
      return res;
    }
    return res.then((r) => {
      countHit(deps, req, r, site, label, pathname, null, ipOf);
      return r;
    });
  };

  // Not async on purpose: a cached small file is answered without creating a promise.
  const handle: SiteHandler = (req, hostKind, ipOf = () => clientIp(req)) => {
    const t = templates;
    if (t === null) return loading.then(() => handle(req, hostKind, ipOf));
    const custom = hostKind.kind === "custom";
    // An active custom domain serves its bucket's main site, with the same gates and caching.
    const site = custom ? directory.byCustomHost(hostKind.hostname) : directory.byLabel(hostKind.label);
    handledSite = site;
    const preview = site?.kind === "preview" || (!custom && hostKind.label.startsWith("preview-"));
    const extra = preview ? PREVIEW_HEADERS : NO_HEADERS;
    if (!site || site.deployId === null || site.status === "unpublished" || site.status === "unpublishing") return noSite(t, extra);
    if (site.expiresAt !== null && site.expiresAt <= deps.clock.now().getTime()) {
      const what = site.kind === "preview" ? "This preview has expired" : "This site has expired";
      return pageResponse(t, 410, "Expired", messageBody(what, "The owner can publish it again."), extra);
    }

    const method = req.method;
    const { pathname, search } = splitUrl(req.url);
    handledPath = pathname;
    if (note !== null) note.pathname = pathname;
    const parsed = parseRequestPath(pathname);
    if (!parsed.ok) return pageResponse(t, 400, "Bad request", messageBody("Bad request", "This address is not valid."), extra);
    const path = parsed.path;

    if (site.kind === "preview" && path === "robots.txt") {
      return new Response(t.robotsPreview, { headers: { "content-type": "text/plain; charset=utf-8", "cache-control": CACHE_HTML, ...extra } });
    }

    if (path === "_pier" || path.startsWith("_pier/")) {
      const host = siteHost(hostKind);
      return pierPaths.answer({ req, t, site, path, search, host, extra, gate: gateOf(req, t, site, host, extra, ipOf), ip: ipOf });
    }
    if (method !== "GET" && method !== "HEAD") {
      return new Response(null, { status: 405, headers: { allow: "GET, HEAD", "cache-control": "no-store", ...extra } });
    }

    if (site.accessMode !== "public") {
      const host = siteHost(hostKind);
      if (!hasAccess(deps, req, site, host)) {
        const next = pathname + search;
        const gate = gateOf(req, t, site, host, extra, ipOf)();
        return site.accessMode === "password" ? passwordGatePage(gate, next) : emailGatePage(gate, next);
      }
    }

    const loaded = directory.manifest(site.deployId);
    const priv = site.accessMode !== "public";
    const c: SiteRequest = {
      req,
      t,
      site,
      m: loaded as Manifest,
      path,
      dir: parsed.dir,
      pathname,
      search,
      custom,
      priv,
      extra,
      siteHeaders: null,
      fileType: null,
    };
    if (loaded instanceof Promise) {
      // A large deploy's first requests wait for its files to be read (in steps: other sites answer meanwhile).
      return loaded.then((m) => {
        c.m = m;
        return fromDeploy(c, preview);
      });
    }
    handled = c;
    return fromDeploy(c, preview);
  };

  /** The answer from the deploy's files, after the host, the path and the gates were settled. */
  const fromDeploy = (c: SiteRequest, preview: boolean): Response | Promise<Response> => {
    const { m, site, path, dir, search } = c;
    const rules = m.rules;
    if (rules === null) return content.serve(c);

    // Site rules (docs/site-rules.md) run after the gates: a rule never reveals a protected site.
    // Besides the path, the content check depends on these two (a deploy's files never change): the rules remember its answer.
    const shadowKey = (dir ? 1 : 0) | (site.cleanUrls ? 2 : 0);
    const hit = rules.hasRedirects ? rules.redirect(path, search, () => contentExists(m, path, dir, site.cleanUrls), shadowKey) : null;
    // A rewrite serves another path of this same site (never another origin: no proxying).
    const target =
      hit !== null && (hit.rule.status === 200 || hit.rule.status === 404) ? parseRequestPath(splitUrl(`http://site${hit.location}`).pathname) : null;
    // Answers get the `_headers` of the path they serve, baked into their prepared headers.
    if (rules.hasHeaders) c.siteHeaders = siteHeadersFor(m, rules, target?.ok ? target.path : path, c, preview);
    let res: Response | Promise<Response>;
    if (hit === null) res = content.serve(c);
    else if (target === null) res = content.redirect(c, hit.rule.status, hit.location);
    else if (target.ok) res = content.serveTarget(c, target.path, target.dir, hit.rule.status);
    else res = content.missing(c);
    const set = c.siteHeaders;
    if (set === null) return res;
    // Pier's own pages (404, Auto-Index) are built per answer: the set is applied to them here.
    const apply = (r: Response) => {
      if (!isComplete(r)) applySiteHeaders(r.headers, set);
      return r;
    };
    return res instanceof Response ? apply(res) : res.then(apply);
  };

  // The host name and the gate's context only for the requests that need them (gated sites,
  // `/_pier/` paths): a public site's file builds neither.
  const siteHost = (hostKind: Parameters<SiteHandler>[1]): string =>
    hostKind.kind === "custom" ? hostKind.hostname : `${hostKind.label}.${deps.urls.sitesDomain}`;
  const gateOf = (req: Request, t: SiteTemplates, site: Site, host: string, extra: Record<string, string>, ipOf: () => string) => (): GateContext => ({
    deps,
    t,
    site,
    host,
    extraHeaders: extra,
    client: ipOf(),
    secure: req.url.startsWith("https:") || (deps.config.trustProxy && req.headers.get("x-forwarded-proto") === "https"),
  });

  directories.set(recorded, directory);
  return recorded;
}

function noSite(t: SiteTemplates, extra: Record<string, string>): Response {
  return pageResponse(t, 404, "No site here", messageBody("No site is published at this address", "Check the address, or ask the owner to publish it."), extra);
}
