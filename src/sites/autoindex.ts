// Auto-Index: the page a site shows for a directory without index.html/index.htm. Lists the
// directory (folders first, image thumbnails, sizes) and renders README.md, README.txt or
// index.md below the listing, inside the account's template or the default one.
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { Deps } from "../core/context";
import { getAutoIndexTemplate } from "../features/publish";
import type { Manifest, Site } from "./directory";
import type { FileServer } from "./files";
import { renderReadmeOutcome } from "./markdown";
import { listFolder } from "./autoindex-listing";
import { clientVersion } from "../core/version";
import { escapeHtml } from "../http/html";
import { fillTemplate, type SiteTemplates } from "./pages";

const README_NAMES = ["README.md", "readme.md", "Readme.md", "README.markdown", "README.txt", "readme.txt", "index.md"];
const README_MAX_BYTES = 512 * 1024;

// The theme switch is Pier's only script on the page; the CSP allows exactly this script by hash.
const THEME_SCRIPT = `(function(){var r=document.documentElement,k="pier-theme",s=localStorage.getItem(k);if(s)r.dataset.theme=s;var b=document.getElementById("pier-theme");if(!b)return;b.addEventListener("click",function(){var n=r.dataset.theme==="dark"?"light":"dark";r.dataset.theme=n;localStorage.setItem(k,n);});})();`;
const THEME_HASH = `'sha256-${createHash("sha256").update(THEME_SCRIPT).digest("base64")}'`;
export const AUTOINDEX_CSP = `default-src 'none'; script-src ${THEME_HASH}; style-src 'unsafe-inline'; img-src 'self' data:; media-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'`;
const THEME_SWITCH = `<button type="button" id="pier-theme" class="pier-theme" aria-label="Switch light/dark theme">${svg('<circle cx="12" cy="12" r="8"/><path d="M12 4a8 8 0 0 1 0 16z" fill="currentColor"/>')}</button><script>${THEME_SCRIPT}</script>`;

export interface RenderedIndex {
  html: string;
  etag: string;
}

/** Rows a listing shows at most (folders first, then files); a note says how many more there are. */
export const MAX_LISTED = 5_000;
const count = new Intl.NumberFormat("en");

export class AutoIndex {
  /**
   * Rendered pages by ETag, which names everything a page is made of (deploy, folder, template,
   * site facts, Pier's version): a page is rendered once per deploy and folder and reused until
   * one of those changes or the cache drops it. Bounded in bytes: a page of 5,000 rows is ~2 MB.
   */
  private readonly pages = new LRUCache<string, string>({ maxSize: 64 * 1024 * 1024, sizeCalculation: (html) => html.length + 1 });
  /** Renders under way, by ETag: requests that miss at the same time wait for the same one. */
  private readonly rendering = new Map<string, Promise<RenderedIndex>>();
  /** Accounts' templates, read at most every 10 s: a template can change without a deploy. */
  private readonly templates = new LRUCache<string, { template: string; tag: string }>({ max: 1_000, ttl: 10_000 });

  constructor(
    private readonly deps: Deps,
    private readonly files: FileServer,
  ) {}

  /**
   * The page's ETag, known before it is rendered (If-None-Match is answered without rendering).
   * Weak: a README that failed to render in time is shown as text under the same name.
   */
  etag(t: SiteTemplates, site: Site, m: Manifest, dir: string): string {
    const h = new Bun.CryptoHasher("sha256");
    for (const part of [clientVersion, m.deployId, dir, this.template(t, site).tag, site.title, site.slug, site.description, site.accountName])
      h.update(part).update("\0");
    return `W/"ai-${h.digest("hex").slice(0, 40)}"`;
  }

  render(t: SiteTemplates, site: Site, m: Manifest, dir: string, etag: string): Promise<RenderedIndex> {
    const html = this.pages.get(etag);
    if (html !== undefined) return Promise.resolve({ html, etag });
    let pending = this.rendering.get(etag);
    if (pending === undefined) {
      pending = this.build(t, site, m, dir, etag).finally(() => this.rendering.delete(etag));
      this.rendering.set(etag, pending);
    }
    return pending;
  }

  private template(t: SiteTemplates, site: Site): { template: string; tag: string } {
    let hit = this.templates.get(site.accountId);
    if (hit === undefined) {
      const template = getAutoIndexTemplate(this.deps, site.accountId) ?? t.autoindex;
      hit = { template, tag: createHash("sha256").update(template).digest("hex") };
      this.templates.set(site.accountId, hit);
    }
    return hit;
  }

