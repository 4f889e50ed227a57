// Trusted starter templates: folders under sites/templates/<name>/, embedded in the binary
// (scripts/gen-embeds.ts). from_template creates a private bucket holding the template's files
// as its first version, in one transaction with the bucket itself.
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { transaction } from "../../db/tx";
import { siteAssets } from "../../sites-assets.gen";
import { createBucket } from "../buckets";
import type { BucketRow } from "../buckets";
import { commitChanges, type Change } from "./commit";
import { guessContentType } from "./write";

interface TemplateInfo {
  name: string;
  title: string;
  description: string;
}

/** The catalogue; each entry's files are whatever lives under sites/templates/<name>/. */
export const templateCatalogue: TemplateInfo[] = [
  { name: "landing", title: "Landing page", description: "A one-page product site with a hero, three features and a signup section." },
  { name: "docs", title: "Documentation site", description: "Markdown pages (README.md and a guide) rendered by a small static viewer." },
  { name: "spa", title: "Single-page app", description: "A dependency-free task-list app with hash routes; publish with SPA fallback." },
];

function templateFiles(name: string): { path: string; asset: string }[] {
  const prefix = `templates/${name}/`;
  return Object.entries(siteAssets)
    .filter(([p]) => p.startsWith(prefix))
    .map(([p, asset]) => ({ path: p.slice(prefix.length), asset }));
}

export function listTemplates() {
  return templateCatalogue.map((t) => ({ ...t, files: templateFiles(t.name).map((f) => f.path) }));
}

export async function createFromTemplate(deps: Deps, actor: Actor, input: { template: string; title?: string; description?: string }): Promise<BucketRow> {
  const info = templateCatalogue.find((t) => t.name === input.template);
  const entries = info ? templateFiles(info.name) : [];
  if (!info || entries.length === 0)
    throw new ApiError("TEMPLATE_NOT_FOUND", `No template named "${input.template}".`, { known: templateCatalogue.map((t) => t.name) });
  const changes: Change[] = [];
  for (const e of entries) {
    const stored = await deps.blobs.putBytes(await Bun.file(e.asset).bytes());
    const type = guessContentType(e.path);
    changes.push({
      path: e.path,
      blob: {
        sha256: stored.sha256,
        size: stored.size,
        md5: stored.md5,
        contentType: type.startsWith("text/") && !type.includes("charset") ? `${type}; charset=utf-8` : type,
      },
    });
  }
  return transaction(deps.db, (tx) => {
    const bucket = createBucket({ ...deps, db: tx as unknown as Deps["db"] }, actor, {
      title: input.title ?? info.title,
      description: input.description ?? info.description,
      metadata: { template: info.name },
    });
    return commitChanges(deps, actor, bucket.id, changes, { kind: "template", comment: `from template ${info.name}` }, tx).bucket;
  });
}
