// The redirect matcher (offsets on the path string, a pattern index, remembered outcomes) against
// a plain reference written here: split the path, try every rule in file order, fill the
// destination with a regular-expression replace. Random rule sets, paths, queries and shadowing.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { OUTCOMES_MAX, SiteRules } from "../../src/features/publish/rules/match";
import { compileRules, type RedirectRule, type Segment } from "../../src/features/publish/rules/syntax";

type Expected = { line: number; location: string } | null;

/** One segment of a pattern against the path's segments: placeholders take one, the splat the rest. */
function captures(from: Segment[], segs: string[]): Record<string, string> | null {
  const out: Record<string, string> = {};
  const same = (s: Segment, v: string) => {
    if (typeof s === "string") return s === v;
    if ("name" in s) out[s.name] = v;
    return true;
  };
  const star = from.findIndex((s) => typeof s === "object" && "splat" in s);
  if (star === -1) return from.length === segs.length && from.every((s, i) => same(s, segs[i]!)) ? out : null;
  const after = from.length - star - 1;
  if (segs.length < star + after) return null;
  for (let i = 0; i < star; i++) if (!same(from[i]!, segs[i]!)) return null;
  for (let j = 0; j < after; j++) if (!same(from[star + 1 + j]!, segs[segs.length - after + j]!)) return null;
  out.splat = segs.slice(star, segs.length - after).join("/");
  return out;
}

function reference(rules: RedirectRule[], path: string, search: string, contentExists: boolean): Expected {
  const segs = path === "" ? [] : path.split("/");
  const params = new URLSearchParams(search);
  for (const rule of rules) {
    if (contentExists && !rule.force) continue;
    const caps = captures(rule.from, segs);
    if (caps === null) continue;
    let queryMet = true;
    for (const [key, want] of rule.query) {
      const got = params.get(key);
      if (got === null || (typeof want === "string" && want !== "" && got !== want)) queryMet = false;
      else if (typeof want === "object") caps[want.name] = got;
    }
    if (!queryMet) continue;
    let to = rule.to.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (whole, name: string) => {
      const v = caps[name];
      if (v === undefined) return whole;
      return name === "splat" ? v.split("/").map(encodeURIComponent).join("/") : encodeURIComponent(v);
    });
    if (to.startsWith("//") || to.startsWith("/\\")) to = `/${to.replace(/^[\/\\]+/, "")}`;
    if (search !== "" && rule.query.length === 0 && !to.includes("?")) to += search;
    return { line: rule.line, location: to };
  }
  return null;
}

// Rule text as a site would write it: literals (one %-encoded, decoded before matching), placeholders, a splat.
const literal = fc.constantFrom("a", "b", "docs", "caf%C3%A9", "x%20y");
const pathSegment = fc.constantFrom("a", "b", "docs", "café", "x y", "a%b", "q?");
const patternArb = fc
  .tuple(
    fc.array(fc.oneof({ weight: 3, arbitrary: literal }, { weight: 2, arbitrary: fc.constant(":p") }), { maxLength: 4 }),
    fc.option(fc.nat(4), { nil: undefined }),
  )
  .map(([segs, star]) => {
    const named = segs.map((s, i) => (s === ":p" ? `:p${i}` : s));
    return star === undefined ? named : [...named.slice(0, star), "*", ...named.slice(star)];
  });
const queryArb = fc.array(fc.constantFrom("id=:id", "page=2", "flag=", "p0=:p0"), { maxLength: 2 }).map((q) => [...new Set(q)]);

const ruleArb = fc.record({
  from: patternArb,
  query: queryArb,
  to: fc.constantFrom("/to", "/to/:splat", "/to/:p0/:p1", "/:splat", "/:p0", "https://example.org/:splat?x=1", "/to?kept=1", "/t/:id", "/port:8080/:p1"),
  status: fc.constantFrom("301", "302", "200", "404"),
  force: fc.boolean(),
});

const ruleText = (r: { from: string[]; query: string[]; to: string; status: string; force: boolean }, i: number) =>
  `/${r.from.join("/")} ${r.query.join(" ")} ${r.to.replace("/to", `/to${i}`)} ${r.status}${r.force ? "!" : ""}`;

const requestArb = fc.record({
  path: fc.array(pathSegment, { maxLength: 6 }).map((s) => s.join("/")),
  search: fc.constantFrom("", "?id=7", "?page=2&flag", "?id=a%20b&page=3", "?p0=z", "?utm=x"),
  contentExists: fc.boolean(),
});