  private async build(t: SiteTemplates, site: Site, m: Manifest, dir: string, etag: string): Promise<RenderedIndex> {
    this.deps.metrics.autoIndexRenders.inc(0);
    const template = this.template(t, site).template;
    const prefix = dir === "" ? "" : `${dir}/`;
    const { folders, files } = await listFolder(m, dir);
    const rows: string[] = [];
    if (dir !== "") rows.push(`<tr><td class="icon">${ICONS.parent}</td><td><a href="../">Parent folder</a></td><td class="size"></td></tr>`);
    const shownFolders = Math.min(folders.length, MAX_LISTED);
    for (let i = 0; i < shownFolders; i++) {
      const name = folders[i]!;
      rows.push(
        `<tr><td class="icon">${ICONS.folder}</td><td><a href="${encodeURIComponent(name)}/">${escapeHtml(name)}/</a></td><td class="size">—</td></tr>`,
      );
    }
    const shownFiles = Math.min(files.length, MAX_LISTED - shownFolders);
    for (let i = 0; i < shownFiles; i++) {
      const { name, file } = files[i]!;
      const href = encodeURIComponent(name);
      const preview = /^image\/(png|jpe?g|gif|webp|avif|svg\+xml)/.test(file.contentType)
        ? `<img class="thumb" src="${href}" alt="" loading="lazy">`
        : `<span>${fileIcon(file.contentType)}</span>`;
      rows.push(`<tr><td class="icon">${preview}</td><td><a href="${href}">${escapeHtml(name)}</a></td><td class="size">${formatSize(file.size)}</td></tr>`);
    }
    const hidden = folders.length + files.length - shownFolders - shownFiles;
    if (hidden > 0) {
      const what = hidden === 1 ? "entry is" : "entries are";
      rows.push(
        `<tr class="pier-more"><td class="icon"></td><td colspan="2">${count.format(hidden)} more ${what} not listed: a listing shows the first ${count.format(MAX_LISTED)}.</td></tr>`,
      );
    }
    let readme = "";
    let settled = true;
    for (const name of README_NAMES) {
      const f = m.files.get(prefix + name);
      if (!f || f.size > README_MAX_BYTES) continue;
      const text = await this.files.text(f.blobSha256, f.size);
      if (name.toLowerCase().endsWith(".txt")) readme = `<pre>${escapeHtml(text)}</pre>`;
      else ({ html: readme, settled } = await renderReadmeOutcome(text));
      readme = `<section class="pier-readme">${readme}</section>`;
      break;
    }
    const name = site.title || site.slug;
    const filesHtml = `<table class="pier-files"><tbody>${rows.join("")}</tbody></table>${readme}`;
    const html = fillTemplate(template, {
      title: escapeHtml(dir === "" ? name : `/${dir}/ · ${name}`),
      description: escapeHtml(site.description),
      files: filesHtml,
      theme_switch: THEME_SWITCH,
      account_name: escapeHtml(site.accountName),
      account_logo: `<span class="pier-logo" aria-hidden="true">${escapeHtml((site.accountName.trim()[0] ?? "P").toUpperCase())}</span>`,
    });
    // A README shown as text only because the renderer was busy: this page is not kept, and its
    // own ETag keeps a client from revalidating it as the real one.
    if (!settled) return { html, etag: `W/"ai-t${createHash("sha256").update(html).digest("hex").slice(0, 39)}"` };
    this.pages.set(etag, html);
    return { html, etag };
  }
}

// Icons are small inline SVGs drawn with currentColor: emoji and symbol glyphs showed as empty
// boxes where the visitor's fonts lack them, and inline SVG needs no request (CSP allows none).
function svg(paths: string): string {
  return `<svg class="pier-icon" viewBox="0 0 24 24" width="22" height="22" aria-hidden="true" focusable="false" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round">${paths}</svg>`;
}

const ICONS = {
  parent: svg('<path d="M9 14 4 9l5-5"/><path d="M4 9h10a6 6 0 0 1 6 6v5"/>'),
  folder: svg('<path d="M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z"/>'),
  web: svg('<circle cx="12" cy="12" r="9"/><path d="M3 12h18M12 3a14 14 0 0 1 0 18M12 3a14 14 0 0 0 0 18"/>'),
  text: svg('<path d="M14 3H7a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2V8z"/><path d="M14 3v5h5M9 13h6M9 17h6"/>'),
  video: svg('<rect x="3" y="6" width="13" height="12" rx="2"/><path d="m16 10 5-3v10l-5-3"/>'),
  audio: svg('<path d="M9 18V5l11-2v13"/><circle cx="6" cy="18" r="3"/><circle cx="17" cy="16" r="3"/>'),
  pdf: svg('<path d="M14 3H7a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2V8z"/><path d="M14 3v5h5"/><path d="M8 16h2.5M8 13h8"/>'),
  other: svg('<path d="m21 8-9-5-9 5 9 5z"/><path d="M3 8v8l9 5 9-5V8M12 13v8"/>'),
};

function fileIcon(type: string): string {
  if (type.startsWith("text/html")) return ICONS.web;
  if (type.startsWith("text/") || type.includes("json") || type.includes("javascript")) return ICONS.text;
  if (type.startsWith("video/")) return ICONS.video;
  if (type.startsWith("audio/")) return ICONS.audio;
  if (type === "application/pdf") return ICONS.pdf;
  return ICONS.other;
}

export function formatSize(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}
