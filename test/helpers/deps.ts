// Real dependencies (SQLite with migrations, disk blob store, job queue) on a temp data dir,
// without listeners: for unit tests of the storage and job core.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config";
import { ManualClock } from "../../src/core/clock";
import type { Deps } from "../../src/core/context";
import { silentLogger } from "../../src/core/log";
import { createDeps } from "../../src/runtime";

export interface TestDeps {
  deps: Deps;
  clock: ManualClock;
  dataDir: string;
  close(): void;
}

export async function testDeps(): Promise<TestDeps> {
  const dataDir = mkdtempSync(join(tmpdir(), "pier-deps-"));
  const config = loadConfig({}, { "data-dir": dataDir, "secret-key": "unit-test-secret-unit-test-secret-0123", "smtp-port": "off" });
  const clock = new ManualClock();
  const deps = await createDeps(config, 8080, { clock, log: silentLogger });
  return {
    deps,
    clock,
    dataDir,
    close() {
      deps.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
