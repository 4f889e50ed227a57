// The CLI's one HTTP client: JSON in and out with the Pier envelope unwrapped, error answers as
// ApiFailure (code, message, details, docs_url), uploads PUT to signed URLs. Transient answers
// (429, 502-504, DATABASE_BUSY_RETRY) wait the server's Retry-After, else a jittered exponential
// backoff, and are retried a bounded number of times: the client never retries forever.
import { clientVersion } from "../../core/version";
import { ApiFailure, CliError } from "./errors";

export { ApiFailure };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Full jitter around an exponential base, capped. */
export const backoff = (attempt: number, baseMs = 500, capMs = 10_000) => Math.min(capMs, baseMs * 2 ** attempt) * (0.5 + Math.random() / 2);

const TRANSIENT = new Set([429, 502, 503, 504]);
/** Retries of a transient answer (about a minute of backoff, more when Retry-After says so). */
export const MAX_RETRIES = 6;
/** Retries when the server cannot be reached at all: a stopped server rarely comes back in seconds. */
const MAX_CONNECT_RETRIES = 2;
/** The longest Retry-After honoured; a longer one is a reason to stop, not to hang. */
const MAX_RETRY_AFTER_S = 120;

/** Seconds to wait from Retry-After (or the error's details.retry_after), when given. */
function retryAfterSeconds(res: Response | null, details?: Record<string, unknown>): number | null {
  const header = Number(res?.headers.get("retry-after"));
  const fromBody = Number(details?.retry_after);
  const s = Number.isFinite(header) && header > 0 ? header : Number.isFinite(fromBody) && fromBody > 0 ? fromBody : null;
  return s === null ? null : Math.min(s, MAX_RETRY_AFTER_S);
}

async function waitBeforeRetry(res: Response | null, attempt: number, details?: Record<string, unknown>): Promise<void> {
  const s = retryAfterSeconds(res, details);
  await sleep(s !== null ? s * 1000 + Math.random() * 250 : backoff(attempt));
}

function unreachable(url: string, e: unknown): CliError {
  const origin = (() => {
    try {
      return new URL(url).origin;
    } catch {
      return url;
    }
  })();
  return new CliError(
    `could not reach ${origin}: ${(e as Error).message}`,
    "SERVER_UNREACHABLE",
    "Is the server running and is the URL right? Check it with pier whoami, or pass --url (or PIER_URL).",
  );
}

export interface CallOptions {
  /** Error codes that must not be retried even when transient (the caller handles them). */
  noRetry?: string[];
}

export class PierClient {
  constructor(
    readonly baseUrl: string,
    readonly apiKey?: string,
  ) {}

  /** The server's clock from the last answer (Date header), for times the server checks. */
  serverDate: Date | null = null;

  /** JSON API call; returns `data`, throws ApiFailure with Pier's error code. */
  async call<T = any>(method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<T> {
    for (let attempt = 0, connectFailures = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(this.baseUrl + path, {
          method,
          headers: {
            accept: "application/json",
            "user-agent": `pier-cli/${clientVersion}`,
            ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
          },
          body: body !== undefined ? JSON.stringify(body) : undefined,
        });
      } catch (e) {
        if (++connectFailures > MAX_CONNECT_RETRIES) throw unreachable(this.baseUrl, e);
        await sleep(backoff(connectFailures - 1, 300, 2_000));
        continue;
      }
      const date = res.headers.get("date");
      if (date && !Number.isNaN(Date.parse(date))) this.serverDate = new Date(date);
      const text = await res.text();
      let json: any = null;
      try {
        json = JSON.parse(text);
      } catch {}
      if (res.ok) {
        if (json && typeof json === "object" && "data" in json) return json.data as T;
        throw new CliError(
          `${this.baseUrl}${path} did not answer like a Pier server (HTTP ${res.status}, no JSON data)`,
          "NOT_A_PIER_SERVER",
          "Check the URL: it must be the Pier API address the server's banner prints.",
        );
      }
      const code: string = json?.error?.code ?? `HTTP_${res.status}`;
      const details: Record<string, unknown> = json?.error?.details ?? {};
      const retryable = (TRANSIENT.has(res.status) || code === "DATABASE_BUSY_RETRY") && !opts.noRetry?.includes(code);
      if (retryable && attempt < MAX_RETRIES) {
        await waitBeforeRetry(res, attempt, details);
        continue;
      }
      throw new ApiFailure(res.status, code, json?.error?.message ?? (text.slice(0, 200) || `HTTP ${res.status}`), details, json?.error?.docs_url);
    }
  }

  /** PUT bytes to a signed upload URL with its headers verbatim (no bearer key), retrying transient failures. */
  async put(upload: { url: string; headers: Record<string, string> }, bytes: Uint8Array | Blob): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      let res: Response | null = null;
      try {
        res = await fetch(upload.url, { method: "PUT", headers: upload.headers, body: bytes as unknown as BodyInit });
        if (res.ok) {
          await res.arrayBuffer();
          return;
        }
      } catch (e) {
        if (attempt >= MAX_CONNECT_RETRIES) throw unreachable(upload.url, e);
      }
      if (res && !TRANSIENT.has(res.status)) {
        const text = await res.text();
        let parsed: any = null;
        try {
          parsed = JSON.parse(text);
        } catch {}
        throw new ApiFailure(
          res.status,
          parsed?.error?.code ?? `HTTP_${res.status}`,
          parsed?.error?.message ?? text.slice(0, 200),
          parsed?.error?.details ?? {},
          parsed?.error?.docs_url,
        );
      }
      if (attempt >= MAX_RETRIES)
        throw new ApiFailure(res?.status ?? 0, "UPLOAD_FAILED", "an upload kept failing; run the command again (only what is missing is sent)");
      await waitBeforeRetry(res, attempt);
    }
  }
}

/** -1, 0, 1 comparing dotted numeric versions (pre-release suffixes ignored). */
export function compareVersions(a: string, b: string): number {
  const pa = a
    .split(/[.+-]/)
    .slice(0, 3)
    .map((x) => Number.parseInt(x, 10) || 0);
  const pb = b
    .split(/[.+-]/)
    .slice(0, 3)
    .map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < 3; i++) if (pa[i]! !== pb[i]!) return pa[i]! < pb[i]! ? -1 : 1;
  return 0;
}

/** A line to print when the server advertises a newer CLI, else null. */
export function updateNotice(status: { client_version?: string }): string | null {
  if (!status.client_version || compareVersions(clientVersion, status.client_version) >= 0) return null;
  return `A newer Pier CLI is available (${status.client_version}; you have ${clientVersion}). Rerun the installer to update.`;
}
