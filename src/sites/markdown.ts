// README rendering for Auto-Index pages with marked, made safe for untrusted content: raw HTML
// in the markdown is shown as text (never parsed as markup), and link/image targets are limited
// to relative, http(s) and mailto URLs. The page's CSP forbids scripts besides Pier's own as a
// second line of defence.
//
// marked's cost is not linear in its input: 64 KiB of crafted markdown takes 0.3-2 s and 512 KiB
// of `>` 15 s (then a stack overflow). So visitors' pages never render on the event loop:
// renderReadme() hands the text to a worker with a time limit, one at a time, remembers results by content,
// and shows the README as plain text when rendering fails or takes too long.
import GithubSlugger from "github-slugger";
import { LRUCache } from "lru-cache";
import { Marked, type Tokens } from "marked";
import { escapeHtml } from "../http/html";

/** A URL safe to put in href/src: relative (no scheme, no entity tricks) or http(s)/mailto. */
export function safeUrl(raw: string): string | null {
  const h = raw.trim();
  if (/^(https?:\/\/|mailto:)/i.test(h) && !/[\u0000-\u001f\s]/.test(h)) return h;
  const head = h.split(/[/?#]/, 1)[0]!;
  if (head.includes(":") || head.includes("&") || /[\u0000-\u001f\\]/.test(h)) return null;
  return h;
}

const marked = new Marked({
  gfm: true,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(text);
    },
    link(this: { parser: { parseInline(t: Tokens.Link["tokens"]): string } }, { href, title, tokens }: Tokens.Link) {
      const text = this.parser.parseInline(tokens);
      const url = safeUrl(href);
      if (url === null) return text;
      return `<a href="${escapeHtml(url)}"${title ? ` title="${escapeHtml(title)}"` : ""} rel="nofollow noopener">${text}</a>`;
    },
    image({ href, title, text }: Tokens.Image) {
      const url = safeUrl(href);
      if (url === null) return escapeHtml(text);
      return `<img src="${escapeHtml(url)}" alt="${escapeHtml(text)}"${title ? ` title="${escapeHtml(title)}"` : ""} loading="lazy">`;
    },
  },
});

export function renderMarkdown(source: string): string {
  return marked.parse(source, { async: false }) as string;
}

/**
 * Where a link between Pier's own guides points on the server that serves them (/docs/guides):
 * `files.md#paths`, `docs/files.md` (from the README) and `../README.md` become that guide's
 * address; another relative target (a source file, the Dockerfile) is not served: null, the
 * link's text alone. Absolute URLs and same-page anchors stay as they are.
 */
