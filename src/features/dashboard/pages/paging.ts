// The paged lists of the dashboard: the offset from the query, the links to the pages around, and
// where the shown rows stand in the whole list.
import { html, type SafeHtml } from "../../../http/pages/layout";

/** A page's offset from the query (?offset=, or another name), never negative. */
export const offsetOf = (query: Record<string, string | undefined>, name = "offset") => Math.max(0, Number.parseInt(query[name] ?? "0", 10) || 0);

/**
 * Links to the pages around this one; `link(offset)` builds the URL of another page. A list
 * shown newest first says Newer/Older, any other Previous/Next.
 */
export function pager(offset: number, size: number, total: number, link: (offset: number) => string, order: "newest" | "plain" = "plain"): SafeHtml {
  const [back, on] = order === "newest" ? ["← Newer", "Older →"] : ["← Previous", "Next →"];
  const prev = offset > 0 ? html`<a href="${link(Math.max(0, offset - size))}">${back}</a>` : html`<span></span>`;
  const next = offset + size < total ? html`<a href="${link(offset + size)}">${on}</a>` : html``;
  return html`<div class="pager">${prev}${next}</div>`;
}

/** "101-150 of 150, <order>": where the shown rows stand. */
export const rangeNote = (offset: number, shown: number, total: number, order: string): SafeHtml =>
  html`<div class="pager small"><span class="muted">${(offset + 1).toLocaleString("en")}-${(offset + shown).toLocaleString("en")} of ${total.toLocaleString("en")}, ${order}</span></div>`;
