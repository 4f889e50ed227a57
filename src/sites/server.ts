// The site server: Host -> publication -> deploy file. Serving rules (docs/sites.md):
// index.html/index.htm for directories, else an Auto-Index; static sites answer 404 (the site's
// own 404.html when present); spa sites answer deep links with the root index page; directories
// without a trailing slash redirect; gates run before anything of the site is revealed.
import type { Deps } from "../core/context";
import { classify, ClientEvents, isDownloadPath } from "../features/analytics";
import { FormEndpoint, FormWidget } from "../features/forms";
import { clientIp } from "../http/request-info";
import { AUTOINDEX_CSP, AutoIndex } from "./autoindex";
import { SiteDirectory, type Manifest, type Site } from "./directory";
import { applySiteHeaders, FileServer, isComplete, markComplete, type SiteHeaderSet } from "./files";
import { emailGatePage, handleGatePost, handleRecipientLink, hasAccess, passwordGatePage, type GateContext } from "./gates";
import { noneMatch } from "./negotiate";
import { loadSiteTemplates, messageBody, pageResponse, type SiteTemplates } from "./pages";
import { hasExtension, parseRequestPath, splitUrl } from "./paths";
import { siteAssets } from "../sites-assets.gen";
import type { DeployFile, SiteRules } from "../features/publish";
import type { ServeOptions } from "./files";
import altchaScript from "../../node_modules/altcha/dist/main/altcha.min.js" with { type: "file" };

export type SiteHandler = (
  req: Request,
  host: { kind: "site"; label: string } | { kind: "custom"; hostname: string },
  clientIp?: () => string,
) => Promise<Response> | Response;

/** HTML is always revalidated (ETag makes that a 304); other files are fresh for 5 minutes,
 * then revalidated: file names are not content-hashed, so "immutable" would serve stale assets. */
export const CACHE_HTML = "public, no-cache";
export const CACHE_ASSET = "public, max-age=300, must-revalidate";
/** Gated sites must never be stored by shared caches. */
export const CACHE_PRIVATE = "private, no-cache";

const PREVIEW_HEADERS = { "x-robots-tag": "noindex, nofollow" };
const NO_HEADERS = {};

/** Each handler's site directory, for forgetCachedSites. */
const directories = new WeakMap<SiteHandler, SiteDirectory>();

/**
 * Drop every cached host lookup of this handler (deploy manifests stay: a deploy never changes).
 * Called when another process may have changed publications (serving workers).
 */
export function forgetCachedSites(handler: SiteHandler): void {
  directories.get(handler)?.forgetAll();
}