export function guideHref(href: string): string | null {
  const m = /^(?:\.\.\/|docs\/)?([A-Za-z0-9-]+)\.md(#[^\s]*)?$/.exec(href);
  if (m) return `/docs/guides/${m[1]!.toLowerCase()}${m[2] ?? ""}`;
  if (href.startsWith("#") || /^(https?:\/\/|mailto:)/i.test(href)) return safeUrl(href);
  return null;
}

/** Heading ids as GitHub gives them (the guides link to `#section` anchors); one slugger per render. */
let slugger = new GithubSlugger();
const plainText = (htmlText: string) =>
  htmlText.replace(/<[^>]*>/g, "").replace(/&(lt|gt|quot|#39|amp);/g, (_, e: string) => ({ lt: "<", gt: ">", quot: '"', "#39": "'", amp: "&" })[e]!);

// The guides are Pier's own text (docs/), but rendered with the README renderer's care anyway:
// raw HTML shows as text, and links go only where guideHref says.
const guideMarked = new Marked({
  gfm: true,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(text);
    },
    heading(this: { parser: { parseInline(t: Tokens.Heading["tokens"]): string } }, { tokens, depth }: Tokens.Heading) {
      const inner = this.parser.parseInline(tokens);
      return `<h${depth} id="${escapeHtml(slugger.slug(plainText(inner)))}">${inner}</h${depth}>\n`;
    },
    link(this: { parser: { parseInline(t: Tokens.Link["tokens"]): string } }, { href, tokens }: Tokens.Link) {
      const text = this.parser.parseInline(tokens);
      const url = guideHref(href);
      return url === null ? text : `<a href="${escapeHtml(url)}">${text}</a>`;
    },
  },
});

export function renderGuideMarkdown(source: string): string {
  slugger = new GithubSlugger();
  return guideMarked.parse(source, { async: false }) as string;
}

export type MarkdownKind = "readme" | "guide";

/** A README that takes longer than this to render is shown as plain text. */
export const README_RENDER_TIMEOUT_MS = 1000;

const asPlainText = (source: string) => `<pre>${escapeHtml(source)}</pre>`;
const rendered = new LRUCache<string, string>({ max: 200, maxSize: 32 * 1024 * 1024, sizeCalculation: (html) => html.length + 1 });

/** The HTML, UNRENDERABLE when this very text was too slow or broke marked, or null when it was not rendered for another reason. */
type Outcome = string | typeof UNRENDERABLE | null;
const UNRENDERABLE = Symbol("unrenderable");
type Job = { id: number; source: string; kind: MarkdownKind; timeoutMs: number; queuedAt: number; resolve: (outcome: Outcome) => void };

/**
 * One render at a time is in the worker, and its timer starts when it is handed over: a README
 * that waited behind a slow one gets its whole time, and only the render that overran is
 * judged unrenderable (before, every queued job's timer ran from the moment it was queued).
 * Jobs that waited too long, or find the queue full, are shown as text and not remembered.
 */
const MAX_QUEUED = 64;
const MAX_WAIT_MS = 5000;
let worker: Worker | null = null;
const queue: Job[] = [];
let current: { job: Job; timer: ReturnType<typeof setTimeout> } | null = null;
let nextId = 0;

function finishCurrent(outcome: Outcome): void {
  if (!current) return;
  clearTimeout(current.timer);
  const { job } = current;
  current = null;
  job.resolve(outcome);
  startNext();
}

function startNext(): void {
  while (!current && queue.length) {
    const job = queue.shift()!;
    if (Date.now() - job.queuedAt > MAX_WAIT_MS) {
      job.resolve(null);
      continue;
    }
    let w: Worker;
    try {
      w = renderer();
    } catch {
      job.resolve(null);
      continue;
    }
    const timer = setTimeout(() => {
      // A render that runs away keeps the worker busy: drop it; the next job gets a new one.
      if (worker === w) worker = null;
      w.terminate();
      finishCurrent(UNRENDERABLE);
    }, job.timeoutMs);
    current = { job, timer };
    w.postMessage({ id: job.id, source: job.source, kind: job.kind });
  }
}

/**
 * From source the worker file sits beside this one. In the compiled binary it is an extra
 * entrypoint of the build (scripts/build.ts), embedded under the entrypoints' common folder
 * (src/) as sites/markdown-worker, while this module is bundled into the executable itself, so a
 * path relative to import.meta.url would miss it.
 */
function workerEntry(): string {
  return import.meta.url.includes("/$bunfs/") ? "./sites/markdown-worker.ts" : new URL("./markdown-worker.ts", import.meta.url).href;
}

function renderer(): Worker {
  if (worker) return worker;
  const w = new Worker(workerEntry());
  (w as unknown as { unref(): void }).unref(); // an idle renderer does not keep the process alive
  w.onmessage = (e: MessageEvent<{ id: number; html: string | null }>) => {
    if (current?.job.id === e.data.id) finishCurrent(e.data.html ?? UNRENDERABLE);
  };
  w.onerror = () => {
    w.terminate();
    // A worker already dropped after a timeout has no job any more; the current one is another's.
    if (worker !== w) return;
    worker = null;
    finishCurrent(null);
  };
  return (worker = w);
}

/** Queue a render for the worker (see startNext); settles with the outcome. */
function renderOffThread(source: string, kind: MarkdownKind, timeoutMs: number): Promise<Outcome> {
  if (queue.length >= MAX_QUEUED) return Promise.resolve(null);
  return new Promise((resolve) => {
    queue.push({ id: ++nextId, source, kind, timeoutMs, queuedAt: Date.now(), resolve });
    startNext();
  });
}

/** A README's HTML for a visitor's page: rendered off the event loop, once per content, plain text as the fallback. */
export async function renderReadme(source: string, timeoutMs = README_RENDER_TIMEOUT_MS): Promise<string> {
  return (await renderReadmeOutcome(source, timeoutMs)).html;
}

/**
 * renderReadme, saying whether the HTML is this text's answer (rendered, or judged unrenderable)
 * or a stopgap (the renderer was busy or failed): a page built on a stopgap is not to be kept.
 */
export async function renderReadmeOutcome(
  source: string,
  timeoutMs = README_RENDER_TIMEOUT_MS,
  kind: MarkdownKind = "readme",
): Promise<{ html: string; settled: boolean }> {
  const key = `${kind} ${new Bun.CryptoHasher("sha256").update(source).digest("hex")}`;
  const hit = rendered.get(key);
  if (hit !== undefined) return { html: hit, settled: true };
  const outcome = await renderOffThread(source, kind, timeoutMs);
  if (outcome === null) return { html: asPlainText(source), settled: false }; // not this text's fault: not remembered
  const html = outcome === UNRENDERABLE ? asPlainText(source) : outcome;
  rendered.set(key, html);
  return { html, settled: true };
}
