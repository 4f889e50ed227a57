// The worker behind renderReadme(): marked runs here so a slow README never blocks requests.
import { renderGuideMarkdown, renderMarkdown, type MarkdownKind } from "./markdown";

declare const self: Worker;

self.onmessage = (e: MessageEvent<{ id: number; source: string; kind: MarkdownKind }>) => {
  let html: string | null = null;
  try {
    html = e.data.kind === "guide" ? renderGuideMarkdown(e.data.source) : renderMarkdown(e.data.source);
  } catch {
    // e.g. a stack overflow on thousands of nested quotes: the page shows the text instead.
  }
  self.postMessage({ id: e.data.id, html });
};
