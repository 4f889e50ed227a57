// Content-Disposition for what Pier hands out as a file (signed downloads, CSV exports): the
// file's name as an RFC 5987 ext-value, and for attachments an ASCII fallback (RFC 6266).

/**
 * The UTF-8 name as RFC 5987 allows it: encodeURIComponent leaves ' ( ) * as they are, and a '
 * would end the charset part; toWellFormed, because a lone surrogate would make it throw.
 */
export function extValue(fileName: string): string {
  return `UTF-8''${encodeURIComponent(fileName.toWellFormed()).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/** A download saved under its name: ASCII (anything else becomes "-") and UTF-8, so every browser reads one. */
export function attachmentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\w.-]+/g, "-").replace(/^-+|-+$/g, "") || "download";
  return `attachment; filename="${ascii}"; filename*=${extValue(fileName)}`;
}

/** The headers of a CSV download named `fileName`. */
export const csvHeaders = (fileName: string): Record<string, string> => ({
  "content-type": "text/csv; charset=utf-8",
  "content-disposition": attachmentDisposition(fileName),
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
});
