// Analytics on the site server: every answer of a live site whose owner has not turned counting
// off is recorded. The request pays for a few stores into preallocated arrays and a cached bot
// lookup; a person's hit also for the client address (src/features/analytics/recorder.ts does
// the rest off the request).
import type { Deps } from "../core/context";
import { classify, isDownloadPath } from "../features/analytics";
import type { Site } from "./directory";

export interface CountedRequest {
  req: Request;
  site: Site;
  /** The site host's first label. */
  label: string;
  pathname: string;
  res: Response;
  /** The deploy file's content type when the handler knows it (saves reading the answer's headers). */
  fileType: string | null;
  ip: () => string;
}

export function countHit(deps: Deps, h: CountedRequest): void {
  const { req, res, pathname } = h;
  const method = req.method;
  if (method !== "GET" && method !== "HEAD") return;
  if (pathname.startsWith("/_pier/")) return;
  const status = res.status;
  const kind = classify(status, status >= 200 && status < 300 ? (h.fileType ?? res.headers.get("content-type")) : null, pathname);
  if (kind === null) return;
  try {
    const analytics = deps.analytics;
    const headers = req.headers;
    const userAgent = headers.get("user-agent") ?? "";
    const bot = analytics.botOf(userAgent);
    const person = bot === null;
    analytics.hit(
      analytics.now(),
      h.site.id,
      h.label,
      pathname,
      kind,
      // A download is a whole non-HTML file handed out (a resumed range is the same download).
      kind === "asset" && status === 200 && method === "GET" && isDownloadPath(pathname),
      // Only a person's page view lists its referrer; only a person is a visitor with a country.
      person && kind === "page" ? headers.get("referer") : null,
      userAgent,
      bot,
      person ? h.ip() : "",
    );
  } catch (e) {
    deps.log.error("analytics: hit not counted", { error: (e as Error).message }); // never the visitor's problem
  }
}
