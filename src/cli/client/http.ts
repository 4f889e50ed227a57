// The CLI's HTTP client: JSON in and out, the Pier envelope unwrapped, Retry-After honoured with
// bounded, jittered backoff (never retrying forever), and the client-version check.
import { clientVersion } from "../../core/version";

export class PierApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function api<T = any>(base: string, path: string, opts: { key?: string; method?: string; body?: unknown } = {}): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(base + path, {
      method: opts.method ?? "GET",
      headers: {
        accept: "application/json", "user-agent": `pier-cli/${clientVersion}`,
        ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
        ...(opts.body !== undefined ? { "content-type": "application/json" } : {}),
      },
      body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
    });
    const body = (await res.json().catch(() => null)) as { data?: T; error?: { code: string; message: string } } | null;
    if (res.ok && body && "data" in body) return body.data as T;
    const retryAfter = Number(res.headers.get("retry-after"));
    if ((res.status === 429 || res.status === 503) && attempt < 4 && retryAfter > 0 && retryAfter <= 60) {
      await sleep(retryAfter * 1000 + Math.random() * 500);
      continue;
    }
    throw new PierApiError(res.status, body?.error?.code ?? `HTTP_${res.status}`, body?.error?.message ?? `${res.status} ${res.statusText}`);
  }
}

/** -1, 0, 1 comparing dotted numeric versions (pre-release suffixes ignored). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+-]/).slice(0, 3).map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split(/[.+-]/).slice(0, 3).map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < 3; i++) if (pa[i]! !== pb[i]!) return pa[i]! < pb[i]! ? -1 : 1;
  return 0;
}

/** A line to print when the server advertises a newer CLI, else null. */
export function updateNotice(status: { client_version?: string }): string | null {
  if (!status.client_version || compareVersions(clientVersion, status.client_version) >= 0) return null;
  return `A newer Pier CLI is available (${status.client_version}; you have ${clientVersion}). Rerun the installer to update.`;
}
