// The relay between serving workers and the primary (src/serving-workers.ts): what a worker does
// not answer itself (API, dashboard, uploads, form and gate posts) goes to the primary over a Unix
// socket in the data dir, with the client's address and scheme in headers only that socket trusts.
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Server } from "bun";
import { endBodyTimer, type RelayBody } from "./http/body-limit";

/** The request headers the primary's relay socket trusts (set by workers, never by clients). */
export const RELAY_PEER_HEADER = "x-pier-relay-peer";
export const RELAY_PROTO_HEADER = "x-pier-relay-proto";

export const relaySocketPath = (dataDir: string) => join(dataDir, "run", "relay.sock");

type Fetch = (req: Request, server: Server<unknown>) => Response | Promise<Response>;

/**
 * The primary's end of the relay: a Unix socket (in the data dir, which only Pier's user can
 * enter) where the client's address and scheme come from the worker's headers, then the same
 * handler as the public listeners.
 */
export function startRelay(socketPath: string, fetch: Fetch, idleTimeoutSeconds: number): Server<unknown> {
  // The socket's folder is Pier's user's alone even when the data dir around it is not (mkdir's
  // mode applies only when it creates the folder): the socket trusts the headers it is sent.
  mkdirSync(join(socketPath, ".."), { recursive: true, mode: 0o700 });
  chmodSync(join(socketPath, ".."), 0o700);
  rmSync(socketPath, { force: true });
  const relay: Server<unknown> = Bun.serve({
    unix: socketPath,
    maxRequestBodySize: 64 * 1024 ** 3,
    ...relayIdleTimeout(idleTimeoutSeconds),
    fetch(req, server) {
      const peer = req.headers.get(RELAY_PEER_HEADER) ?? "unknown";
      let forwarded = req;
      if (req.headers.get(RELAY_PROTO_HEADER) === "https") {
        // The scheme decides Secure cookies and HSTS: the worker saw an HTTPS request.
        forwarded = new Request(`https${req.url.slice(req.url.indexOf(":"))}`, req);
      }
      const withPeer = Object.create(server) as Server<unknown>;
      withPeer.requestIP = () => ({ address: peer, family: peer.includes(":") ? "IPv6" : "IPv4", port: 0 });
      withPeer.timeout = (r: Request, s: number) => server.timeout(r === forwarded ? req : r, s);
      return fetch(forwarded, withPeer);
    },
  });
  return relay;
}

/**
 * A relayed answer waits on its client as a direct one does: a download the visitor pauses is cut
 * after --idle-timeout, not after Bun's default 10 s (which reset it mid-body). Bun applies
 * `idleTimeout` to a Unix socket too; its types offer the option only with a port.
 */
const relayIdleTimeout = (seconds: number) => ({ idleTimeout: seconds }) as {};

/**
 * Bun's fetch sends at most 256 requests at once per process (`BUN_CONFIG_MAX_HTTP_REQUESTS`) and
 * queues the rest; every relayed request is one, held until its answer has passed on to the
 * client. The primary starts its workers with Bun's highest value (D265): the relay's own
 * bounds (bodies read before relaying, streamed relays capped, answers cut by --idle-timeout)
 * must be what runs out, not a limit that makes every later API request wait.
 */
export const RELAY_FETCH_ENV = { BUN_CONFIG_MAX_HTTP_REQUESTS: "65535" };

/**
 * Relays whose request body streams to the primary at once, per worker: storage PUTs and the
 * rare API body over the anonymous limit (D265). Beyond it a client is answered 503 with
 * Retry-After at once, so a flood of slow uploads stays a bound number of relay requests.
 */
export const MAX_STREAMED_RELAYS = 512;

/**
 * A worker's relay to the primary: the request as it came (method, headers, streamed body), the
 * client's address and scheme added; the answer passed back untouched (no decompression, no
 * redirect following). Each answer goes into `relayed`: the primary counted it already.
 * `read`: the body already read by the worker (src/http/server.ts), relayed instead of req's.
 */
