// The worker behind renderReadme(): marked runs here so a slow README never blocks requests.
import { renderMarkdown } from "./markdown";

declare const self: Worker;

self.onmessage = (e: MessageEvent<{ id: number; source: string }>) => {
  let html: string | null = null;
  try {
    html = renderMarkdown(e.data.source);
  } catch {
    // e.g. a stack overflow on thousands of nested quotes: the page shows the text instead.
  }
  self.postMessage({ id: e.data.id, html });
};
