// isomorphic-git's HTTP client for a sync: Bun's fetch bounded in time and bytes, no redirects,
// the operator's extra CA, public addresses only unless the operator allows others (connecting
// to the address that was checked), and the
// fetched pack's inflated sizes checked before isomorphic-git unpacks it.
import type { HttpClient } from "isomorphic-git";
import { pinnedRequest, publicAddressOf, type HostLookup } from "./addresses";
import { SyncFailure } from "./failure";
import { checkPackResponse, pushTooLarge, type SyncLimits } from "./limits";
import type { Traffic } from "./remote";
import { advertisesThinPack, askThinPack } from "./thin-pack";

async function collect(body: AsyncIterableIterator<Uint8Array> | Uint8Array[] | undefined, limits: SyncLimits): Promise<Uint8Array | undefined> {
  if (!body) return undefined;
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    // A push's pack: the engine checked the files' sizes; this bounds what else isomorphic-git adds.
    if (size > limits.totalBytes) throw pushTooLarge(limits);
    parts.push(chunk);
  }
  return Buffer.concat(parts);
}

/**
 * isomorphic-git's HTTP client interface on Bun's fetch: one deadline for the whole exchange
 * (headers and body), a byte cap on what the remote sends, the operator's extra CA, and no
 * redirects (a credential must never follow a redirect to another host).
 */
export function boundedHttp(opts: {
  timeoutMs: number;
  ca: string[] | null;
  traffic: Traffic;
  /** What the sync may receive and unpack: `totalBytes` caps the bytes a remote sends too. */
  limits: SyncLimits;
  /** Refuse loopback, private and link-local addresses (a user's URL must not reach inside). */
  publicOnly?: boolean;
  /** How a public-only client resolves the remote's name (the system resolver when unset). */
  lookup?: HostLookup;
}): HttpClient {
  // Learnt from the server's upload-pack advertisement (each sync has its own client).
  let thinPack = false;
  return {
    async request({ url, method = "GET", headers = {}, body }) {
      const target = opts.publicOnly ? pinnedRequest(url, await publicAddressOf(url, opts.lookup)) : { url, host: null, serverName: null };
      const collected = await collect(body as AsyncIterableIterator<Uint8Array> | undefined, opts.limits);
      const uploadPack = method === "POST" && url.endsWith("/git-upload-pack");
      const payload = uploadPack && thinPack && collected ? askThinPack(collected) : collected;
      opts.traffic.sent += payload?.length ?? 0;
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), opts.timeoutMs);
      try {
        let res: Response;
        try {
          const tls = { ...(opts.ca ? { ca: opts.ca } : {}), ...(target.serverName ? { serverName: target.serverName } : {}) };
          res = await fetch(target.url, {
            method,
            headers: target.host ? { ...headers, host: target.host } : headers,
            body: payload,
            signal: controller.signal,
            redirect: "manual",
            ...(Object.keys(tls).length ? { tls } : {}),
          } as RequestInit);
        } catch (e) {
          if (controller.signal.aborted) throw new SyncFailure("remote_timeout", `The git server did not answer within ${opts.timeoutMs / 1000} s.`);
          throw new SyncFailure("remote_unreachable", `The git server could not be reached: ${(e as Error).message}`);
        }
        if (res.status >= 300 && res.status < 400)
          // Not the Location itself: nothing a remote sends is copied into the error a user reads.
          throw new SyncFailure("remote_redirect", "The git server answered with a redirect; use the final repository URL.");
        const chunks: Uint8Array[] = [];
        let received = 0;
        try {
          for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
            received += chunk.length;
            opts.traffic.received += chunk.length;
            if (received > opts.limits.totalBytes) {
              controller.abort();
              throw new SyncFailure(
                "repository_too_large",
                `The repository is larger than this instance accepts (${Math.round(opts.limits.totalBytes / 1048576)} MiB).`,
              );
            }
            chunks.push(chunk);
          }
        } catch (e) {
          if (e instanceof SyncFailure) throw e;
          if (controller.signal.aborted) throw new SyncFailure("remote_timeout", `The git server did not finish answering within ${opts.timeoutMs / 1000} s.`);
          throw new SyncFailure("remote_unreachable", `The git server's answer broke off: ${(e as Error).message}`);
        }
        const responseHeaders: Record<string, string> = {};
        res.headers.forEach((v, k) => {
          responseHeaders[k] = v;
        });
        const all = Buffer.concat(chunks);
        // The pack's inflated sizes are checked before isomorphic-git inflates (and indexes) it.
        if (uploadPack && res.ok) checkPackResponse(all, opts.limits);
        if (method === "GET" && url.endsWith("/info/refs?service=git-upload-pack") && res.ok) thinPack = advertisesThinPack(all);
        return {
          url,
          method,
          statusCode: res.status,
          statusMessage: res.statusText,
          headers: responseHeaders,
          body: (async function* () {
            yield all;
          })(),
        };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
