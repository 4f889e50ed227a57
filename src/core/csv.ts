// CSV downloads (form submissions, a site's leads). Rows are read a page at a time as the reader
// takes them: an export of any size holds one page in memory and holds the event loop for one
// page's work at a time, and a reader that stops reading stops the export.
import { stringify } from "csv-stringify/sync";

/** Rows read per step; a step also decrypts what it reads, so it stays small. */
export const CSV_PAGE = 200;

export interface CsvPage<C> {
  rows: string[][];
  /** Where the next page starts; null after the last page. */
  next: C | null;
}

/**
 * A UTF-8 CSV body: a byte-order mark (spreadsheets then read non-ASCII text as UTF-8), the header,
 * then each page of `pageAfter(cursor)` until it returns no next cursor. Cells that a spreadsheet
 * would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return) are
 * prefixed with a quote, so a visitor's input stays text in the owner's spreadsheet.
 */
export function csvStream<C>(header: string[], pageAfter: (cursor: C | null) => CsvPage<C>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const lines = (records: string[][]) => encoder.encode(stringify(records, { escape_formulas: true, record_delimiter: "windows" }));
  let cursor: C | null = null;
  let started = false;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(new Uint8Array([0xef, 0xbb, 0xbf]));
        controller.enqueue(lines([header]));
        return;
      }
      const page = pageAfter(cursor);
      if (page.rows.length > 0) controller.enqueue(lines(page.rows));
      if (page.next === null) controller.close();
      else cursor = page.next;
    },
  });
}

/**
 * Content-Disposition for a download: the name in ASCII (anything else becomes "-") and in
 * UTF-8 (RFC 6266), so every browser saves it under a readable name.
 */
export function attachmentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\w.-]+/g, "-").replace(/^-+|-+$/g, "") || "download";
  // RFC 5987 allows fewer characters than encodeURIComponent leaves: a ' would end the charset part.
  // toWellFormed: a lone surrogate (a title stored before titles were checked) would make it throw.
  const encoded = encodeURIComponent(fileName.toWellFormed()).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** The headers of a CSV download named `fileName`. */
export const csvHeaders = (fileName: string): Record<string, string> => ({
  "content-type": "text/csv; charset=utf-8",
  "content-disposition": attachmentDisposition(fileName),
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
});
