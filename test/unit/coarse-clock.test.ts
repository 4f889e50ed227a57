// The coarse clock analytics stamps hits with: never ahead of the real time, never more than its
// refresh interval (plus a busy machine's timer delay) behind, and it moves on by itself.
import { expect, test } from "bun:test";
import { COARSE_CLOCK_MS, coarseNow } from "../../src/core/clock";

test("coarseNow follows Date.now within its interval and keeps up as time passes", async () => {
  const lag = () => {
    const before = Date.now();
    const coarse = coarseNow();
    const after = Date.now();
    expect(coarse).toBeLessThanOrEqual(after);
    return before - coarse;
  };
  expect(lag()).toBeLessThanOrEqual(COARSE_CLOCK_MS);
  const first = coarseNow();
  await Bun.sleep(COARSE_CLOCK_MS * 3);
  // Three intervals later it has been refreshed, and is again within (a loaded machine's) reach.
  expect(coarseNow()).toBeGreaterThan(first);
  expect(lag()).toBeLessThanOrEqual(COARSE_CLOCK_MS * 3);
});