describe("the matcher agrees with a plain split-and-scan reference", () => {
  test("random rule sets, paths, queries and shadowing: same rule, same Location, asked twice (remembered outcomes)", () => {
    fc.assert(
      fc.property(fc.array(ruleArb, { minLength: 1, maxLength: 30 }), fc.array(requestArb, { minLength: 1, maxLength: 20 }), (rules, requests) => {
        const compiled = compileRules(rules.map(ruleText).join("\n"), null).rules;
        const matcher = new SiteRules(compiled);
        for (let round = 0; round < 2; round++)
          for (const { path, search, contentExists } of requests) {
            const want = reference(compiled.redirects, path, search, contentExists);
            const lazy = matcher.redirect(path, search, () => contentExists);
            const eager = matcher.redirect(path, search, contentExists);
            for (const got of [lazy, eager]) expect(got === null ? null : { line: got.rule.line, location: got.location }).toEqual(want);
          }
      }),
      { numRuns: 400 },
    );
  });

  test("a static rule set (no remembered outcomes) agrees too", () => {
    const staticPattern = fc.array(literal, { maxLength: 3 });
    fc.assert(
      fc.property(fc.array(staticPattern, { minLength: 1, maxLength: 20 }), fc.array(requestArb, { maxLength: 20 }), (patterns, requests) => {
        const compiled = compileRules(patterns.map((p, i) => `/${p.join("/")} /to/${i} 301`).join("\n"), null).rules;
        const matcher = new SiteRules(compiled);
        for (const { path, search, contentExists } of requests) {
          const got = matcher.redirect(path, search, contentExists);
          expect(got === null ? null : { line: got.rule.line, location: got.location }).toEqual(reference(compiled.redirects, path, search, contentExists));
        }
        expect(matcher.outcomesHeld).toBe(0);
      }),
      { numRuns: 200 },
    );
  });
});

describe("remembered outcomes", () => {
  const rules = () => new SiteRules(compileRules("/blog/:slug /posts/:slug 301\n/x/* /y/:splat 302\n", null).rules);

  test("a flood of distinct paths never holds more than the bound, and answers stay right", () => {
    const r = rules();
    for (let i = 0; i < OUTCOMES_MAX * 3 + 17; i++) {
      expect(r.redirect(`blog/post-${i}`, "", false)?.location).toBe(`/posts/post-${i}`);
      expect(r.outcomesHeld).toBeLessThanOrEqual(OUTCOMES_MAX);
    }
    expect(r.redirect("x/a/b", "", false)?.location).toBe("/y/a/b");
    expect(r.redirect("blog/post-1", "", false)?.location).toBe("/posts/post-1");
  });

  test("paths asked with a query string, and very long paths, are not remembered", () => {
    const r = rules();
    expect(r.redirect("blog/a", "?utm=1", false)?.location).toBe("/posts/a?utm=1");
    expect(r.redirect(`blog/${"z".repeat(400)}`, "", false)?.location).toBe(`/posts/${"z".repeat(400)}`);
    expect(r.outcomesHeld).toBe(0);
    expect(r.redirect("blog/a", "", false)?.location).toBe("/posts/a");
    expect(r.outcomesHeld).toBe(1);
  });

  test("whether content exists is asked only when it changes the answer", () => {
    const r = new SiteRules(compileRules("/soft/:a /s 301\n/hard/:a /h 301!\n/both/:a /b1 301\n/both/:a /b2 301!\n", null).rules);
    let asked = 0;
    const exists = () => (asked++, true);
    expect(r.redirect("nothing/here", "", exists)).toBeNull();
    expect(r.redirect("hard/1", "", exists)?.location).toBe("/h");
    expect(asked).toBe(0);
    expect(r.redirect("soft/1", "", exists)).toBeNull();
    expect(r.redirect("both/1", "", exists)?.location).toBe("/b2");
    expect(r.redirect("both/1", "", () => false)?.location).toBe("/b1");
    expect(asked).toBe(2);
  });

  test("with a key, the content check's answer is remembered per path and key", () => {
    const r = new SiteRules(compileRules("/p/:a /soft 301\n/p/:a /hard 301!\n", null).rules);
    const asked: string[] = [];
    const check = (path: string, exists: boolean) => () => (asked.push(path), exists);
    expect(r.redirect("p/1", "", check("p/1", true), 0)?.location).toBe("/hard");
    expect(r.redirect("p/1", "", check("p/1", true), 0)?.location).toBe("/hard");
    expect(r.redirect("p/1", "", check("p/1", false), 1)?.location).toBe("/soft");
    expect(r.redirect("p/1", "", check("p/1", false), 1)?.location).toBe("/soft");
    expect(r.redirect("p/2", "", check("p/2", false), 0)?.location).toBe("/soft");
    expect(asked).toEqual(["p/1", "p/1", "p/2"]);
    // Without a key (or with a query string: the outcome is not remembered) it is asked each time.
    r.redirect("p/1", "", check("p/1", true));
    r.redirect("p/1", "?x", check("p/1", true), 0);
    expect(asked).toHaveLength(5);
  });
});
