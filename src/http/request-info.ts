// Per-request facts captured by the outer listener (Elysia's context has no server when it is
// called through app.fetch): the client IP and the request id.
import { addressKey } from "../core/guess-limits";
import { randomToken } from "../core/ids";

const ips = new WeakMap<Request, string | (() => string)>();
const ids = new WeakMap<Request, string>();

/** `ip` may be a function: it is then called once, on first use (most requests never ask). */
export function setClientIp(req: Request, ip: string | (() => string)): void {
  ips.set(req, ip);
}

export function clientIp(req: Request): string {
  const v = ips.get(req);
  if (typeof v !== "function") return v ?? "127.0.0.1";
  const ip = v();
  ips.set(req, ip);
  return ip;
}

/**
 * The client as a limit key: addressKey of its IP, so an IPv6 client counts once for its whole
 * /64 (it usually holds all of it) and every spelling of one address is one key.
 */
export const clientKey = (req: Request): string => addressKey(clientIp(req));

export function requestId(req: Request): string {
  let id = ids.get(req);
  if (!id) {
    id = nextRequestId();
    ids.set(req, id);
  }
  return id;
}

/**
 * Whether a post was sent by script and wants a JSON answer (a JSON body, or Accept naming JSON
 * and not HTML); a plain form post from a browser gets an HTML page instead.
 */
export function wantsJson(req: Request): boolean {
  const type = req.headers.get("content-type") ?? "";
  const accept = req.headers.get("accept") ?? "";
  return type.startsWith("application/json") || (accept.includes("application/json") && !accept.includes("text/html"));
}

export const isMutation = (method: string): boolean => !["GET", "HEAD", "OPTIONS"].includes(method.toUpperCase());

// Request ids only need to be unique (they name a request in logs and error reports; they grant
// nothing): a random per-process prefix (each serving worker has its own) and a base-32 counter,
// 20 lowercase characters like other ids. Drawing 20 random characters per request showed in the
// site server's profile.
const REQUEST_ID_PREFIX = randomToken(9);
let requestCounter = 0;

/**
 * A new id that is not remembered for the request: for answers complete in one step (a cached
 * site file, a redirect) whose id only goes into their own header, which the access log reads.
 */
export const freshRequestId = (): string => nextRequestId();

// The counter's last four base-32 digits come from a table of digit pairs and the rest is
// formatted only when it changes (every 2^20 ids): toString + padStart per request showed in the
// site server's profile.
const DIGITS = "0123456789abcdefghijklmnopqrstuv";
const PAIRS = Array.from({ length: 1024 }, (_, i) => DIGITS[i >> 5]! + DIGITS[i & 31]!);
let highPart = -1;
let highPrefix = "";

function nextRequestId(): string {
  const n = requestCounter;
  requestCounter = n + 1 >= 32 ** 11 ? 0 : n + 1;
  const high = Math.floor(n / 1_048_576);
  if (high !== highPart) {
    highPart = high;
    highPrefix = `req_${REQUEST_ID_PREFIX}${high.toString(32).padStart(7, "0")}`;
  }
  const low = n % 1_048_576;
  return highPrefix + PAIRS[low >> 10]! + PAIRS[low & 1023]!;
}