export function createSiteHandler(deps: Deps): SiteHandler {
  const directory = new SiteDirectory(deps);
  const files = new FileServer(deps.blobs, undefined, deps.metrics.siteBytes);
  const autoIndex = new AutoIndex(deps, files);
  const events = new ClientEvents(deps);
  const forms = new FormEndpoint(deps);
  const formWidget = new FormWidget(deps);
  let formsScript: string | null = null;
  let templates: SiteTemplates | null = null;
  const loading = loadSiteTemplates().then((t) => (templates = t));

  // What the synchronous part of the last handle() call looked up, so counting it does not
  // repeat the site lookup or read and split req.url again (Bun builds that string per read).
  // Reset at each call; read right after handle() returns, before any other request runs.
  let handledSite: Site | null = null;
  let handledPath: string | null = null;
  /** The content type of the deploy file answered synchronously (analytics reads it instead of the response's headers). */
  let handledType: string | null = null;
  /**
   * The `_headers` set of the answer being built: every deploy file of one handle() call is
   * served synchronously inside it, so serveFile reads it here rather than through every helper.
   */
  let pendingSiteHeaders: SiteHeaderSet | null = null;

  // Analytics sees every answer of a live site whose owner has not turned counting off; it costs
  // the request a few stores into preallocated arrays (src/features/analytics/recorder.ts does
  // the rest off the request).
  const recorded: SiteHandler = (req, hostKind, ipOf = () => clientIp(req)) => {
    handledSite = null;
    handledPath = null;
    handledType = null;
    const res = handle(req, hostKind, ipOf);
    if (hostKind.kind !== "site") return res;
    const site = handledSite ?? directory.byLabel(hostKind.label);
    if (!site?.analytics || site.deployId === null || site.status !== "published") return res;
    const path = handledPath ?? splitUrl(req.url).pathname;
    if (res instanceof Response) {
      count(req, site, hostKind.label, path, ipOf, res, handledType);
      return res;
    }
    return res.then((r) => {
      count(req, site, hostKind.label, path, ipOf, r, null);
      return r;
    });
  };

  function count(req: Request, site: Site, label: string, pathname: string, ipOf: () => string, res: Response, fileType: string | null): void {
    const method = req.method;
    if (method !== "GET" && method !== "HEAD") return;
    if (pathname.startsWith("/_pier/")) return;
    const status = res.status;
    const kind = classify(status, status >= 200 && status < 300 ? (fileType ?? res.headers.get("content-type")) : null, pathname);
    if (kind === null) return;
    try {
      const headers = req.headers;
      deps.analytics.hit(
        deps.analytics.now(),
        site.id,
        label,
        pathname,
        kind,
        // A download is a whole non-HTML file handed out (a resumed range is the same download).
        kind === "asset" && status === 200 && method === "GET" && isDownloadPath(pathname),
        headers.get("referer"),
        headers.get("user-agent") ?? "",
        ipOf(),
      );
    } catch (e) {
      deps.log.error("analytics: hit not counted", { error: (e as Error).message }); // never the visitor's problem
    }
  }

  // Not async on purpose: a cached small file is answered without creating a promise.
  const handle: SiteHandler = (req, hostKind, ipOf = () => clientIp(req)) => {
    const t = templates;
    if (t === null) return loading.then(() => handle(req, hostKind, ipOf));
    const custom = hostKind.kind === "custom";
    // An active custom domain serves its bucket's main site, with the same gates and caching.
    const site = custom ? directory.byCustomHost(hostKind.hostname) : directory.byLabel(hostKind.label);
    handledSite = site;
    const extra = site?.kind === "preview" || (!custom && hostKind.label.startsWith("preview-")) ? PREVIEW_HEADERS : NO_HEADERS;
    if (!site || site.deployId === null || site.status === "unpublished" || site.status === "unpublishing") return noSite(t, extra);
    if (site.expiresAt !== null && site.expiresAt <= deps.clock.now().getTime()) {
      return pageResponse(
        t,
        410,
        "Expired",
        messageBody(site.kind === "preview" ? "This preview has expired" : "This site has expired", "The owner can publish it again."),
        extra,
      );
    }

    const method = req.method;
    const { pathname, search } = splitUrl(req.url);
    handledPath = pathname;
    const parsed = parseRequestPath(pathname);
    if (!parsed.ok) return pageResponse(t, 400, "Bad request", messageBody("Bad request", "This address is not valid."), extra);
    const path = parsed.path;

    if (site.kind === "preview" && path === "robots.txt") {
      return new Response(t.robotsPreview, { headers: { "content-type": "text/plain; charset=utf-8", "cache-control": CACHE_HTML, ...extra } });
    }

    const host = custom ? hostKind.hostname : `${hostKind.label}.${deps.urls.sitesDomain}`;
    const gate = (): GateContext => ({
      deps,
      t,
      site,
      host,
      extraHeaders: extra,
      client: ipOf(),
      secure: req.url.startsWith("https:") || (deps.config.trustProxy && req.headers.get("x-forwarded-proto") === "https"),
    });

    // Pier's own endpoints on site hosts live under /_pier/ (a site's own _pier/ folder is shadowed).
    if (path === "_pier" || path.startsWith("_pier/")) {
      const notHere = () => pageResponse(t, 404, "Not found", messageBody("Not found", "There is nothing at this address."), extra);
      if (method === "POST" && path.startsWith("_pier/gate/"))
        return handleGatePost(gate(), req, path.slice("_pier/gate/".length)).then((res) => res ?? notHere());
      if (method === "GET" && path === "_pier/gate/recipient" && site.accessMode === "require_email") return handleRecipientLink(gate(), search);
      if ((method === "GET" || method === "HEAD") && path === "_pier/events.js") return events.scriptResponse(site.clientEvents, extra);
      if (method === "POST" && path === "_pier/event") return events.receive(req, site, ipOf());
      if ((method === "GET" || method === "HEAD") && path === "_pier/forms.js") {
        const headers = {
          "content-type": "text/javascript; charset=utf-8",
          "cache-control": "public, max-age=300",
          "x-content-type-options": "nosniff",
          ...extra,
        };
        if (formsScript !== null) return new Response(formsScript, { headers });
        return Bun.file(siteAssets["site/forms.js"]!)
          .text()
          .then((text) => new Response((formsScript = text), { headers }));
      }
      if ((method === "GET" || method === "HEAD") && path === "_pier/altcha.js") {
        // The proof-of-work widget, from the site host itself (no CDN).
        return new Response(Bun.file(altchaScript), {
          headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600", "x-content-type-options": "nosniff", ...extra },
        });
      }
      if (method === "GET" && path === "_pier/form/challenge") {
        if (site.accessMode !== "public" && !hasAccess(deps, req, site, host)) return notHere();
        return forms.challenge(site);
      }
      if (method === "GET" && path === "_pier/form/comments") {
        if (site.accessMode === "public" || !hasAccess(deps, req, site, host)) return notHere();
        return forms.comments(site);
      }
      if (method === "POST" && path.startsWith("_pier/form/")) {
        // A gated site's forms are for the visitors who passed its gate.
        if (site.accessMode !== "public" && !hasAccess(deps, req, site, host)) {
          return pageResponse(t, 403, "Sign in first", messageBody("Sign in first", "Open the site and sign in, then send the form again."), extra);
        }
        return forms.receive(req, site, path.slice("_pier/form/".length), ipOf(), (status, title, body, headers) =>
          pageResponse(t, status, title, body, { ...extra, ...headers }),
        );
      }
      return notHere();
    }
    if (method !== "GET" && method !== "HEAD") {
      return new Response(null, { status: 405, headers: { allow: "GET, HEAD", "cache-control": "no-store", ...extra } });
    }

    if (site.accessMode !== "public" && !hasAccess(deps, req, site, host)) {
      const next = pathname + search;
      return site.accessMode === "password" ? passwordGatePage(gate(), next) : emailGatePage(gate(), next);
    }

    const m = directory.manifest(site.deployId);
    const priv = site.accessMode !== "public";
    const cacheFor = (type: string) => (priv ? CACHE_PRIVATE : type.startsWith("text/html") ? CACHE_HTML : CACHE_ASSET);
    const rules = m.rules;
    if (rules === null) return serveContent(req, t, site, m, path, parsed.dir, pathname, search, cacheFor, extra);

    // Site rules (docs/site-rules.md) run after the gates: a rule never reveals a protected site.
    let res: Response | Promise<Response>;
    let headersPath = path;
    const hit = rules.hasRedirects ? rules.redirect(path, search, contentExists(m, path, parsed.dir, site.cleanUrls)) : null;
    if (hit !== null && hit.rule.status !== 200 && hit.rule.status !== 404) {
      res = new Response(null, { status: hit.rule.status, headers: { location: hit.location, "cache-control": priv ? CACHE_PRIVATE : CACHE_HTML, ...extra } });
    } else {
      // A rewrite serves another path of this same site (never another origin: no proxying).
      const target = hit !== null ? parseRequestPath(splitUrl(`http://site${hit.location}`).pathname) : null;
      if (target?.ok) headersPath = target.path;
      // Deploy files get the path's header blocks baked into their cached headers (files.ts).
      pendingSiteHeaders = rules.hasHeaders ? siteHeadersFor(m, rules, headersPath, custom, priv, extra) : null;
      try {
        if (hit === null) res = serveContent(req, t, site, m, path, parsed.dir, pathname, search, cacheFor, extra);
        else if (target!.ok) res = serveTarget(req, t, site, m, target!.path, target!.dir, hit.rule.status, cacheFor, extra);
        else res = missing(req, t, site, m, path, cacheFor, extra);
      } finally {
        pendingSiteHeaders = null;
      }
    }
    if (!rules.hasHeaders) return res;
    const apply = (r: Response) => {
      if (isComplete(r)) return r;
      const changes = rules.headers(headersPath);
      return changes === null ? r : withSiteHeaders(r, changes, { custom, priv, extra });
    };
    return res instanceof Response ? apply(res) : res.then(apply);
  };

  /** The path's header set, remembered per path (bounded) so a hot path matches no patterns. */
  function siteHeadersFor(m: Manifest, rules: SiteRules, path: string, custom: boolean, priv: boolean, extra: Record<string, string>): SiteHeaderSet | null {
    // Bounded in entries and key length: a flood of long distinct paths costs matching, not memory.
    if (path.length > 200) return siteHeaderSet(m, rules.headers(path), custom, priv, extra);
    const key = `${custom ? 1 : 0}${priv ? 1 : 0}${extra === PREVIEW_HEADERS ? 1 : 0}/${path}`;
    const byPath = (m.headerSetByPath ??= new Map());
    let set = byPath.get(key);
    if (set === undefined) {
      if (byPath.size >= 1_000) byPath.clear();
      byPath.set(key, (set = siteHeaderSet(m, rules.headers(path), custom, priv, extra)));
    }
    return set;
  }

  /**
   * One object per distinct `_headers` outcome of a deploy (most paths share a few), so the file
   * server's header cache keys on it. Bounded: a flood of distinct paths adds no new sets unless
   * their outcomes differ, and the table is dropped past its cap.
   */
  function siteHeaderSet(
    m: Manifest,
    changes: Map<string, string | null> | null,
    custom: boolean,
    priv: boolean,
    extra: Record<string, string>,
  ): SiteHeaderSet | null {
    if (changes === null) return null;
    let key = `${custom ? 1 : 0}${priv ? 1 : 0}${extra === PREVIEW_HEADERS ? 1 : 0}`;
    for (const [name, value] of changes) key += `\n${name}\t${value === null ? "\u0000" : value}`;
    const interned = (m.headerSets ??= new Map());
    let set = interned.get(key);
    if (set === undefined) {
      if (interned.size >= 1_000) interned.clear();
      interned.set(key, (set = { changes, custom, priv, extra }));
    }
    return set;
  }

  /** The deploy's files at `path` by Pier's own rules: index pages, Auto-Index, clean URLs, 404/SPA. */
  function serveContent(
    req: Request,
    t: SiteTemplates,
    site: Site,
    m: Manifest,
    path: string,
    dir: boolean,
    pathname: string,
    search: string,
    cacheFor: (type: string) => string,
    extra: Record<string, string>,
  ): Promise<Response> | Response {
    const priv = site.accessMode !== "public";
    if (dir) {
      const base = path === "" ? "" : `${path}/`;
      const index = m.files.get(`${base}index.html`) ?? m.files.get(`${base}index.htm`);
      if (index) return serveFile(req, site, index, { cacheControl: cacheFor(index.contentType), extraHeaders: extra, conditional: true });
      if (m.dirs.has(path)) {
        return autoIndex.render(t, site, m, path).then((page) => {
          const headers = {
            "content-type": "text/html; charset=utf-8",
            "cache-control": priv ? CACHE_PRIVATE : CACHE_HTML,
            etag: page.etag,
            "content-security-policy": AUTOINDEX_CSP,
            "x-content-type-options": "nosniff",
            ...extra,
          };
          if (noneMatch(req.headers.get("if-none-match"), page.etag)) return new Response(null, { status: 304, headers });
          return new Response(page.html, { headers });
        });
      }
      return missing(req, t, site, m, path, cacheFor, extra);
    }

    const file = m.files.get(path);
    if (file) {
      // Clean URLs: /about.html moves to /about, which serves the same file (when nothing else is there).
      if (site.cleanUrls && pathname.endsWith(".html") && path.endsWith(".html")) {
        const bare = path.slice(0, -".html".length);
        if (bare !== "" && !bare.endsWith("/") && bare.slice(bare.lastIndexOf("/") + 1) !== "index" && !m.files.has(bare) && !m.dirs.has(bare))
          return new Response(null, {
            status: 308,
            headers: { location: `${pathname.slice(0, -".html".length)}${search}`, "cache-control": CACHE_HTML, ...extra },
          });
      }
      return serveFile(req, site, file, { cacheControl: cacheFor(file.contentType), extraHeaders: extra, conditional: true });
    }
    if (m.dirs.has(path)) {
      return new Response(null, { status: 301, headers: { location: `${pathname}/${search}`, "cache-control": CACHE_HTML, ...extra } });
    }
    const page = site.cleanUrls ? m.files.get(`${path}.html`) : undefined;
    if (page) return serveFile(req, site, page, { cacheControl: cacheFor(page.contentType), extraHeaders: extra, conditional: true });
    return missing(req, t, site, m, path, cacheFor, extra);
  }

  /** The file a 200 or 404 rule names (a folder serves its index page); nothing there is a 404. */
  function serveTarget(
    req: Request,
    t: SiteTemplates,
    site: Site,
    m: Manifest,
    path: string,
    dir: boolean,
    status: number,
    cacheFor: (type: string) => string,
    extra: Record<string, string>,
  ): Promise<Response> | Response {
    const base = path === "" ? "" : `${path}/`;
    const file =
      (dir ? undefined : (m.files.get(path) ?? (site.cleanUrls ? m.files.get(`${path}.html`) : undefined))) ??
      m.files.get(`${base}index.html`) ??
      m.files.get(`${base}index.htm`);
    if (!file) return status === 404 ? notFoundPage(req, t, site, m, cacheFor, extra) : missing(req, t, site, m, path, cacheFor, extra);
    return status === 404
      ? serveFile(req, site, file, { status: 404, cacheControl: cacheFor(file.contentType), extraHeaders: extra, conditional: false })
      : serveFile(req, site, file, { cacheControl: cacheFor(file.contentType), extraHeaders: extra, conditional: true });
  }

  function notFoundPage(req: Request, t: SiteTemplates, site: Site, m: Manifest, cacheFor: (type: string) => string, extra: Record<string, string>) {
    const page404 = m.files.get("404.html");
    // The site's own 404 page is an HTML page like any other: it gets the site's hosted forms.
    if (page404) return serveFile(req, site, page404, { status: 404, cacheControl: cacheFor(page404.contentType), extraHeaders: extra, conditional: false });
    return pageResponse(t, 404, "Not found", messageBody("Page not found", "There is no page at this address."), extra);
  }
  directories.set(recorded, directory);
  return recorded;

  /**
   * A deploy file; an HTML page of a site with hosted forms gets them injected (src/features/forms/
   * widget.ts). Such pages are read whole and rewritten, so they go out without ETag, range or
   * precompressed variant; sites without hosted forms keep the plain (sendfile, 304) path.
   */
  function serveFile(req: Request, site: Site, f: DeployFile, o: ServeOptions): Response | Promise<Response> {
    const siteHeaders = pendingSiteHeaders;
    if (siteHeaders !== null) o.siteHeaders = siteHeaders;
    // `_headers` may set Content-Type: analytics then reads the answer's own.
    handledType = siteHeaders === null || !siteHeaders.changes.has("content-type") ? f.contentType : null;
    if (req.method !== "GET" || !f.contentType.startsWith("text/html") || !formWidget.active(site)) return files.serve(req, f, o);
    const plain = new Request(req.url, { headers: { host: req.headers.get("host") ?? "" } });
    return Promise.resolve(files.serve(plain, f, { ...o, conditional: false })).then(async (res) => {
      const html = formWidget.inject(site, await res.text(), splitUrl(req.url).pathname);
      const headers = new Headers(res.headers);
      for (const h of ["etag", "content-length", "accept-ranges", "last-modified", "content-encoding", "vary"]) headers.delete(h);
      // A site CSP (from _headers, baked into the file's headers) is widened for the forms' own needs.
      const csp = headers.get("content-security-policy");
      if (csp) headers.set("content-security-policy", formWidget.widenCsp(site, csp));
      return markComplete(new Response(html, { status: res.status, headers }));
    });
  }

  /**
   * Nothing at this path. spa: deep links get the root index page (200) when the last segment
   * has no extension or the client asks for HTML (a browser navigation); a missing /app.js stays
   * a 404 so a broken asset never turns into HTML. Otherwise the site's 404.html, or Pier's page.
   */
  function missing(
    req: Request,
    t: SiteTemplates,
    site: Site,
    m: Manifest,
    path: string,
    cacheFor: (type: string) => string,
    extra: Record<string, string>,
  ): Promise<Response> | Response {
    if (site.siteMode === "spa" && (!hasExtension(path) || (req.headers.get("accept") ?? "").includes("text/html"))) {
      const index = m.files.get("index.html") ?? m.files.get("index.htm");
      if (index) return serveFile(req, site, index, { cacheControl: cacheFor(index.contentType), extraHeaders: extra, conditional: true });
    }
    return notFoundPage(req, t, site, m, cacheFor, extra);
  }
}

