// `npm run build`: the single executable. First regenerate the embed lists (migration SQL as
// text, sites/ files as embedded assets; see scripts/gen-embeds.ts), then `bun build --compile`
// src/main.ts. Everything Pier reads at run time is reached through an import, so the binary
// needs nothing from the source tree: no node_modules, no src/db/migrations, no sites/.
//
//   bun run scripts/build.ts [--outfile dist/pier] [--target bun-linux-x64] [--no-gen]
//
// --no-gen skips regenerating the embed lists (the e2e test uses it, so a test run never edits
// the source tree and a stale list is reported by the unit test instead of fixed silently).
// --target cross-compiles (e.g. bun-linux-arm64, bun-linux-x64-baseline for CPUs without AVX2).
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { writeEmbeds } from "./gen-embeds";

const root = join(import.meta.dir, "..");

export interface BuildOptions {
  outfile?: string;
  target?: string;
  /** Regenerate the embed lists first (default true). */
  gen?: boolean;
}

export function parseBuildArgs(argv: string[]): BuildOptions {
  const opts: BuildOptions = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--no-gen") {
      opts.gen = false;
      continue;
    }
    const [flag, inline] = argv[i]!.split("=", 2) as [string, string | undefined];
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === "--outfile") opts.outfile = value;
    else if (flag === "--target") opts.target = value;
    else throw new Error(`unknown option ${flag} (use --outfile PATH, --target bun-<os>-<arch>, --no-gen)`);
  }
  return opts;
}

/** Build the executable; returns its path. Throws with bun's output when the build fails. */
export function buildBinary(opts: BuildOptions = {}): string {
  const outfile = resolve(opts.outfile ?? join(root, "dist/pier"));
  if (opts.gen !== false) {
    const changed = writeEmbeds();
    if (changed.length) console.error(`build: regenerated ${changed.join(", ")}`);
  }
  mkdirSync(dirname(outfile), { recursive: true });
  // No --minify: Elysia reads handler source (Function.toString) to decide what each handler
  // needs, so identifiers are better left as written.
  // The markdown, inbound-mail, snapshot and syncfs workers are extra entrypoints: workers in a compiled binary must be built in.
  // --bytecode: the bundle is shipped compiled to JSC bytecode (its source kept beside it, for
  // Function.toString and a runtime that rejects the cache), so a start does not parse ~2,300
  // modules: `pier serve` answers its first request ~40% sooner and a CLI command costs half the
  // CPU (bench/README.md, 2026-11-29). ESM, because main.ts awaits at its top level.
  const args = [
    "build",
    "--compile",
    "--bytecode",
    "--format=esm",
    "src/main.ts",
    "src/sites/markdown-worker.ts",
    "src/features/mail/inbound-worker.ts",
    "src/features/operations/snapshot-worker.ts",
    "src/blobs/syncfs-worker.ts",
    "--outfile",
    outfile,
  ];
  if (opts.target) args.push("--target", opts.target);
  const proc = Bun.spawnSync([process.execPath, ...args], { cwd: root, stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) {
    throw new Error(`bun build --compile failed (exit ${proc.exitCode}):\n${proc.stdout.toString()}${proc.stderr.toString()}`);
  }
  return outfile;
}

if (import.meta.main) {
  try {
    const started = Date.now();
    const out = buildBinary(parseBuildArgs(process.argv.slice(2)));
    const mb = (Bun.file(out).size / 1024 ** 2).toFixed(0);
    console.log(`built ${out} (${mb} MB) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (e) {
    console.error(`build: ${(e as Error).message}`);
    process.exit(1);
  }
}
