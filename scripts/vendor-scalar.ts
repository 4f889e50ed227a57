// Refreshes sites/docs/scalar.js: the API reference UI (Scalar's standalone browser bundle, MIT)
// that /docs serves. Only this one self-contained file of @scalar/api-reference runs, so it is kept
// in the repository instead of installing the package, whose 280 dependencies (the Vue
// components the bundle was built from) nothing loads: `npm ci` installs a third fewer packages.
// The file is taken from the published package's tarball (`npm pack`, which checks it against the
// registry's integrity) and embedded in the binary like every file under sites/.
// Run: ./node_modules/.bin/bun run scripts/vendor-scalar.ts [version]   (default: latest)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { x as extract } from "tar";

const root = join(import.meta.dir, "..");
const version = process.argv[2] ?? "latest";
const dir = mkdtempSync(join(tmpdir(), "vendor-scalar-"));
try {
  const pack = Bun.spawnSync(["npm", "pack", `@scalar/api-reference@${version}`, "--json", "--pack-destination", dir], { stderr: "inherit" });
  if (pack.exitCode !== 0) throw new Error(`npm pack @scalar/api-reference@${version} failed`);
  const [packed] = JSON.parse(pack.stdout.toString()) as { filename: string; version: string; integrity: string }[];
  await extract({ file: join(dir, packed!.filename), cwd: dir, filter: (p) => p === "package/dist/browser/standalone.js" });
  const script = readFileSync(join(dir, "package/dist/browser/standalone.js"));
  if (!script.subarray(0, 600).toString().includes(`@scalar/api-reference ${packed!.version}`)) throw new Error("unexpected standalone.js header");
  writeFileSync(join(root, "sites/docs/scalar.js"), script);
  const sha256 = new Bun.CryptoHasher("sha256").update(script).digest("hex");
  console.log(`sites/docs/scalar.js: @scalar/api-reference ${packed!.version} (tarball ${packed!.integrity}), ${script.length} bytes, sha256 ${sha256}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
