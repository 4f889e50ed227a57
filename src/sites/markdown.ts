// README rendering for Auto-Index pages with marked, made safe for untrusted content: raw HTML
// in the markdown is shown as text (never parsed as markup), and link/image targets are limited
// to relative, http(s) and mailto URLs. The page's CSP forbids scripts besides Pier's own as a
// second line of defence.
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
