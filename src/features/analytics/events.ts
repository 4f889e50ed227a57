// Client events on site hosts: GET /_pier/events.js (the script a site includes) and
// POST /_pier/event (its beacons). Every answer is a success for the visitor: a disabled site,
// a malformed beacon, a bot's beacon or a client over its rate simply is not counted.
import type { Deps } from "../../core/context";
import { addressKey } from "../../core/guess-limits";
import { TokenBuckets } from "../../core/token-buckets";
import { siteAssets } from "../../sites-assets.gen";

/** Beacons per client (IP) and site per minute; a page rarely has a reason to send more. */
export const EVENTS_PER_MINUTE = 30;
const BODY_MAX = 512;
const TYPES = new Set(["click", "download"]);
const SCRIPT_HEADERS = {
  "content-type": "text/javascript; charset=utf-8",
  "cache-control": "public, max-age=300",
  "x-content-type-options": "nosniff",
};
const OFF_SCRIPT = "// Pier client events are turned off for this site.\n";

export class ClientEvents {
  private script: string | null = null;
  private readonly limiter = new TokenBuckets(EVENTS_PER_MINUTE, 50_000);

  constructor(private readonly deps: Deps) {}

  /** The script, or a comment when the owner turned client events off (so pages still load it cleanly). */
  async scriptResponse(enabled: boolean, extraHeaders: Record<string, string>): Promise<Response> {
    this.script ??= await Bun.file(siteAssets["site/events.js"]!).text();
    return new Response(enabled ? this.script : OFF_SCRIPT, { headers: { ...SCRIPT_HEADERS, ...extraHeaders } });
  }

  /** `admitted`: the visitor may see the site (a gated site's events come from behind its gate). */
  async receive(req: Request, site: { id: string; clientEvents: boolean }, ip: string, admitted: boolean): Promise<Response> {
    const done = new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
    if (!site.clientEvents || !admitted) return done;
    // Clicks and downloads describe people, as page views do: a bot's (a headless crawler runs the
    // script too) is not counted, by the same user-agent lookup that keeps bots out of views.
    if (this.deps.analytics.botOf(req.headers.get("user-agent") ?? "") !== null) return done;
    if (Number(req.headers.get("content-length") ?? "0") > BODY_MAX) return done;
    const now = this.deps.clock.now().getTime();
    // Per client: an IPv6 /64 is one, as for every other per-address limit.
    if (this.limiter.take(`${site.id} ${addressKey(ip)}`, now) > 0) return done;
    let type: unknown;
    try {
      const text = await req.text();
      if (text.length > BODY_MAX) return done;
      type = (JSON.parse(text) as { type?: unknown }).type;
    } catch {
      return done;
    }
    if (typeof type === "string" && TYPES.has(type)) this.deps.analytics.event(site.id, type as "click" | "download", now);
    return done;
  }
}
