// What the bucket's file pages share: their URLs, sizes for people, and the folder trail.
import { ApiError } from "../../../core/errors";
import { html, type SafeHtml } from "../../../http/pages/layout";
import { BUCKETS_PATH } from "./buckets-home";

export const filesUrl = (bucketId: string, prefix = "", extra: Record<string, string> = {}) => {
  const q = new URLSearchParams({ ...(prefix ? { prefix } : {}), ...extra }).toString();
  return `${BUCKETS_PATH}/${encodeURIComponent(bucketId)}/files${q ? `?${q}` : ""}`;
};

export const fileUrl = (bucketId: string, fileId: string, query = "") =>
  `${BUCKETS_PATH}/${encodeURIComponent(bucketId)}/files/${encodeURIComponent(fileId)}${query}`;

export function humanSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let n = bytes / 1024;
  let i = 0;
  for (; n >= 1024 && i < units.length - 1; i++) n /= 1024;
  return `${n < 10 ? n.toFixed(1) : Math.round(n)} ${units[i]}`;
}

/** Breadcrumbs from the bucket root to `prefix` (a folder path ending in "/"); the last is current. */
export function folderTrail(bucketId: string, prefix: string, lastIsLink = false): SafeHtml {
  const parts = prefix.split("/").filter(Boolean);
  const crumbs = [{ label: "All files", prefix: "" }, ...parts.map((p, i) => ({ label: p, prefix: `${parts.slice(0, i + 1).join("/")}/` }))];
  const items = crumbs.map((c, i) =>
    i === crumbs.length - 1 && !lastIsLink
      ? html`<li><span aria-current="page">${c.label}</span></li>`
      : html`<li><a href="${filesUrl(bucketId, c.prefix)}">${c.label}</a></li>`,
  );
  return html`<nav aria-label="Folder" class="crumbs"><ol>${items}</ol></nav>`;
}

export const crumbStyle = html`<style>
.crumbs ol{list-style:none;display:flex;flex-wrap:wrap;gap:.2rem;padding:0;margin:0 0 1rem}.crumbs li{overflow-wrap:anywhere}
.crumbs li+li::before{content:"/";color:var(--muted);margin-right:.2rem}
</style>`;

/** The lock durations a person picks from (the REST lock takes any number of seconds up to 7 days). */
export const LOCK_DURATIONS: [number, string][] = [
  [900, "15 minutes"],
  [3600, "1 hour"],
  [86_400, "1 day"],
  [604_800, "7 days"],
];

/** The duration options with `selected` on the one given. */
export const lockDurationOptions = (selected: number) =>
  html`${LOCK_DURATIONS.map(([v, label]) => html`<option value="${v}"${v === selected ? html` selected` : ""}>${label}</option>`)}`;

/**
 * A FILE_EXISTS refusal in the dashboard's words: without the API's `operations[i] (...)` prefix,
 * and naming the form's box that allows replacing (`box`, its label).
 */
export function existsRefusal(e: ApiError, box: string): ApiError {
  if (e.code !== "FILE_EXISTS") return e;
  const message = e.message.replace(/^operations\[\d+\] \([^)]*\): a /, "A ");
  return new ApiError(e.code, `${message} Tick “${box}” to replace it.`, e.details, e.retryAfter);
}
