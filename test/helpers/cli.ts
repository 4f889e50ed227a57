// The `pier` command for tests that run it as a subprocess: src/main.ts bundled once (`bun build
// --target=bun`) and run with `bun <bundle>`. `bun run src/main.ts` transpiles every module it
// loads on each start (most of a second of CPU for an admin command); the bundle is parsed from
// one file, which bun's transpiler cache keeps. The bundle is kept in the temp folder under a hash
// of everything it is built from (src/, sites/, the dependency lock, bun's version), so a test
// process reuses one built for the same inputs and never one built from other sources.
// The e2e tests run the compiled binary instead (test/helpers/binary.ts).
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const root = join(import.meta.dir, "../..");

// Worker entry points the code starts with `new Worker(new URL("./<name>.ts", import.meta.url))`:
// bundled as entry points of their own next to main.js (see the shims written below).
const workerEntries = [
  "src/sites/markdown-worker.ts",
  "src/features/mail/inbound-worker.ts",
  "src/features/operations/snapshot-worker.ts",
  "src/blobs/syncfs-worker.ts",
];

let bundled: Promise<string> | null = null;

/** The argv prefix that runs `pier` from this checkout's source: `[bun, <bundle>/main.js]`. */
export async function pierCommand(): Promise<string[]> {
  bundled ??= bundle();
  return [process.execPath, join(await bundled, "main.js")];
}

/** Files under `dir`, sorted, as paths relative to the checkout. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(relative(root, p));
    }
  };
  if (existsSync(dir)) walk(dir);
  return out.sort();
}

/** A hash of every input of the bundle: source, embedded sites/ and guides (docs/, README), configuration, dependencies and bun itself. */
function inputsHash(): string {
  const h = new Bun.CryptoHasher("sha256");
  h.update(`bun ${Bun.version} ${Bun.revision}\n`);
  const files = [...filesUnder(join(root, "src")), ...filesUnder(join(root, "sites")), ...filesUnder(join(root, "docs"))];
  for (const f of ["README.md", "package.json", "package-lock.json", "bun.lock", "bunfig.toml", "tsconfig.json"]) if (existsSync(join(root, f))) files.push(f);
  for (const f of files) {
    h.update(`${f}\0`);
    h.update(readFileSync(join(root, f)));
    h.update("\0");
  }
  return h.digest("hex").slice(0, 24);
}

/**
 * Build the bundle into a folder of its own, or reuse one a process built from the same inputs.
 * A pointer file named after the hash names the finished folder; it is written (renamed into
 * place) only once the build is complete, so a reader never sees half a bundle. Two processes
 * that start at once may both build, and either result is right.
 */
async function bundle(): Promise<string> {
  const hash = inputsHash();
  const pointer = join(tmpdir(), `pier-cli-bundle-${hash}`);
  if (existsSync(pointer)) {
    const dir = readFileSync(pointer, "utf8").trim();
    if (existsSync(join(dir, "main.js")) && workerEntries.every((w) => existsSync(join(dir, shimName(w))))) return dir;
  }
  const dir = mkdtempSync(join(tmpdir(), `pier-cli-${hash}-`));
  // Assets (templates, the geo database) are read from disk by path: --public-path makes the
  // paths the bundle holds absolute, so they do not depend on the working directory.
  // --splitting keeps the lazy imports lazy: a client command loads what it uses, as from source.
  const args = [
    "build",
    "src/main.ts",
    ...workerEntries,
    "--target=bun",
    "--splitting",
    "--outdir",
    dir,
    "--entry-naming",
    "[name].[ext]",
    "--public-path",
    `${dir}/`,
  ];
  const build = Bun.spawn([process.execPath, ...args], { cwd: root, stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([build.exited, new Response(build.stdout).text(), new Response(build.stderr).text()]);
  if (code !== 0) throw new Error(`bun build of src/main.ts failed (exit ${code}):\n${out}${err}`);
  // The code starts workers at "./<name>.ts" beside itself, and serving workers at "main.ts"
  // beside itself (src/serving-workers.ts): small modules by those names load the bundled ones.
  for (const w of workerEntries) writeFileSync(join(dir, shimName(w)), `import "./${baseName(w)}.js";\n`);
  writeFileSync(join(dir, "main.ts"), `import "./main.js";\n`);
  const next = `${pointer}.${process.pid}`;
  writeFileSync(next, dir);
  renameSync(next, pointer);
  return dir;
}

const baseName = (path: string) => path.slice(path.lastIndexOf("/") + 1).replace(/\.ts$/, "");
const shimName = (path: string) => `${baseName(path)}.ts`;
