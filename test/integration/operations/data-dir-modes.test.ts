// A data dir that existed before Pier (./data in a checkout, Docker's /data, made 0755 under the
// usual umask 022) used to stay 0755 with pier.db, -wal and -shm 0644: any local user could read
// received mail, the outbox's login codes and site leads. Every start now tightens the folder to
// 0700 and the database files to 0600 and says so; `pier admin check` reports (and --repair fixes)
// what is still readable by others; the relay socket's folder is 0700 whatever it was; a backup
// into an existing folder is as private as the data dir.
import { afterEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { admin } from "../../../src/cli/admin";
import { createLogger } from "../../../src/core/log";
import { checkDataDir, createBackup } from "../../../src/features/operations";
import { startRelay } from "../../../src/serving-relay";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { newBucket } from "../../helpers/uploads";
import { pierCommand } from "../../helpers/cli";

const SECRET = "test-secret-key-test-secret-key-test-secret-key";
const mode = (p: string) => statSync(p).mode & 0o777;
const dbFiles = (dir: string) => ["pier.db", "pier.db-wal", "pier.db-shm"].map((f) => join(dir, f)).filter((p) => existsSync(p));

let cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

/** A data dir made the way `mkdir data` makes it under umask 022, and the umask left at 022. */
function wideDataDir(): string {
  const previous = process.umask(0o022);
  const dir = mkdtempSync(join(tmpdir(), "pier-modes-"));
  chmodSync(dir, 0o755);
  cleanup.push(() => {
    process.umask(previous);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

async function start(dataDir: string, lines: string[]): Promise<TestPier> {
  const t = await startTestPier({ dataDir }, { log: createLogger("info", (l) => lines.push(l)) });
  cleanup.push(() => t.stop());
  return t;
}

describe("data dir permissions", () => {
  test("a 0755 data dir is made 0700 at start and the database files 0600, even under umask 022", async () => {
    const dir = wideDataDir();
    const lines: string[] = [];
    const t = await start(dir, lines);
    const u = await t.user();
    await newBucket(t, u.key, "Private mail");
    expect(mode(dir)).toBe(0o700);
    const files = dbFiles(dir);
    expect(files.length).toBe(3); // WAL mode: the -wal and -shm files exist while the server runs
    for (const f of files) expect([f, mode(f)]).toEqual([f, 0o600]);
    // A new data dir held nothing anyone could read: told at info level, not as a warning.
    expect(lines.join("\n")).not.toContain("permissions were tightened");
    expect(lines.join("\n")).toContain("made private");
    expect(lines.join("\n")).toContain(`${dir} 0755 -> 0700`);
  });

  test("files an older Pier left 0644 are tightened at the next start, and a clean start says nothing", async () => {
    const dir = wideDataDir();
    const first = await start(dir, []);
    await first.stop();
    cleanup.pop();
    chmodSync(dir, 0o755);
    chmodSync(join(dir, "pier.db"), 0o644);
    const lines: string[] = [];
    const second = await start(dir, lines);
    expect([mode(dir), mode(join(dir, "pier.db"))]).toEqual([0o700, 0o600]);
    expect(lines.join("\n")).toContain(`${join(dir, "pier.db")} 0644 -> 0600`);
    await second.stop();
    cleanup.pop();
    const quiet: string[] = [];
    await start(dir, quiet);
    expect(quiet.join("\n")).not.toContain("permissions");
  });

  test("pier admin check reports a data dir and database others may read, and --repair makes them private", async () => {
    const dir = wideDataDir();
    const t = await start(dir, []);
    chmodSync(dir, 0o750);
    chmodSync(join(dir, "pier.db"), 0o640);
    const target = { sqlite: t.pier.deps.sqlite, blobs: t.pier.deps.blobs, clock: t.pier.deps.clock, dataDir: dir };
    const found = await checkDataDir(target);
    const perms = found.findings.filter((f) => f.kind === "permissions");
    expect(found.ok).toBe(false);
    expect(perms.map((f) => f.message)).toEqual([
      expect.stringContaining(`${dir} is 0750: other local users may read it`),
      expect.stringContaining(`${join(dir, "pier.db")} is 0640`),
    ]);
    const repaired = await checkDataDir(target, { repair: true });
    expect(repaired.findings.filter((f) => f.kind === "permissions").map((f) => f.repaired)).toEqual(["made 0700", "made 0600"]);
    expect([mode(dir), mode(join(dir, "pier.db"))]).toEqual([0o700, 0o600]);
    expect((await checkDataDir(target)).findings.filter((f) => f.kind === "permissions")).toEqual([]);

    // The admin command opens the data dir like the server: it tightens (warning on stderr) and the check passes.
    chmodSync(dir, 0o755);
    const out: string[] = [];
    const err: string[] = [];
    const code = await admin(["check", "--data-dir", dir, "--secret-key", SECRET], { out: (l) => out.push(l), err: (l) => err.push(l) });
    expect([code, out.join("\n")]).toEqual([0, ""]);
    expect(err.join("\n")).toMatch(/^ok: /);
    expect(mode(dir)).toBe(0o700);
  });

  test("the relay socket's folder is 0700 even when it already existed wider", async () => {
    const dir = wideDataDir();
    mkdirSync(join(dir, "run"), { mode: 0o755 });
    chmodSync(join(dir, "run"), 0o755);
    const relay = startRelay(join(dir, "run", "relay.sock"), () => new Response("ok"), 10);
    cleanup.push(() => relay.stop(true));
    expect(mode(join(dir, "run"))).toBe(0o700);
  });
  test("pier admin creates everything in a new data dir for its user only, whatever the umask it was started with", async () => {
    const parent = wideDataDir();
    const dir = join(parent, "data");
    const proc = Bun.spawn([...(await pierCommand()), "admin", "check", "--data-dir", dir, "--secret-key", SECRET], { stdout: "pipe", stderr: "pipe" });
    expect(await proc.exited).toBe(0);
    // blobs/ and its folders are made by mkdir without a mode: the umask alone decides.
    for (const p of [dir, join(dir, "blobs"), join(dir, "blobs", "tmp"), join(dir, "pier.db")]) expect([p, mode(p) & 0o077]).toEqual([p, 0]);
  });
  test("a backup into an existing 0755 folder under umask 022 makes the folder 0700 and its database 0600", async () => {
    const dir = wideDataDir();
    const t = await start(dir, []);
    const u = await t.user();
    await newBucket(t, u.key, "Backed up");
    const to = join(dir, "..", `${dir.split("/").pop()}-backup`);
    mkdirSync(to, { mode: 0o755 });
    chmodSync(to, 0o755);
    cleanup.push(() => rmSync(to, { recursive: true, force: true }));
    await createBackup({ dataDir: dir, to, includeSecretKey: false });
    expect([mode(to), mode(join(to, "pier.db")), mode(join(to, "manifest.json"))]).toEqual([0o700, 0o600, 0o600]);
    const archive = `${to}.tar.gz`;
    cleanup.push(() => rmSync(archive, { force: true }));
    await createBackup({ dataDir: dir, to: archive, includeSecretKey: false });
    expect(mode(archive)).toBe(0o600);
  });
});
