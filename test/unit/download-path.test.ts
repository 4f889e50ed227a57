// isDownloadPath answers without building the extension string (it runs for every asset a site
// hands out): it must agree with the plain rule, extensionOf's extension in the download list.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { DOWNLOAD_EXTENSIONS, extensionOf, isDownloadPath } from "../../src/features/analytics/classify";

const plainRule = (path: string) => DOWNLOAD_EXTENSIONS.has(extensionOf(path));

describe("isDownloadPath", () => {
  test("agrees with the plain rule on chosen paths", () => {
    const paths = ["/a.pdf", "/A.PDF", "/x/report.Xlsx", "/.pdf", "/dir/.zip", "/file.", "/pdf", "/a.pdf/", "/a.pd", "/a.pdff", "/a.tar.gz", "/a.7z"];
    paths.push("/a.m\u212Av", "/a.\u0130so", "/caf\u00e9.zip", "/a.zip\u00e9", "", ".", "/", "a.epub", "/x.webm?", "/archive.ZIP");
    for (const p of paths) expect([p, isDownloadPath(p)]).toEqual([p, plainRule(p)]);
    expect(isDownloadPath("/files/manual.PDF")).toBe(true);
    expect(isDownloadPath("/style.css")).toBe(false);
  });

  test("agrees with the plain rule on any path", () => {
    const extensions = [...DOWNLOAD_EXTENSIONS];
    const piece = fc.oneof(
      fc.constantFrom("/", ".", "a", "Z", "0", "-", "\u212A", "\u0130", "\u00e9", "\u00df", "%2E"),
      fc.constantFrom(...extensions).map((e) => e.toUpperCase()),
      fc.constantFrom(...extensions),
      fc.string({ maxLength: 3 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (parts) => {
        const p = parts.join("");
        expect(isDownloadPath(p)).toBe(plainRule(p));
      }),
      { numRuns: 5000 },
    );
  });
});
