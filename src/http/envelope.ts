// The only place that knows HTTP status codes: ApiError (and framework errors) become the
// error envelope `{ error: { message, code, request_id, docs_url, details? } }`.
import { ApiError, errorCatalogue } from "../core/errors";
import { clientVersion } from "../core/version";
import type { Logger } from "../core/log";
import { isStorageFull } from "../core/storage-full";
import { describeIssue, type ValidationIssue } from "./validation";
import { validationFailed } from "./json-guard";

export function baseHeaders(requestId: string): Record<string, string> {
  return { "x-request-id": requestId, "x-pier-client-version": clientVersion };
}

/** Map anything thrown (ApiError, Elysia's validation/parse errors, bugs) to an ApiError. */
export function toApiError(err: unknown, frameworkCode?: string | number): ApiError {
  if (err instanceof ApiError) return err;
  switch (frameworkCode) {
    case "VALIDATION": {
      const e = err as { all?: ValidationIssue[]; type?: string };
      const fields = (e.all ?? []).slice(0, 20).map(describeIssue);
      // "property": Elysia re-checked one coerced value on its own (it no longer knows where from).
      return validationFailed(e.type && e.type !== "property" ? e.type : undefined, fields);
    }
    case "PARSE":
      return new ApiError("BAD_REQUEST", "The request body could not be parsed. Send valid JSON with Content-Type: application/json.");
    case "NOT_FOUND":
      return new ApiError("NOT_FOUND", "No such route. See the API reference at /docs.");
    case 413:
      return new ApiError("PAYLOAD_TOO_LARGE");
  }
  // SQLite's busy timeout ran out (another process, e.g. the admin CLI, held the write lock):
  // a retryable 409, not a 500, on every route, not only the ones that map it themselves.
  if (sqliteCode(err)?.startsWith("SQLITE_BUSY")) {
    return new ApiError("DATABASE_BUSY_RETRY", "The database is busy with another change; retry shortly.", { retry_after: 1 }, 1);
  }
  // ENOSPC or SQLITE_FULL anywhere (a blob, a temp file, a commit): the transaction rolled back and
  // temp files are removed by their writers, so the client may simply retry once space is freed.
  if (isStorageFull(err)) return new ApiError("STORAGE_FULL", "The server's disk is full; nothing was stored. Retry later.");
  const status = (err as { status?: number })?.status;
  if (status === 413) return new ApiError("PAYLOAD_TOO_LARGE");
  return new ApiError("INTERNAL");
}

/** The SQLite error code of `err` or of an error it wraps (drizzle wraps driver errors in `cause`). */
function sqliteCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("SQLITE_")) return code;
  }
  return undefined;
}

export function errorResponse(err: ApiError, requestId: string, baseUrl: string): Response {
  const body = {
    error: {
      message: err.message,
      code: err.code,
      request_id: requestId,
      docs_url: `${baseUrl}/docs/errors#${err.code}`,
      ...(err.details ? { details: err.details } : {}),
    },
  };
  const headers: Record<string, string> = { ...baseHeaders(requestId), "content-type": "application/json; charset=utf-8" };
  if (err.retryAfter !== undefined) headers["retry-after"] = String(Math.max(1, Math.ceil(err.retryAfter)));
  return new Response(JSON.stringify(body), { status: errorCatalogue[err.code].status, headers });
}

export function logUnexpected(log: Logger, err: unknown, requestId: string): void {
  log.error("unhandled error", { request_id: requestId, error: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) });
}