export function relayToPrimary(socketPath: string, relayed: WeakSet<Response>, idleTimeoutSeconds: number) {
  let streaming = 0;
  return async (req: Request, server: Server<unknown>, ip: () => string, read?: RelayBody): Promise<Response> => {
    const url = new URL(req.url);
    const headers = withoutHopByHop(req.headers);
    headers.set(RELAY_PEER_HEADER, ip());
    headers.set(RELAY_PROTO_HEADER, url.protocol === "https:" ? "https" : "http");
    if (read?.bytes !== undefined) {
      // Sent with the length of what was read (no chunked framing).
      headers.delete("transfer-encoding");
      headers.delete("content-length");
    }
    const body = read ? (read.bytes ?? read.stream) : req.method !== "GET" && req.method !== "HEAD" ? req.body : null;
    const streamed = body instanceof ReadableStream;
    if (streamed && streaming >= MAX_STREAMED_RELAYS) {
      endBodyTimer(req, server, true, idleTimeoutSeconds);
      return new Response("Too many uploads and large requests in progress; try again in a moment.", {
        status: 503,
        headers: { "retry-after": "5", "content-type": "text/plain; charset=utf-8" },
      });
    }
    // The primary bounds streamed bodies and their pace (body-limit.ts, upload-stall.ts); this
    // socket must not cut a long upload first.
    if (streamed) {
      streaming++;
      server.timeout(req, 0);
    }
    try {
      const send = () =>
        fetch(`http://pier${url.pathname}${url.search}`, {
          unix: socketPath,
          method: req.method,
          headers,
          body: body ?? undefined,
          redirect: "manual",
          decompress: false,
          duplex: "half",
        } as RequestInit);
      const res = await withBacklogRetries(send, () => !streamed || !(body as ReadableStream).locked);
      relayed.add(res);
      // The timer switched off above comes back on. A body the primary refused: its relay
      // connection lingers, and so does the client's (a 408 comes with `Connection: close`).
      if (streamed) endBodyTimer(req, server, res.status >= 400, idleTimeoutSeconds);
      return res;
    } catch {
      // The body may still be arriving, and the timer is off: the same bounded linger.
      if (streamed) endBodyTimer(req, server, true, idleTimeoutSeconds);
      return new Response("Pier is restarting; try again in a moment.", {
        status: 503,
        headers: { "retry-after": "1", "content-type": "text/plain; charset=utf-8" },
      });
    } finally {
      if (streamed) streaming--;
    }
  };
}

/**
 * A Unix socket refuses a connection at once (EAGAIN) while its accept queue is full, where TCP
 * would retry: a burst of a few hundred relayed requests then got "restarting" answers although
 * the primary was there. Nothing was sent, so the request is tried again for up to about 2 s
 * (a streamed body only while fetch has not taken it).
 */
async function withBacklogRetries(send: () => Promise<Response>, mayRetry: () => boolean): Promise<Response> {
  const started = performance.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await send();
    } catch (e) {
      if ((e as { code?: string }).code !== "EAGAIN" || performance.now() - started > 2_000 || !mayRetry()) throw e;
      await Bun.sleep(Math.min(10 * 2 ** attempt, 200) * (0.5 + Math.random()));
    }
  }
}

/** Headers that belong to one connection (RFC 9110 §7.6.1). */
const HOP_BY_HOP = ["connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade", "http2-settings"];

/**
 * The client's headers for the relay, without those of its own connection: passed on, an
 * `Upgrade: websocket` made the relay hold the body back for a 101 that never comes. Headers the
 * client names in `Connection` are passed on, as nginx does: dropping them would let a client
 * strip Host or anything else the primary reads.
 */
export function withoutHopByHop(incoming: Headers): Headers {
  const headers = new Headers(incoming);
  for (const name of HOP_BY_HOP) headers.delete(name);
  return headers;
}
