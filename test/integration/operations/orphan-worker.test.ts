// A serving worker must not outlive its primary: left behind, it would keep the shared HTTP port
// (reusePort) and answer from stale caches beside the next primary. It knows its primary by the
// pid in its settings, so a primary killed while the worker was still booting (the worker's
// parent is then already init) is noticed too.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { relaySocketPath } from "../../../src/serving-relay";
import { WORKER_ENV, type WorkerSettings } from "../../../src/serving-workers";
import { pierCommand } from "../../helpers/cli";
import { freePort } from "../../helpers/pebble";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier({});
});
afterAll(() => t?.stop());

test("a serving worker whose parent is not its primary stops at once and exits 0", async () => {
  const settings: WorkerSettings = {
    config: t.pier.deps.config,
    httpPort: await freePort(),
    httpsPort: null,
    relaySocket: relaySocketPath(t.dataDir),
    index: 1,
    // Not this test process, which is the worker's parent: as if the primary had died before the
    // worker read its parent.
    primaryPid: 1,
  };
  const proc = Bun.spawn([...(await pierCommand()), "serve"], {
    env: { ...process.env, [WORKER_ENV]: JSON.stringify(settings) },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
  try {
    const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    expect(err).not.toContain("could not start");
    expect(code).toBe(0);
  } finally {
    clearTimeout(timer);
  }
});
