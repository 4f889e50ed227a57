// What a site path answers once the gates let the request through: deploy files by Pier's own
// rules (index pages, Auto-Index, clean URLs, 404 and SPA fallbacks), the targets of `_redirects`
// rewrites, and redirects. Every function takes the request's context (SiteRequest) instead of a
// list of parameters.
import type { FormWidget } from "../features/forms";
import type { DeployFile } from "../features/publish";
import { clientVersion } from "../core/version";
import { freshRequestId } from "../http/request-info";
import { AUTOINDEX_CSP, type AutoIndex } from "./autoindex";
import type { Manifest, Site } from "./directory";
import { applySiteHeaders, markComplete, MEMORY_FILE_LIMIT, type FileServer, type ServeOptions, type SiteHeaderSet } from "./files";
import { noneMatch } from "./negotiate";
import { messageBody, pageResponse, type SiteTemplates } from "./pages";
import { hasExtension, splitUrl } from "./paths";

/** HTML is always revalidated (ETag makes that a 304); other files are fresh for 5 minutes,
 * then revalidated: file names are not content-hashed, so "immutable" would serve stale assets. */
export const CACHE_HTML = "public, no-cache";
export const CACHE_ASSET = "public, max-age=300, must-revalidate";
/** Gated sites must never be stored by shared caches. */
export const CACHE_PRIVATE = "private, no-cache";

/** One request to a live site, as far as the site server has worked it out. */
export interface SiteRequest {
  req: Request;
  t: SiteTemplates;
  site: Site;
  m: Manifest;
  /** The decoded site path ("" for the root, no leading slash) and whether it named a folder. */
  path: string;
  dir: boolean;
  /** The request's own path and query, as sent. */
  pathname: string;
  search: string;
  custom: boolean;
  /** A gated site: answers are private to the browser. */
  priv: boolean;
  /** A module-level constant (the preview's noindex header, or none): caches key on its identity. */
  extra: Record<string, string>;
  /** The path's `_headers` set (interned), baked into the answer's prepared headers. */
  siteHeaders: SiteHeaderSet | null;
  /** The content type of the deploy file answered (analytics reads it instead of the answer's headers). */
  fileType: string | null;
}

export class SiteContent {
  /** Redirect answers (status, caching, Pier's version, `_headers`), prepared per header set and status. */
  private readonly redirects = new WeakMap<object, Map<string, Response>>();

  constructor(
    private readonly files: FileServer,
    private readonly autoIndex: AutoIndex,
    private readonly formWidget: FormWidget,
  ) {}

  cacheFor(c: SiteRequest, type: string): string {
    return c.priv ? CACHE_PRIVATE : type.startsWith("text/html") ? CACHE_HTML : CACHE_ASSET;
  }

  /** A page's (or a redirect's) cache policy: private behind a gate. */
  pageCache(c: SiteRequest): string {
    return this.cacheFor(c, "text/html");
  }

  /** The deploy's files at the path by Pier's own rules: index pages, Auto-Index, clean URLs, 404/SPA. */
  serve(c: SiteRequest): Promise<Response> | Response {
    const { m, path } = c;
    if (c.dir) {
      const base = path === "" ? "" : `${path}/`;
      const index = m.files.get(`${base}index.html`) ?? m.files.get(`${base}index.htm`);
      if (index) return this.file(c, index, 200, true);
      if (m.dirs.has(path)) return this.listing(c);
      return this.missing(c);
    }
    const file = m.files.get(path);
    if (file) {
      // Clean URLs: /about.html moves to /about, which serves the same file (when nothing else is there).
      if (c.site.cleanUrls && c.pathname.endsWith(".html") && path.endsWith(".html")) {
        const bare = path.slice(0, -".html".length);
        if (bare !== "" && !bare.endsWith("/") && bare.slice(bare.lastIndexOf("/") + 1) !== "index" && !m.files.has(bare) && !m.dirs.has(bare))
          return this.redirect(c, 308, `${c.pathname.slice(0, -".html".length)}${c.search}`);
      }
      return this.file(c, file, 200, true);
    }
    // A gated site's folder and page names are not for shared caches either.
    if (m.dirs.has(path)) return this.redirect(c, 301, `${c.pathname}/${c.search}`);
    const page = c.site.cleanUrls ? m.files.get(`${path}.html`) : undefined;
    if (page) return this.file(c, page, 200, true);
    return this.missing(c);
  }

  /** The file a 200 or 404 rule names (a folder serves its index page); nothing there is a 404. */
  serveTarget(c: SiteRequest, path: string, dir: boolean, status: number): Promise<Response> | Response {
    const { m } = c;
    const base = path === "" ? "" : `${path}/`;
    const file =
      (dir ? undefined : (m.files.get(path) ?? (c.site.cleanUrls ? m.files.get(`${path}.html`) : undefined))) ??
      m.files.get(`${base}index.html`) ??
      m.files.get(`${base}index.htm`);
    if (!file) return status === 404 ? this.notFoundPage(c) : this.missing(c);
    return status === 404 ? this.file(c, file, 404, false) : this.file(c, file, 200, true);
  }

  /**
   * A redirect cloned from an answer prepared per header set and status: only the Location and
   * the request id are per request, and the answer counts as complete (the listener adds nothing).
   */
  redirect(c: SiteRequest, status: number, location: string): Response {
    const cacheControl = this.pageCache(c);
    const owner: object = c.siteHeaders ?? c.extra;
    let byStatus = this.redirects.get(owner);
    if (byStatus === undefined) this.redirects.set(owner, (byStatus = new Map()));
    const key = `${status}|${cacheControl}`;
    let prepared = byStatus.get(key);
    if (prepared === undefined) {
      const headers = new Headers({ "cache-control": cacheControl, "x-pier-client-version": clientVersion, ...c.extra });
      if (c.siteHeaders !== null) applySiteHeaders(headers, c.siteHeaders);
      byStatus.set(key, (prepared = new Response(null, { status, headers })));
    }
    const res = prepared.clone();
    res.headers.set("location", location);
    res.headers.set("x-request-id", freshRequestId());
    return markComplete(res);
  }

