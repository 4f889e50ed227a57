// README rendering in the worker (src/sites/markdown.ts): each render gets its own time budget
// from the moment the worker starts it. Review item 14: the timer ran from the moment a render
// was queued, so a README waiting behind a slow one was judged too slow, cached as plain text
// for good, and the worker was killed in the middle of a render that was within its budget.
import { expect, test } from "bun:test";
import { renderReadme } from "../../src/sites/markdown";

/** Markdown that takes marked a few hundred milliseconds; `tag` makes each text distinct. */
const slowButFine = (tag: string) => `${tag}\n\n${"*a".repeat(20_000)}`;

test("READMEs queued behind each other all render within their own time limit", async () => {
  // Measure this machine: how long one such render takes in the (warm) worker.
  await renderReadme("# warm up", 30_000);
  // The slower of two probes: one probe that happened to run on an idle core set a limit a
  // render slowed by a moment's contention could overrun (a failed CI-like run, 2026-11-29).
  let oneRender = 0;
  for (const tag of ["probe one", "probe two"]) {
    const t0 = performance.now();
    const probe = await renderReadme(slowButFine(tag), 30_000);
    oneRender = Math.max(oneRender, performance.now() - t0);
    expect(probe).toContain("<em>");
  }

  // Each render fits its limit with room to spare; three in a row do not fit in one limit.
  // 2.5x: slack for a busy machine (one render can take twice the probe), still under three renders.
  const limit = Math.max(200, oneRender * 2.5);
  const results = await Promise.all(["one", "two", "three"].map((tag) => renderReadme(slowButFine(tag), limit)));
  for (const html of results) {
    expect(html.startsWith("<pre>")).toBe(false);
    expect(html).toContain("<em>");
  }
});

test("a render that overruns its own limit is shown as text, and the next README still renders", async () => {
  const [slow, next] = await Promise.all([renderReadme(slowButFine("overrun"), 1), renderReadme("# Next\n\n*fine*", 30_000)]);
  expect(slow.startsWith("<pre>")).toBe(true);
  expect(next).toContain("<h1>Next</h1>");
});
