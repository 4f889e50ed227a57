// CSV bodies (form submissions, a site's leads; their headers are in http/content-disposition.ts).
// Rows are read a page at a time as the reader takes them: an export of any size holds one page in
// memory and holds the event loop for one page's work at a time, and a reader that stops reading
// stops the export.
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