function noSite(t: SiteTemplates, extra: Record<string, string>): Response {
  return pageResponse(t, 404, "No site here", messageBody("No site is published at this address", "Check the address, or ask the owner to publish it."), extra);
}

/**
 * Is there content at this path (Netlify's shadowing: then only forced rules apply)? A file, a
 * folder's index page, or the page clean URLs would serve. A folder with no index page is not
 * content: a rule is more specific than Pier's Auto-Index listing.
 */
function contentExists(m: Manifest, path: string, dir: boolean, cleanUrls: boolean): boolean {
  const base = path === "" ? "" : `${path}/`;
  if (m.files.has(`${base}index.html`) || m.files.has(`${base}index.htm`)) return true;
  return !dir && (m.files.has(path) || (cleanUrls && m.files.has(`${path}.html`)));
}

/**
 * `_headers` on a site answer. Pier's protective headers were refused at build time; Set-Cookie
 * goes out on custom domains only (under the shared sites domain it could shadow another site's
 * or Pier's own cookies); a gated site stays uncacheable by shared caches whatever the file says;
 * the preview's noindex header is put back last.
 */
export function withSiteHeaders(
  res: Response,
  changes: Map<string, string | null>,
  o: { custom: boolean; priv: boolean; extra: Record<string, string> },
): Response {
  applySiteHeaders(res.headers, { changes, ...o });
  return res;
}
