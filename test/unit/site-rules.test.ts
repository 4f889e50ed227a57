// The site rules compiler and matcher on their own: first match wins across static and dynamic
// rules, and no pattern (however adversarial) makes a request take long.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { SiteRules } from "../../src/features/publish/rules/match";
import { compileRules } from "../../src/features/publish/rules/syntax";
import { withSiteHeaders } from "../../src/sites/server";

const rulesOf = (text: string) => new SiteRules(compileRules(text, null).rules);

describe("matching order", () => {
  test("the first matching rule wins, whether it is static or dynamic", () => {
    const r = rulesOf("/a/* /first 301\n/a/b /second 301\n/:x/b /third 301\n");
    expect(r.redirect("a/b", "", false)?.location).toBe("/first");
    const s = rulesOf("/a/b /second 301\n/a/* /first 301\n");
    expect(s.redirect("a/b", "", false)?.location).toBe("/second");
  });

  test("a splat in the middle takes the rest; placeholders take one segment", () => {
    const r = rulesOf("/x/*/edit /e/:splat 301\n/u/:id /users/:id 301\n");
    expect(r.redirect("x/a/b/c/edit", "", false)?.location).toBe("/e/a/b/c");
    expect(r.redirect("u/1/2", "", false)).toBeNull();
    expect(r.redirect("u/caf\u00e9", "", false)?.location).toBe("/users/caf%C3%A9");
  });

  test("when content exists only forced rules apply", () => {
    const r = rulesOf("/p /soft 301\n/p /hard 301!\n");
    expect(r.redirect("p", "", false)?.location).toBe("/soft");
    expect(r.redirect("p", "", true)?.location).toBe("/hard");
  });
});

describe("the index agrees with trying every rule in file order", () => {
  // A plain reference matcher: one placeholder per segment, the splat any number of segments.
  const matches = (pattern: string[], segs: string[]): boolean => {
    const star = pattern.indexOf("*");
    if (star === -1) return pattern.length === segs.length && pattern.every((p, i) => p.startsWith(":") || p === segs[i]);
    const after = pattern.length - star - 1;
    if (segs.length < star + after) return false;
    const same = (p: string, v: string) => p.startsWith(":") || p === v;
    return pattern.slice(0, star).every((p, i) => same(p, segs[i]!)) && pattern.slice(star + 1).every((p, j) => same(p, segs[segs.length - after + j]!));
  };
  const segment = fc.constantFrom(":a", ":b", "x", "y", "z");
  const pattern = fc
    .tuple(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.option(fc.nat(4), { nil: undefined }))
    .map(([segs, star]) => (star === undefined ? segs : [...segs.slice(0, star), "*", ...segs.slice(star)]))
    .map((segs) => segs.map((s, i) => (s.startsWith(":") ? `${s}${i}` : s))); // placeholder names unique within a pattern

  test("the first matching rule by a linear scan is the one the index finds (static, placeholder-first, splat rules)", () => {
    fc.assert(
      fc.property(fc.array(pattern, { minLength: 1, maxLength: 40 }), fc.array(fc.constantFrom("x", "y", "z", "w"), { maxLength: 6 }), (patterns, path) => {
        const rules = rulesOf(patterns.map((p, i) => `/${p.join("/")} /to/${i} 301`).join("\n"));
        const expected = patterns.findIndex((p) => matches(p, path));
        const got = rules.redirect(path.join("/"), "", false);
        expect(got === null ? -1 : Number(got.location.split("/")[2])).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
});

describe("bounded work", () => {
  // Patterns made of the characters that make naive regex matchers backtrack.
  const segment = fc.oneof(fc.constant("*"), fc.constant(":a"), fc.constant(":b"), fc.constant("a"), fc.constant("aa"), fc.stringMatching(/^[a*:]{1,6}$/));
  const pattern = fc.array(segment, { minLength: 1, maxLength: 30 }).map((s) => `/${s.join("/")}`);

  test("no rule set and no path make a lookup slow (adversarial patterns, 1,000 rules)", () => {
    fc.assert(
      fc.property(fc.array(pattern, { minLength: 1, maxLength: 1000 }), fc.array(fc.constantFrom("a", "aa", "b"), { maxLength: 60 }), (patterns, path) => {
        const rules = rulesOf(patterns.map((p, i) => `${p} /to/${i} 301`).join("\n"));
        const started = performance.now();
        for (let i = 0; i < 20; i++) rules.redirect(path.join("/"), "", false);
        expect(performance.now() - started).toBeLessThan(1000);
      }),
      { numRuns: 40 },
    );
  });

  test("a static lookup costs the same with 10 or 10,000 rules", () => {
    const make = (n: number) => rulesOf(Array.from({ length: n }, (_, i) => `/page-${i} /to-${i} 301`).join("\n"));
    const time = (r: SiteRules) => {
      const started = performance.now();
      for (let i = 0; i < 20_000; i++) r.redirect("no/such/page", "", false);
      return performance.now() - started;
    };
    const small = make(10);
    const large = make(10_000);
    // Best of several alternating runs: a shared machine's pauses hit single runs, not every one.
    let best = { small: Infinity, large: Infinity };
    for (let i = 0; i < 5; i++) best = { small: Math.min(best.small, time(small)), large: Math.min(best.large, time(large)) };
    expect(best.large).toBeLessThan(best.small * 5 + 20);
  });
});

describe("headers on custom domains", () => {
  test("Set-Cookie goes out on a custom domain only; Cache-Control stays private on a gated site", () => {
    const changes = new Map<string, string | null>([
      ["set-cookie", "a=1\nb=2"],
      ["cache-control", "public, max-age=600"],
    ]);
    const custom = withSiteHeaders(new Response("x"), changes, { custom: true, priv: false, extra: {} });
    expect(custom.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(custom.headers.get("cache-control")).toBe("public, max-age=600");
    const shared = withSiteHeaders(new Response("x"), changes, { custom: false, priv: false, extra: {} });
    expect(shared.headers.getSetCookie()).toEqual([]);
    const gated = withSiteHeaders(new Response("x", { headers: { "cache-control": "private, no-cache" } }), changes, { custom: true, priv: true, extra: {} });
    expect(gated.headers.get("cache-control")).toBe("private, no-cache");
  });

  test('Clear-Site-Data "cookies" goes out on a custom domain only (the owner\'s own registrable domain)', () => {
    const changes = new Map<string, string | null>([["clear-site-data", '"cookies", "cache"']]);
    expect(withSiteHeaders(new Response("x"), changes, { custom: true, priv: false, extra: {} }).headers.get("clear-site-data")).toBe('"cookies", "cache"');
    expect(withSiteHeaders(new Response("x"), changes, { custom: false, priv: false, extra: {} }).headers.get("clear-site-data")).toBe('"cache"');
  });
});
