// The README's first command line, minus `npm ci` (the suite already runs on installed
// dependencies): `npm start` runs Pier from source with the Bun that npm installed as a dev
// dependency — no global bun on PATH — serves HTTP and SMTP on the ports it prints, and stops
// cleanly on Ctrl-C (SIGINT to the terminal's process group).
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:net";
import type { Subprocess } from "bun";
import { collectOutput } from "../helpers/binary";

const root = join(import.meta.dir, "../..");
const work = mkdtempSync(join(tmpdir(), "pier-npm-start-"));
let proc: Subprocess<"ignore", "pipe", "pipe"> | null = null;
afterAll(() => {
  if (proc && proc.exitCode === null) process.kill(-proc.pid, "SIGKILL");
  rmSync(work, { recursive: true, force: true });
});

/** PATH without any bun: only system directories (node and npm live there). */
const systemPath =
  (process.env.PATH ?? "")
    .split(":")
    .filter((d) => d && !existsSync(join(d, "bun")))
    .join(":") || "/usr/bin:/bin";

const smtpGreeting = (port: number) =>
  new Promise<string>((resolve, reject) => {
    const s = connect(port, "127.0.0.1");
    s.once("data", (d) => {
      resolve(d.toString());
      s.end();
    });
    s.once("error", reject);
  });

test("npm start serves Pier from source on the printed ports and stops on Ctrl-C", async () => {
  const npm = Bun.which("npm", { PATH: systemPath });
  expect(npm).toBeTruthy();
  const dataDir = join(work, "data");
  proc = Bun.spawn([npm!, "start", "--silent", "--", "--data-dir", dataDir, "--http-port", "0", "--smtp-port", "0", "--host", "127.0.0.1"], {
    cwd: root,
    env: { PATH: systemPath, HOME: work },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    detached: true, // its own process group, as in a terminal
  });
  const output = collectOutput(proc);
  const deadline = Date.now() + 90_000;
  let http = 0;
  let smtp = 0;
  while (!http || !smtp) {
    http = Number(/^ +HTTP +127\.0\.0\.1:(\d+)$/m.exec(output())?.[1] ?? 0);
    smtp = Number(/^ +SMTP +127\.0\.0\.1:(\d+)/m.exec(output())?.[1] ?? 0);
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not start (exit ${proc.exitCode}):\n${output()}`);
    await Bun.sleep(50);
  }
  // Port 0 was resolved to real ports, and both answer.
  const status = await fetch(`http://127.0.0.1:${http}/api/v1/status`);
  expect(status.status).toBe(200);
  expect(((await status.json()) as any).data.server_version).toMatch(/^\d+\.\d+\.\d+/);
  expect(await smtpGreeting(smtp)).toMatch(/^220 /);
  // The data dir holds the database and the generated secret key (0600).
  expect(existsSync(join(dataDir, "pier.db"))).toBe(true);
  expect(statSync(join(dataDir, "secret.key")).mode & 0o777).toBe(0o600);

  // Ctrl-C: the terminal signals the whole process group (npm, its shell, Pier). Pier shuts
  // down cleanly and its ports close.
  process.kill(-proc.pid, "SIGINT");
  await proc.exited;
  for (let i = 0; i < 100 && !output().includes("SIGINT received, shutting down"); i++) await Bun.sleep(20);
  expect(output()).toContain("SIGINT received, shutting down");
  let closed = false;
  for (let i = 0; i < 100 && !closed; i++, await Bun.sleep(50))
    closed = await fetch(`http://127.0.0.1:${http}/api/v1/status`).then(
      () => false,
      () => true,
    );
  proc = null;
  expect(closed).toBe(true);
}, 150_000);
