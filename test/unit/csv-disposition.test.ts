// A download's name in Content-Disposition: an ASCII fallback and the UTF-8 name (RFC 6266 /
// RFC 5987), whatever characters a bucket's title or a site's address hold.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { attachmentDisposition } from "../../src/http/content-disposition";

test("the UTF-8 name decodes back to the name, and both parts use only the characters their syntax allows", () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 80, unit: "grapheme" }), (name) => {
      const header = attachmentDisposition(`${name}.csv`);
      const m = /^attachment; filename="([^"\\]*)"; filename\*=UTF-8''([A-Za-z0-9!#$&+\-.^_`|~%]*)$/.exec(header);
      expect(m).not.toBeNull();
      expect(m![1]).toMatch(/^[\w.-]+$/);
      expect(decodeURIComponent(m![2]!)).toBe(`${name}.csv`);
    }),
    { numRuns: 300 },
  );
  expect(attachmentDisposition("half \uD800 pair.csv")).toContain("filename*=UTF-8''half%20%EF%BF%BD%20pair.csv");
  expect(attachmentDisposition("Bob's (site) *.csv")).toBe(`attachment; filename="Bob-s-site-.csv"; filename*=UTF-8''Bob%27s%20%28site%29%20%2A.csv`);
});
