// The Site tab's "Deploys" list: the site's builds, 20 a page as GET
// /api/v1/publications/:id/deploys pages them (offset), which one is live, and a Rollback
// button on each earlier deploy that still keeps its files (the API's rollback_available). The
// button posts to the same rollback service as POST /api/v1/publications/:id/rollback.
import { html, shortTime, type SafeHtml } from "../../../http/pages/layout";
import { pager, rangeNote } from "./paging";
import type { Actor, Deps } from "../../../core/context";
import { listPublicationDeploys, presentDeploy } from "../../publish";
import { siteUrl } from "./site-sections";

const SHOWN = 20;

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
}

export function deploysSection(deps: Deps, actor: Actor, publicationId: string, bucketId: string, csrf: string, offset = 0): SafeHtml {
  const r = listPublicationDeploys(deps, actor, publicationId, { limit: SHOWN, offset });
  const total = r.pagination.total_count;
  if (!total) return html`<p class="muted">No deploys yet.</p>`;
  if (!r.deploys.length) return html`<p class="small muted">No deploys on this page. <a href="${link(bucketId, 0)}">The newest</a></p>`;
  const action = `/dashboard/buckets/${encodeURIComponent(bucketId)}/site/rollback`;
  const rows = r.deploys.map((row) => {
    const d = presentDeploy(r.pub, row);
    const state = d.live
      ? html`<strong>Live</strong>`
      : d.rollback_available
        ? html`<form method="post" action="${action}"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="deploy_id" value="${d.id}"><button type="submit" class="secondary" aria-label="Roll back to the deploy built ${shortTime(d.created_at)}">Rollback</button></form>`
        : html`<span class="muted">Pruned</span>`;
    return html`<tr><td class="small wrap"><code>${d.id}</code></td><td class="small">${shortTime(d.created_at)}</td><td class="small">${d.files_count.toLocaleString("en")}</td><td class="small">${size(d.total_bytes)}</td><td class="small">${d.trigger}</td><td>${state}</td></tr>`;
  });
  return html`<p class="small muted">A rollback serves an earlier deploy at once, without a rebuild; the bucket's files do not change, and the next publish builds from them again. The newest ${r.historyLimit} deploys can be rolled back to.</p><table><caption class="skip">Deploys, newest first</caption><thead><tr><th scope="col">Deploy</th><th scope="col">Built</th><th scope="col">Files</th><th scope="col">Size</th><th scope="col">By</th><th scope="col">State</th></tr></thead><tbody>${rows}</tbody></table>${
    total > SHOWN
      ? html`${rangeNote(offset, r.deploys.length, total, "newest first")}${pager(offset, SHOWN, total, (o) => link(bucketId, o), "newest")}`
      : html``
  }`;
}

const link = (bucketId: string, o: number) => siteUrl(bucketId, `${o ? `?deploys_offset=${o}` : ""}#deploys`);
