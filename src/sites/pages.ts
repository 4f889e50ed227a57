// Pier's own pages on site hosts (gates, not found, expired) built from the embedded templates
// in sites/site/. Every value put into a template is escaped here or by the caller.
import { escapeHtml, PAGE_CSP } from "../http/html";
import { siteAssets } from "../sites-assets.gen";

export interface SiteTemplates {
  page: string;
  autoindex: string;
  robotsPreview: string;
}

let loaded: Promise<SiteTemplates> | null = null;

export function loadSiteTemplates(): Promise<SiteTemplates> {
  loaded ??= (async () => ({
    page: await Bun.file(siteAssets["site/page.html"]!).text(),
    autoindex: await Bun.file(siteAssets["site/autoindex.html"]!).text(),
    robotsPreview: await Bun.file(siteAssets["site/robots-preview.txt"]!).text(),
  }))();
  return loaded;
}

/** Replace {{ name }} macros (optional inner whitespace); unknown macros are left as they are. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (m, name: string) => (name in values ? values[name]! : m));
}

export function pageResponse(t: SiteTemplates, status: number, title: string, bodyHtml: string, headers: Record<string, string> = {}): Response {
  const html = fillTemplate(t.page, { title: escapeHtml(title), body: bodyHtml });
  return new Response(html, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "content-security-policy": PAGE_CSP,
      "referrer-policy": "same-origin",
      ...headers,
    },
  });
}

export const messageBody = (heading: string, message: string): string => `<h1>${escapeHtml(heading)}</h1><p>${escapeHtml(message)}</p>`;
