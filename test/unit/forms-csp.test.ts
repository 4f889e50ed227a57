// A site's own CSP widened for hosted forms: what forms need is added along each directive's
// fallback chain, nothing else changes, and a policy that allows inline styles keeps doing so.
import { describe, expect, test } from "bun:test";
import { styleHash, widenCspForForms } from "../../src/features/forms/csp";

const HASH = styleHash(".x{}");
const widen = (csp: string, turnstile = false) => widenCspForForms(csp, { turnstile, styleHash: HASH });

describe("widenCspForForms", () => {
  test("default-src 'none' gets exactly Pier's scripts, workers, fetches and style block", () => {
    expect(widen("default-src 'none'; img-src 'self'")).toBe(
      `default-src 'none'; img-src 'self'; script-src 'self'; worker-src 'self' data: blob:; connect-src 'self'; style-src ${HASH}`,
    );
  });

  test("existing directives are extended, 'none' dropped, duplicates not repeated", () => {
    expect(widen("script-src 'self' https://cdn.example; connect-src 'none'")).toBe(
      "script-src 'self' https://cdn.example; connect-src 'self'; worker-src 'self' https://cdn.example data: blob:",
    );
  });

  test("'unsafe-inline' styles stay allowed: no hash is added next to them", () => {
    expect(widen("default-src 'self'; style-src 'self' 'unsafe-inline'")).toBe(
      "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self'; worker-src 'self' data: blob:; connect-src 'self'",
    );
  });

  test("Turnstile adds Cloudflare's origin for script, fetch and frame only when asked", () => {
    const on = widen("default-src 'self'", true);
    expect(on).toContain("script-src 'self' https://challenges.cloudflare.com");
    expect(on).toContain("frame-src 'self' https://challenges.cloudflare.com");
    expect(widen("default-src 'self'")).not.toContain("cloudflare");
  });

  test("a policy that restricts nothing relevant stays as it is", () => {
    expect(widen("frame-ancestors 'none'")).toBe("frame-ancestors 'none'");
  });
});
