// Per-request facts captured by the outer listener (Elysia's context has no server when it is
// called through app.fetch): the client IP and the request id.
import { addressKey } from "../core/guess-limits";
import { newId } from "../core/ids";

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
    id = newId("req");
    ids.set(req, id);
  }
  return id;
}

export const isMutation = (method: string): boolean => !["GET", "HEAD", "OPTIONS"].includes(method.toUpperCase());
