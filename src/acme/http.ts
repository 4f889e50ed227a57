// What automatic HTTPS adds in front of every request on the HTTP and HTTPS listeners: HTTP-01
// answers on any host, the on-demand start of an order for a host seen for the first time, and
// the 308 to HTTPS for hosts that have a certificate (never for the challenge path: the CA
// fetches it over plain HTTP, and renewals must keep working).
import type { Server } from "bun";
import type { Deps } from "../core/context";
import type { HostKind } from "../http/host-router";
import type { Forward } from "../http/server";
import { apiHostname } from "./host-policy";
import type { CertificateManager } from "./manager";

export const CHALLENGE_PREFIX = "/.well-known/acme-challenge/";

export type AcmeFront = (req: Request, host: HostKind, server: Server<unknown>, ip: () => string) => Response | Promise<Response> | null;

/**
 * `relay`: a serving worker's way to the primary. The CA's validation request reaches whichever
 * process the kernel gives the connection, but the answers live in the process running the
 * order (the primary), so a worker passes the challenge path on.
 */
export function acmeFront(deps: Deps, manager: CertificateManager, relay: Forward | null = null): AcmeFront {
  const apiHost = apiHostname(deps);
  const sitesSuffix = `.${deps.urls.sitesDomain}`;
  return (req, host, server, ip) => {
    const url = req.url;
    const pathStart = url.indexOf("/", url.indexOf("//") + 2);
    const pathAndQuery = pathStart === -1 ? "/" : url.slice(pathStart);
    if (pathAndQuery.startsWith(CHALLENGE_PREFIX)) {
      if (relay) return relay(req, server, ip);
      return answerChallenge(manager, pathAndQuery.slice(CHALLENGE_PREFIX.length));
    }
    const name = host.kind === "api" ? apiHost : host.kind === "site" ? host.label + sitesSuffix : host.kind === "custom" ? host.hostname : null;
    if (name === null) return null;
    manager.noteHost(name);
    if (url.startsWith("http:") && manager.certificateFor(name) && manager.httpsPort !== null) {
      const port = manager.httpsPort === 443 ? "" : `:${manager.httpsPort}`;
      return new Response(null, { status: 308, headers: { location: `https://${name}${port}${pathAndQuery}`, "cache-control": "no-store" } });
    }
    return null;
  };
}

function answerChallenge(manager: CertificateManager, token: string): Response {
  const keyAuthorization = /^[A-Za-z0-9_-]{1,256}$/.test(token) ? manager.challenges.get(token) : undefined;
  if (keyAuthorization === undefined) return new Response("Not found\n", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
  return new Response(keyAuthorization, { headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } });
}

/** HTTPS responses carry Strict-Transport-Security when --hsts sets a max-age. */
export function withHsts(fetch: (req: Request, server: import("bun").Server<unknown>) => Response | Promise<Response>, maxAge: number | null): typeof fetch {
  if (maxAge === null) return fetch;
  const value = `max-age=${maxAge}`;
  const add = (res: Response): Response => {
    try {
      res.headers.set("strict-transport-security", value);
      return res;
    } catch {
      const copy = new Response(res.body, res);
      copy.headers.set("strict-transport-security", value);
      return copy;
    }
  };
  return (req, server) => {
    const res = fetch(req, server);
    return res instanceof Promise ? res.then(add) : add(res);
  };
}
