// What one served request means for analytics: page, asset or not found; a download or not; the
// referrer as a host; the bot's readable name. Pure functions of the request and response.
import { isbotMatch } from "isbot";

export type HitKind = "page" | "asset" | "not_found";

/** Non-HTML files people download on purpose (not the CSS, scripts and images a page pulls in). */
export const DOWNLOAD_EXTENSIONS: ReadonlySet<string> = new Set(
  "pdf zip gz tgz tar bz2 xz 7z rar dmg exe msi deb rpm apk iso img epub mobi csv tsv xls xlsx doc docx ppt pptx odt ods odp rtf mp3 wav flac ogg m4a mp4 mov avi mkv webm wasm bin jar whl".split(
    " ",
  ),
);

/**
 * The last segment's extension, lower-case; "" for none and for a dotfile (`/.well-known`).
 * A scan from the end: two lastIndexOf calls cost several times more per hit under Bun.
 */
export function extensionOf(path: string): string {
  for (let i = path.length - 1; i >= 0; i--) {
    const c = path.charCodeAt(i);
    if (c === 47 /* / */) return "";
    if (c === 46 /* . */) return i === 0 || i === path.length - 1 || path.charCodeAt(i - 1) === 47 ? "" : path.slice(i + 1).toLowerCase();
  }
  return "";
}

/** The download extensions (all of 2-4 ASCII letters or digits) packed into numbers: 7 bits a character and the length. */
const packExtension = (ext: string): number => {
  let n = ext.length;
  for (let i = 0; i < ext.length; i++) n = n * 128 + ext.charCodeAt(i);
  return n;
};
const DOWNLOAD_CODES = new Set([...DOWNLOAD_EXTENSIONS].map(packExtension));

/**
 * Whether the path's extension is a download's: extensionOf's rule without building the
 * extension string (asked for every asset a site hands out; the string, its lower-case copy and
 * its hash cost more than the rest of the hit). Anything but ASCII takes extensionOf's way.
 */
export function isDownloadPath(path: string): boolean {
  const last = path.length - 1;
  for (let i = last; i >= 0 && i >= last - 4; i--) {
    const c = path.charCodeAt(i);
    if (c === 47 /* / */) return false;
    if (c >= 128) return DOWNLOAD_EXTENSIONS.has(extensionOf(path));
    if (c !== 46 /* . */) continue;
    if (i === 0 || i === last || path.charCodeAt(i - 1) === 47) return false;
    let n = last - i;
    for (let j = i + 1; j <= last; j++) {
      const d = path.charCodeAt(j);
      n = n * 128 + (d >= 65 && d <= 90 ? d + 32 : d);
    }
    return DOWNLOAD_CODES.has(n);
  }
  // No dot among the last five characters: no extension, or one longer than any download's.
  return false;
}

/** A path that names a page rather than a file: no extension, or .html/.htm. */
export function isPagePath(path: string): boolean {
  const ext = extensionOf(path);
  return ext === "" || ext === "html" || ext === "htm";
}

/**
 * Whether a person's hit makes them a visitor (GoatCounter's and Plausible's rule): a page, a
 * download, or a page path not found (a broken link followed to the site's 404 page). A page's
 * assets come with the page, which already counted its reader, and a hotlinked image or a missing
 * favicon is not a visit; such hits never need the client address.
 */
export function isVisit(kind: HitKind, download: boolean, path: string): boolean {
  return kind === "page" || download || (kind === "not_found" && isPagePath(path));
}

/**
 * How a response counts: 2xx/304 HTML is a page (also a revalidated page: a 304 has no type, so
 * the path decides), any other 2xx/304 an asset, 404 not found; redirects, gates and errors are
 * not hits (null).
 */
export function classify(status: number, contentType: string | null, path: string): HitKind | null {
  if (status === 404) return "not_found";
  if (status === 304) return isPagePath(path) ? "page" : "asset";
  if (status < 200 || status > 299) return null;
  return contentType !== null && contentType.startsWith("text/html") ? "page" : "asset";
}

/**
 * The referrer's host, lower-case, without "www." (one site, not two); null for none or an
 * unparsable value ("direct"), and "own" for the site's own host (a click inside the site).
 */
