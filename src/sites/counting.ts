// Analytics on the site server: every answer of a live site whose owner has not turned counting
// off is recorded. The request pays for a cached bot lookup and a few increments; a person's
// visit (a page, a download, a page path not found) also for the client address, which assets and
// bots never ask for, and a few stores into preallocated arrays (src/features/analytics/recorder.ts
// folds those off the request).
import type { Deps } from "../core/context";
import { classify, isDownloadPath, isVisit } from "../features/analytics";
import type { Site } from "./directory";

/**
 * `label` is the site host's first label, or a custom domain's whole hostname (the site's own host
 * either way); `fileType` the deploy file's content type when the handler knows it (saves reading
 * the answer's headers). Plain arguments, not an object: this runs for every counted request.
 */
export function countHit(
  deps: Deps,
  req: Request,
  res: Response,
  site: Site,
  label: string,
  pathname: string,
  fileType: string | null,
  ip: () => string,
): void {
  const method = req.method;
  if (method !== "GET" && method !== "HEAD") return;
  if (pathname.startsWith("/_pier/")) return;
  const status = res.status;
  const kind = classify(status, status >= 200 && status < 300 ? (fileType ?? res.headers.get("content-type")) : null, pathname);
  if (kind === null) return;
  try {
    const analytics = deps.analytics;
    const headers = req.headers;
    const userAgent = headers.get("user-agent") ?? "";
    const bot = analytics.botOf(userAgent);
    // A download is a whole non-HTML file handed out (a resumed range is the same download).
    const download = kind === "asset" && status === 200 && method === "GET" && isDownloadPath(pathname);
    // Only a person's visit reads the address (a system call): the visitor hash and the country.
    const visit = bot === null && isVisit(kind, download, pathname);
    analytics.hit(
      analytics.now(),
      site.id,
      label,
      pathname,
      kind,
      download,
      // Only a person's page view lists its referrer.
      visit && kind === "page" ? headers.get("referer") : null,
      userAgent,
      bot,
      visit ? ip() : "",
    );
  } catch (e) {
    deps.log.error("analytics: hit not counted", { error: (e as Error).message }); // never the visitor's problem
  }
}
