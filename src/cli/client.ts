// The client side of the `pier` CLI: where the server is and which key to use, and an HTTP
// helper that honours Retry-After and retries transient failures a bounded number of times
// with jitter.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export interface Credentials {
  baseUrl: string;
  apiKey: string;
}

/** $XDG_CONFIG_HOME/pier/credentials.json (what `pier login` writes), else ~/.config/pier/... */
export function credentialsPath(env = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), ".config"), "pier", "credentials.json");
}

/** --url/--key, else the credentials file, else PIER_URL / PIER_API_KEY. */
export function resolveCredentials(options: Record<string, string>, env = process.env): Credentials {
  let file: { base_url?: string; api_key?: string } = {};
  const path = credentialsPath(env);
  if (existsSync(path)) {
    try {
      file = JSON.parse(readFileSync(path, "utf8"));
    } catch {
      throw new Error(`${path} is not valid JSON; run pier login again`);
    }
  }
  const baseUrl = options.url ?? file.base_url ?? env.PIER_URL;
  const apiKey = options.key ?? file.api_key ?? env.PIER_API_KEY;
  if (!baseUrl || !apiKey) throw new Error("no server or API key: pass --url and --key, run pier login, or set PIER_URL and PIER_API_KEY");
  return { baseUrl: baseUrl.replace(/\/+$/, ""), apiKey };
}

export class ApiFailure extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly details: Record<string, unknown> = {}) {
    super(message);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Full jitter around an exponential base, capped. */
export const backoff = (attempt: number, baseMs = 500, capMs = 10_000) => Math.min(capMs, baseMs * 2 ** attempt) * (0.5 + Math.random() / 2);

const TRANSIENT = new Set([429, 502, 503, 504]);
export const MAX_RETRIES = 6;

/** Wait the server's Retry-After (seconds) when given, else jittered backoff. */
export async function waitBeforeRetry(res: Response | null, attempt: number): Promise<void> {
  const ra = Number(res?.headers.get("retry-after"));
  await sleep(Number.isFinite(ra) && ra > 0 ? Math.min(ra, 120) * 1000 + Math.random() * 250 : backoff(attempt));
}

export class PierClient {
  constructor(readonly creds: Credentials) {}

  /** JSON API call; returns `data`, throws ApiFailure with Pier's error code. */
  async call<T = any>(method: string, path: string, body?: unknown, opts: { noRetry?: string[] } = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let res: Response | null = null;
      try {
        res = await fetch(this.creds.baseUrl + path, {
          method,
          headers: { authorization: `Bearer ${this.creds.apiKey}`, accept: "application/json", ...(body !== undefined ? { "content-type": "application/json" } : {}) },
          body: body !== undefined ? JSON.stringify(body) : undefined,
        });
      } catch (e) {
        if (attempt >= MAX_RETRIES) throw e;
        await waitBeforeRetry(null, attempt);
        continue;
      }
      const text = await res.text();
      let json: any = {};
      try { json = JSON.parse(text); } catch {}
      if (res.ok) return json.data as T;
      const code = json?.error?.code ?? `HTTP_${res.status}`;
      const retryable = (TRANSIENT.has(res.status) || code === "DATABASE_BUSY_RETRY") && !opts.noRetry?.includes(code);
      if (retryable && attempt < MAX_RETRIES) {
        await waitBeforeRetry(res, attempt);
        continue;
      }
      throw new ApiFailure(res.status, code, json?.error?.message ?? text.slice(0, 200), json?.error?.details ?? {});
    }
  }

  /** PUT bytes to a signed upload URL, retrying transient failures. */
  async put(upload: { url: string; headers: Record<string, string> }, bytes: Uint8Array): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      let res: Response | null = null;
      try {
        res = await fetch(upload.url, { method: "PUT", headers: upload.headers, body: bytes as unknown as BodyInit });
        if (res.ok) { await res.arrayBuffer(); return; }
      } catch (e) {
        if (attempt >= MAX_RETRIES) throw e;
      }
      if (res && !TRANSIENT.has(res.status)) {
        const text = await res.text();
        let code = `HTTP_${res.status}`;
        try { code = JSON.parse(text).error.code; } catch {}
        throw new ApiFailure(res.status, code, text.slice(0, 200));
      }
      if (attempt >= MAX_RETRIES) throw new ApiFailure(res?.status ?? 0, "UPLOAD_FAILED", "upload kept failing");
      await waitBeforeRetry(res, attempt);
    }
  }
}