export function referrerHost(referer: string | null, ownHost: string): string | null | "own" {
  if (!referer) return null;
  let host: string;
  try {
    host = new URL(referer.slice(0, 2048)).hostname.toLowerCase();
  } catch {
    return null;
  }
  if (host === "") return null;
  if (host === ownHost) return "own";
  if (host.startsWith("www.")) host = host.slice(4);
  return host.slice(0, 253);
}

// isbot says whether a user agent is a bot, but its match is often only "bot" or "Google": the
// common crawlers get their own names, checked first (order matters: specific before generic).
const NAMED_BOTS: [RegExp, string][] = [
  [/Googlebot|Google-InspectionTool|Storebot-Google|AdsBot-Google/i, "Googlebot"],
  [/bingbot|BingPreview|adidxbot/i, "bingbot"],
  [/Applebot/i, "Applebot"],
  [/DuckDuckBot|DuckAssistBot/i, "DuckDuckBot"],
  [/YandexBot|YandexImages|Yandex\w*bot/i, "YandexBot"],
  [/Baiduspider/i, "Baiduspider"],
  [/GPTBot|ChatGPT-User|OAI-SearchBot/i, "GPTBot"],
  [/ClaudeBot|Claude-User|Claude-SearchBot|anthropic-ai/i, "ClaudeBot"],
  [/PerplexityBot|Perplexity-User/i, "PerplexityBot"],
  [/CCBot/i, "CCBot"],
  [/Bytespider/i, "Bytespider"],
  [/meta-externalagent|facebookexternalhit|facebookcatalog/i, "facebookexternalhit"],
  [/Twitterbot/i, "Twitterbot"],
  [/LinkedInBot/i, "LinkedInBot"],
  [/Slackbot/i, "Slackbot"],
  [/Discordbot/i, "Discordbot"],
  [/TelegramBot/i, "TelegramBot"],
  [/WhatsApp/i, "WhatsApp"],
  [/AhrefsBot/i, "AhrefsBot"],
  [/SemrushBot/i, "SemrushBot"],
  [/MJ12bot/i, "MJ12bot"],
  [/DotBot/i, "DotBot"],
  [/PetalBot/i, "PetalBot"],
  [/SeznamBot/i, "SeznamBot"],
  [/UptimeRobot/i, "UptimeRobot"],
  [/HeadlessChrome/i, "HeadlessChrome"],
  [/^curl\//i, "curl"],
  [/^Wget\//i, "Wget"],
  [/python-requests|python-urllib|aiohttp|httpx/i, "Python"],
  [/Go-http-client/i, "Go-http-client"],
  [/^node-fetch|^undici|^axios/i, "Node.js"],
];

/** A readable bot name, or null for a browser. An empty user agent is a script, not a person. */
export function botName(userAgent: string): string | null {
  if (userAgent === "") return "(no user agent)";
  for (const [re, name] of NAMED_BOTS) if (re.test(userAgent)) return name;
  const match = isbotMatch(userAgent);
  if (match === null) return null;
  return match.replace(/[^A-Za-z0-9 ._-]/g, "").slice(0, 60) || "other";
}

/** User agents repeat a lot: remember recent answers (a plain Map, emptied when full: cheaper per hit than an LRU). */
export function cachedBotNames(max = 5_000): (userAgent: string) => string | null {
  const cache = new Map<string, string | null>();
  return (ua) => {
    const hit = cache.get(ua);
    if (hit !== undefined) return hit;
    if (cache.size >= max) cache.clear();
    const name = botName(ua);
    cache.set(ua, name);
    return name;
  };
}

/** A request path as people read it: percent-decoded when that is valid UTF-8, control bytes replaced. */
const PLAIN_PATH = /^[\x20-\x24\x26-\x7e]{0,512}$/;
export function readablePath(raw: string): string {
  if (PLAIN_PATH.test(raw)) return raw; // the common case: nothing to decode or replace
  let path = raw;
  if (raw.includes("%")) {
    try {
      path = decodeURIComponent(raw);
    } catch {
      // not valid percent-encoded UTF-8: keep it encoded
    }
  }
  return path.replace(/[\u0000-\u001f\u007f]/g, "\uFFFD").slice(0, 512);
}
