// Form input checked against the same TypeBox schemas the REST routes use, so the dashboard
// accepts exactly what the API accepts; a refusal names the field it is about.
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ApiError } from "../../core/errors";
import { html, type SafeHtml } from "../../http/pages/layout";
import { formField } from "./shell";

export function checkForm<T>(schema: TSchema, input: unknown, messages: Record<string, string>): T {
  const first = Value.Errors(schema, input).First();
  if (!first) return input as T;
  const field = first.path.replace(/^\//, "").split("/")[0] || "form";
  throw new ApiError("VALIDATION_FAILED", messages[field] ?? first.message, { field });
}

/** The message under a field when the refusal is about it (empty otherwise). */
export function fieldError(error: ApiError | undefined, field: string, id: string): SafeHtml {
  if (!error || (error.details as { field?: string } | undefined)?.field !== field) return html``;
  return html`<span class="field-error" id="${id}">${error.message}</span>`;
}

/** aria-invalid / aria-describedby for a field the refusal is about. */
export const invalidAttrs = (error: ApiError | undefined, field: string, id: string): SafeHtml =>
  (error?.details as { field?: string } | undefined)?.field === field ? html` aria-invalid="true" aria-describedby="${id}"` : html``;

/** A repeated form field (checkboxes) as a list of strings: none, one or many. */
export function formList(body: unknown, name: string): string[] {
  const v = body && typeof body === "object" ? (body as Record<string, unknown>)[name] : undefined;
  const all = Array.isArray(v) ? v : [v];
  return all.filter((x): x is string => typeof x === "string" && x !== "");
}

/**
 * A removal that cannot be undone from the page goes only with its box ticked, checked here and
 * not only by the browser (D273, D297): otherwise VALIDATION_FAILED about the field `confirm`.
 */
export function requireConfirmed(body: unknown, consequence: string): void {
  if (formField(body, "confirm") !== "on") throw new ApiError("VALIDATION_FAILED", `Tick the box to confirm: ${consequence}`, { field: "confirm" });
}
