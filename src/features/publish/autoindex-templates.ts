// Account-specific Auto-Index templates. A template must contain {{files}} (inner whitespace
// allowed); the other macros are optional.
import { eq } from "drizzle-orm";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { autoIndexTemplates } from "../../db/schema";
import { transaction } from "../../db/tx";

export const AUTOINDEX_MACROS = ["title", "description", "files", "theme_switch", "account_name", "account_logo"] as const;
export const MAX_TEMPLATE_BYTES = 256 * 1024;

/** Refuse a template Pier cannot use; returns it unchanged when valid. */
export function validateAutoIndexTemplate(template: string): string {
  if (!/\{\{\s*files\s*\}\}/.test(template)) {
    throw new ApiError("VALIDATION_FAILED", "An Auto-Index template must contain the {{files}} macro.", {
      field: "template",
      missing_macro: "files",
      macros: AUTOINDEX_MACROS,
    });
  }
  if (new TextEncoder().encode(template).byteLength > MAX_TEMPLATE_BYTES) {
    throw new ApiError("VALIDATION_FAILED", `An Auto-Index template may be at most ${MAX_TEMPLATE_BYTES} bytes.`, {
      field: "template",
      max_bytes: MAX_TEMPLATE_BYTES,
    });
  }
  return template;
}

export function setAutoIndexTemplate(deps: Deps, accountId: string, template: string | null): void {
  if (template !== null) validateAutoIndexTemplate(template);
  const now = deps.clock.now().toISOString();
  transaction(deps.db, (tx) => {
    if (template === null) tx.delete(autoIndexTemplates).where(eq(autoIndexTemplates.accountId, accountId)).run();
    else
      tx.insert(autoIndexTemplates)
        .values({ accountId, template, updatedAt: now })
        .onConflictDoUpdate({ target: autoIndexTemplates.accountId, set: { template, updatedAt: now } })
        .run();
  });
}

export function getAutoIndexTemplate(deps: Deps, accountId: string): string | null {
  return deps.db.select({ t: autoIndexTemplates.template }).from(autoIndexTemplates).where(eq(autoIndexTemplates.accountId, accountId)).get()?.t ?? null;
}
