// The compiled executable for end-to-end tests: built once per test process (the files a test
// worker runs share one module registry, so its e2e files share the build), started on a temp
// data dir and free ports, its banner read for the ports it bound. Also `pier serve` from source.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { pierCommand } from "./cli";

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
  return collect(proc).output;
}

/** The collected output, and a promise settled once both streams have ended. */
function collect(proc: Subprocess<any, "pipe", "pipe">): { output: () => string; drained: Promise<unknown> } {
  let out = "";
  const drained = Promise.allSettled(
    [proc.stdout, proc.stderr].map(async (s) => {
      const reader = s.getReader();
      const decoder = new TextDecoder();
      for (let r = await reader.read(); !r.done; r = await reader.read()) out += decoder.decode(r.value, { stream: true });
    }),
  );
  return { output: () => out, drained };
}

/** `pier serve` ended (or hung) before its banner: its exit code (null when it hung) and all it printed. */
export class ServeDidNotStart extends Error {
  constructor(
    readonly exitCode: number | null,
    readonly output: string,
  ) {
    super(`pier serve did not start (exit ${exitCode}):\n${output}`);
  }
}

export interface ServeOptions {
  dataDir: string;
  env?: Record<string, string | undefined>;
  /** Start SMTP on a free port too (off otherwise). */
  smtp?: boolean;
  /** A fixed HTTP port, e.g. to restart on the same one; a free one otherwise. */
  httpPort?: number;
  args?: string[];
}

/** `pier serve` on 127.0.0.1 with free ports; waits for the banner. */
export function startBinary(bin: string, opts: ServeOptions & { cwd: string; env: Record<string, string> }): Promise<RunningBinary> {
  return spawnServe([bin], opts.cwd, opts);
}

/**
 * `pier serve` from this checkout's source (bundled, test/helpers/cli.ts) in a subprocess, for
 * tests that kill or restart a real server without building the binary; waits for the banner.
 */
export async function spawnFromSource(opts: ServeOptions): Promise<RunningBinary> {
  return spawnServe(await pierCommand(), root, { ...opts, env: opts.env ?? { ...process.env } });
}

/**
 * Start `command serve ...` and wait for its banner, which it prints once it answers. Starting
 * loads the code and migrates first, which took over 10 s once on a busy 2-core machine: allow a
 * minute, and stop early when the process exits.
 */
async function spawnServe(command: string[], cwd: string, opts: ServeOptions): Promise<RunningBinary> {
  const args = [
    ...command,
    "serve",
    "--data-dir",
    opts.dataDir,
    "--http-port",
    String(opts.httpPort ?? 0),
    "--smtp-port",
    opts.smtp ? "0" : "off",
    "--host",
    "127.0.0.1",
    ...(opts.args ?? []),
  ];
  const proc = Bun.spawn(args, { cwd, env: opts.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const { output, drained } = collect(proc);
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
      await proc.exited;
      await drained;
      throw new ServeDidNotStart(proc.exitCode, output());
    }
    await Bun.sleep(25);
  }
}
