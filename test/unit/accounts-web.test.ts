// Pure pieces of the account pages: templates and escaping, safe redirects, attempt windows,
// and the admin CLI's flag parsing.
import { describe, expect, test } from "bun:test";
import { SigninGuard } from "../../src/features/accounts/signin-limits";
import { FailureLog } from "../../src/core/guess-limits";
import { UserCodeGuard } from "../../src/features/oauth/user-code-limits";
import { safeNext } from "../../src/http/browser";
import { escapeHtml, html, loadTemplate, renderTemplate, SafeHtml } from "../../src/http/pages/layout";

describe("templates", () => {
  test("values are escaped, raw slots take only SafeHtml, sections nest", () => {
    const tpl = '<p title="{{a}}">{{a}}</p>{{{b}}}{{#on}}[on{{#inner}} inner{{/inner}}]{{/on}}{{^on}}off{{/on}}';
    const out = renderTemplate(tpl, { a: `<x onclick="y">&'`, b: html`<i>${"<b>"}</i>`, on: true, inner: "yes" });
    expect(out).toBe('<p title="&#60;x onclick&#61;&#34;y&#34;&#62;&#38;&#39;">&#60;x onclick&#61;&#34;y&#34;&#62;&#38;&#39;</p><i>&#60;b&#62;</i>[on inner]');
    expect(renderTemplate("{{#on}}x{{/on}}{{^on}}y{{/on}}", { on: false })).toBe("y");
    expect(() => renderTemplate("{{{b}}}", { b: "<script>" })).toThrow();
    expect(renderTemplate("{{missing}}|{{{missing}}}", {})).toBe("|");
  });

  test("html`` escapes interpolations, keeps SafeHtml and joins arrays", () => {
    const rows = ["<a>", "b"].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${rows}</ul>`.value).toBe("<ul><li>&#60;a&#62;</li><li>b</li></ul>");
    expect(new SafeHtml("x").toString()).toBe("x");
    expect(escapeHtml("`=")).toBe("&#96;&#61;");
  });

  test("every page template is embedded and loads", async () => {
    for (const name of ["layout", "signin", "signup", "signup-closed", "two-factor", "dashboard", "access", "security"]) {
      expect((await loadTemplate(`auth/${name}.html`)).length).toBeGreaterThan(100);
    }
  });
});

describe("safeNext", () => {
  test("keeps same-site paths, refuses everything that could leave the site", () => {
    expect(safeNext("/account/access?x=1")).toBe("/account/access?x=1");
    for (const bad of ["//evil.example", "/\\evil.example", "https://evil.example/", "javascript:alert(1)", "", "/a\nb", undefined, 42]) {
      expect(safeNext(bad)).toBe("/dashboard");
    }
  });
});

