// The API host's answer to a browser that opens an address no route serves: a page with a way
// back, instead of the JSON error envelope API clients get (the same 404 and error code).
import { ApiError } from "../../core/errors";
import { htmlResponse } from "../html";
import { renderView } from "./layout";

// Machine endpoints keep the envelope whatever the Accept header says: their callers are
// programs, and an HTML body would break one that sends a browser-like Accept.
const MACHINE_PATH = /^\/(?:api|mcp|oauth|\.well-known|_storage|metrics|livez|readyz)(?:\/|$)/;

/** The q-value Accept gives `type` (exact match only; 0 when not named). */
function qualityOf(accept: string, type: string): number {
  for (const part of accept.split(",")) {
    const [name, ...params] = part.split(";");
    if (name!.trim().toLowerCase() !== type) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const value = q ? Number(q.slice(2)) : 1;
    return Number.isFinite(value) ? value : 0;
  }
  return 0;
}

/**
 * A browser navigation: GET or HEAD whose Accept names text/html at least as high as JSON
 * (browsers send `text/html,...,*\/*;q=0.8`; curl sends `*\/*`, which stays JSON).
 */
export function wantsNotFoundPage(req: Request): boolean {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  if (MACHINE_PATH.test(new URL(req.url).pathname)) return false;
  const accept = req.headers.get("accept") ?? "";
  const html = qualityOf(accept, "text/html");
  return html > 0 && html >= qualityOf(accept, "application/json");
}

export async function notFoundPage(headers: Record<string, string>): Promise<Response> {
  const res = htmlResponse(await renderView("auth/not-found.html", {}, { title: "Not found" }), { error: new ApiError("NOT_FOUND") });
  for (const [name, value] of Object.entries(headers)) res.headers.set(name, value);
  return res;
}
