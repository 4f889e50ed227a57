// The compiled executable for end-to-end tests: built once per test run (bun test runs every
// file in one process, so e2e files share the build), started on a temp data dir and free ports,
// its banner read for the ports it bound.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

const root = join(import.meta.dir, "../..");
let built: Promise<string> | null = null;

/** Build `dist`-style `pier` into a temp folder once; resolves with the executable's path. */
export function buildBinary(): Promise<string> {
  built ??= (async () => {
    const bin = join(mkdtempSync(join(tmpdir(), "pier-bin-")), "pier");
    const build = Bun.spawn([process.execPath, "run", "scripts/build.ts", "--no-gen", "--outfile", bin], { cwd: root, stdout: "pipe", stderr: "pipe" });
    const [code, out, err] = await Promise.all([build.exited, new Response(build.stdout).text(), new Response(build.stderr).text()]);
    if (code !== 0) throw new Error(`build failed:\n${out}${err}`);
    return bin;
  })();
  return built;
}

export interface RunningBinary {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** The HTTP port from the banner. */
  port: number;
  /** The SMTP port from the banner, 0 when SMTP is off. */
  smtpPort: number;
  /** http://127.0.0.1:<port> (tests connect to loopback; the base URL says localhost). */
  url: string;
  output: () => string;
  stop: () => Promise<number>;
}

/** Collect a process's stdout and stderr into one string as they arrive. */
export function collectOutput(proc: Subprocess<any, "pipe", "pipe">): () => string {
  let out = "";
  for (const s of [proc.stdout, proc.stderr])
    void (async () => {
      const reader = s.getReader();
      const decoder = new TextDecoder();
      for (let r = await reader.read(); !r.done; r = await reader.read()) out += decoder.decode(r.value, { stream: true });
    })();
  return () => out;
}

/** `pier serve` on 127.0.0.1 with free ports; waits for the banner. */
export async function startBinary(
  bin: string,
  opts: { dataDir: string; cwd: string; env: Record<string, string>; smtp?: boolean; args?: string[] },
): Promise<RunningBinary> {
  const args = [
    bin,
    "serve",
    "--data-dir",
    opts.dataDir,
    "--http-port",
    "0",
    "--smtp-port",
    opts.smtp ? "0" : "off",
    "--host",
    "127.0.0.1",
    ...(opts.args ?? []),
  ];
  const proc = Bun.spawn(args, { cwd: opts.cwd, env: opts.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const output = collectOutput(proc);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const out = output();
    const http = /^ +HTTP +127\.0\.0\.1:(\d+)$/m.exec(out);
    const smtp = /^ +SMTP +127\.0\.0\.1:(\d+)/m.exec(out);
    if (http && (!opts.smtp || smtp)) {
      const port = Number(http[1]);
      const stop = async () => {
        proc.kill("SIGTERM");
        return proc.exited;
      };
      return { proc, port, smtpPort: Number(smtp?.[1] ?? 0), url: `http://127.0.0.1:${port}`, output, stop };
    }
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`pier serve did not start (exit ${proc.exitCode}):\n${out}`);
    }
    await Bun.sleep(25);
  }
}