describe("sign-in attempt limits", () => {
  test("a window allows max failures, then blocks until the oldest leaves the window", () => {
    const w = new FailureLog(60_000);
    w.add("k", 0, 3);
    w.add("k", 10_000, 3);
    expect(w.waitFor("k", 3, 10_000)).toBe(0);
    w.add("k", 20_000, 3);
    expect(w.waitFor("k", 3, 20_000)).toBe(40);
    expect(w.waitFor("k", 3, 59_000)).toBe(1);
    expect(w.waitFor("k", 3, 60_001)).toBe(0);
    w.clear("k");
    expect(w.waitFor("k", 3, 20_000)).toBe(0);
  });

  test("a guess being verified counts as a failure until its verdict: side-by-side guesses cannot all pass the check", () => {
    const g = new SigninGuard({ perEmail: 3, perIp: 30, windowMs: 60_000, signupsPerIpHour: 20 });
    const ends = [0, 1, 2].map(() => {
      g.check("p@x", "5.5.5.5", 0);
      return g.begin("p@x", "5.5.5.5");
    });
    // Three checks in flight: a fourth waits a second (they end in milliseconds).
    expect(() => g.check("p@x", "5.5.5.5", 0)).toThrow(/Try again in 1 minute/);
    expect(() => g.check("p@x", "6.6.6.6", 0)).not.toThrow();
    // Two turn out wrong, one right: one try is free again, and the failures then count as usual.
    g.fail("p@x", "5.5.5.5", 0);
    ends[0]!();
    g.fail("p@x", "5.5.5.5", 0);
    ends[1]!();
    ends[2]!();
    ends[2]!(); // ending twice changes nothing
    expect(() => g.check("p@x", "5.5.5.5", 0)).not.toThrow();
    g.fail("p@x", "5.5.5.5", 0);
    expect(() => g.check("p@x", "5.5.5.5", 0)).toThrow(/Try again in 1 minute/);
  });

  test("per-IP limit catches one address trying many emails", () => {
    const g = new SigninGuard({ perEmail: 2, perIp: 3, windowMs: 60_000, signupsPerIpHour: 20 });
    g.fail("a@x", "1.1.1.1", 0);
    g.fail("b@x", "1.1.1.1", 0);
    g.fail("c@x", "1.1.1.1", 0);
    expect(() => g.check("d@x", "1.1.1.1", 1)).toThrow(/from your network address/);
    expect(() => g.check("d@x", "2.2.2.2", 1)).not.toThrow();
  });

  test("failures on an email lock out the failing address, never a fresh one; success clears that address", () => {
    const g = new SigninGuard({ perEmail: 2, perIp: 30, windowMs: 60_000, signupsPerIpHour: 20 });
    g.fail("e@x", "2.2.2.2", 0);
    g.fail("e@x", "2.2.2.2", 0);
    try {
      g.check("e@x", "2.2.2.2", 1);
      throw new Error("not blocked");
    } catch (e) {
      expect((e as { code: string }).code).toBe("TOO_MANY_ATTEMPTS");
      expect((e as { retryAfter: number }).retryAfter).toBe(60);
    }
    expect(() => g.check("e@x", "4.4.4.4", 1)).not.toThrow();
    g.succeed("e@x", "2.2.2.2");
    expect(() => g.check("e@x", "2.2.2.2", 1)).not.toThrow();
  });

  test("an IPv6 attacker cannot rotate through its /64", () => {
    const g = new SigninGuard({ perEmail: 2, perIp: 30, windowMs: 60_000, signupsPerIpHour: 20 });
    g.fail("e@x", "2001:db8:1:2::1", 0);
    g.fail("e@x", "2001:db8:1:2:ffff::9", 0);
    expect(() => g.check("e@x", "2001:0db8:0001:0002:abcd::1", 1)).toThrow(/network address/);
    expect(() => g.check("e@x", "2001:db8:1:3::1", 1)).not.toThrow();
  });
});

describe("sign-up limit", () => {
  test("one address can create a bounded number of accounts per hour", () => {
    const g = new SigninGuard({ perEmail: 2, perIp: 3, windowMs: 60_000, signupsPerIpHour: 2 });
    g.recordSignup("1.1.1.1", 0);
    g.recordSignup("1.1.1.1", 0);
    expect(() => g.checkSignup("1.1.1.1", 1000)).toThrow(/Too many new accounts/);
    // A count limit, not a wrong guess: the general rate-limit code.
    expect(codeOf(() => g.checkSignup("1.1.1.1", 1000))).toBe("RATE_LIMIT_EXCEEDED");
    expect(() => g.checkSignup("2.2.2.2", 1000)).not.toThrow();
    expect(() => g.checkSignup("1.1.1.1", 3600_001)).not.toThrow();
  });
});

const codeOf = (fn: () => void): string | undefined => {
  try {
    fn();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
};

describe("wrong-guess lockouts", () => {
  test("sign-in passwords and OAuth Connection IDs lock out with the same code", () => {
    const signin = new SigninGuard({ perEmail: 1, perIp: 30, windowMs: 60_000, signupsPerIpHour: 20 });
    signin.fail("e@x", "3.3.3.3", 0);
    const clock = { now: () => new Date(0) };
    const device = new UserCodeGuard(clock);
    for (let i = 0; i < 10; i++) device.miss("usr_1", "3.3.3.3");
    expect([codeOf(() => signin.check("e@x", "3.3.3.3", 1)), codeOf(() => device.check("usr_1", "3.3.3.3"))]).toEqual([
      "TOO_MANY_ATTEMPTS",
      "TOO_MANY_ATTEMPTS",
    ]);
  });
});