  /**
   * Nothing at this path. spa: deep links get the root index page (200) when the last segment
   * has no extension or the client asks for HTML (a browser navigation); a missing /app.js stays
   * a 404 so a broken asset never turns into HTML. Otherwise the site's 404.html, or Pier's page.
   */
  missing(c: SiteRequest): Promise<Response> | Response {
    if (c.site.siteMode === "spa" && (!hasExtension(c.path) || (c.req.headers.get("accept") ?? "").includes("text/html"))) {
      const index = c.m.files.get("index.html") ?? c.m.files.get("index.htm");
      if (index) return this.file(c, index, 200, true);
    }
    return this.notFoundPage(c);
  }

  private notFoundPage(c: SiteRequest): Promise<Response> | Response {
    const page404 = c.m.files.get("404.html");
    // The site's own 404 page is an HTML page like any other: it gets the site's hosted forms.
    if (page404) return this.file(c, page404, 404, false);
    return pageResponse(c.t, 404, "Not found", messageBody("Page not found", "There is no page at this address."), c.extra);
  }

  /** A folder's Auto-Index. Its ETag is known before the page is built: a revalidation builds nothing. */
  private listing(c: SiteRequest): Promise<Response> | Response {
    const etag = this.autoIndex.etag(c.t, c.site, c.m, c.path);
    const headers = {
      "content-type": "text/html; charset=utf-8",
      "cache-control": this.pageCache(c),
      etag,
      "content-security-policy": AUTOINDEX_CSP,
      "x-content-type-options": "nosniff",
      ...c.extra,
    };
    if (noneMatch(c.req.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
    return this.autoIndex.render(c.t, c.site, c.m, c.path, etag).then((page) => new Response(page.html, { headers: { ...headers, etag: page.etag } }));
  }

  /**
   * A deploy file; an HTML page of a site with hosted forms gets them injected (src/features/forms/
   * widget.ts). Pages up to MEMORY_FILE_LIMIT are read whole and rewritten; larger ones are
   * rewritten as they stream, so no view holds a whole large page (D269). Either way they go out
   * without ETag, range or precompressed variant, for GET and HEAD alike; sites without hosted
   * forms keep the plain (sendfile, 304) path.
   */
  private file(c: SiteRequest, f: DeployFile, status: number, conditional: boolean): Response | Promise<Response> {
    const siteHeaders = c.siteHeaders;
    const o: ServeOptions = { cacheControl: this.cacheFor(c, f.contentType), extraHeaders: c.extra, conditional, siteHeaders };
    if (status !== 200) o.status = status;
    // `_headers` may set Content-Type: analytics then reads the answer's own.
    c.fileType = siteHeaders === null || !siteHeaders.changes.has("content-type") ? f.contentType : null;
    const req = c.req;
    // HEAD is built like GET (the server drops the body): its ETag, length and caching must be GET's.
    const method = req.method;
    if ((method !== "GET" && method !== "HEAD") || !f.contentType.startsWith("text/html") || !this.formWidget.active(c.site))
      return this.files.serve(req, f, o);
    const plain = new Request(req.url, { method, headers: { host: req.headers.get("host") ?? "" } });
    return Promise.resolve(this.files.serve(plain, f, { ...o, conditional: false })).then(async (res) => {
      const pagePath = splitUrl(req.url).pathname;
      // Back from a form posted without JavaScript (visitor.ts redirects with this).
      const sent = /(?:^|[?&])pier_form=sent(?:&|$)/.test(c.search);
      let body: BodyInit | null;
      if (f.size > MEMORY_FILE_LIMIT) {
        // Too large to hold once per view (many views of a 200 MB page would hold it that many
        // times): the macros are filled as the file streams, the floating forms go after its end.
        const transform = res.body === null ? null : this.formWidget.injectStream(c.site, pagePath, sent);
        body = transform === null ? res.body : res.body!.pipeThrough(transform);
      } else {
        body = this.formWidget.inject(c.site, await res.text(), pagePath, sent);
      }
      const headers = new Headers(res.headers);
      for (const h of ["etag", "content-length", "accept-ranges", "last-modified", "content-encoding", "vary"]) headers.delete(h);
      // A site CSP (from _headers, baked into the file's headers) is widened for the forms' own needs.
      const csp = headers.get("content-security-policy");
      if (csp) headers.set("content-security-policy", this.formWidget.widenCsp(c.site, csp));
      // Each view carries a fresh fill timer (valid 24 h, D234): a copy kept longer by a cache, as
      // a long max-age from `_headers` would allow, would refuse every post.
      headers.set("cache-control", this.pageCache(c));
      return markComplete(new Response(body, { status: res.status, headers }));
    });
  }
}

/**
 * Is there content at this path (Netlify's shadowing: then only forced rules apply)? A file, a
 * folder's index page, or the page clean URLs would serve. A folder with no index page is not
 * content: a rule is more specific than Pier's Auto-Index listing.
 */
export function contentExists(m: Manifest, path: string, dir: boolean, cleanUrls: boolean): boolean {
  if (!dir && m.files.has(path)) return true;
  const base = path === "" ? "" : `${path}/`;
  if (m.files.has(`${base}index.html`) || m.files.has(`${base}index.htm`)) return true;
  return !dir && cleanUrls && m.files.has(`${path}.html`);
}
