// The Auto-Index's folder index: one pass over a deploy's files for all its folders, and a sort
// that lets the event loop run between slices (a 20,000-file folder took ~0.2 s in one piece).
import { expect, test } from "bun:test";
import type { DeployFile } from "../../src/features/publish";
import { listFolder, sortInSlices } from "../../src/sites/autoindex-listing";
import type { Manifest } from "../../src/sites/directory";

/** A manifest whose file map counts how often it is walked. */
function manifest(paths: string[]): { m: Manifest; walks: () => number } {
  let walks = 0;
  class Counting extends Map<string, DeployFile> {
    override [Symbol.iterator]() {
      walks++;
      return super[Symbol.iterator]();
    }
    override entries() {
      walks++;
      return super.entries();
    }
  }
  const files = new Counting();
  const dirs = new Set<string>([""]);
  for (const path of paths) {
    files.set(path, { path, size: 1, contentType: "text/plain" } as DeployFile);
    for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) dirs.add(path.slice(0, i));
  }
  return { m: { deployId: "dpl_test", files, dirs, rules: null }, walks: () => walks };
}

test("every folder of a deploy comes from one walk over its files, each sorted once", async () => {
  const paths = ["README.md", "b/x.txt", "a/10.txt", "a/9.txt", "a/B.txt", "a/a.txt", "a/deep/er/f.txt", "c/d/e.txt"];
  const { m, walks } = manifest(paths);
  const root = await listFolder(m, "");
  expect(root.folders).toEqual(["a", "b", "c"]);
  expect(root.files.map((f) => f.name)).toEqual(["README.md"]);
  const a = await listFolder(m, "a");
  expect(a.folders).toEqual(["deep"]);
  expect(a.files.map((f) => f.name)).toEqual(["9.txt", "10.txt", "a.txt", "B.txt"]);
  expect((await listFolder(m, "c")).folders).toEqual(["d"]);
  expect((await listFolder(m, "a/deep/er")).files.map((f) => f.name)).toEqual(["f.txt"]);
  expect(listFolder(m, "a")).toBe(listFolder(m, "a")); // the same sort, not another one
  expect(walks()).toBe(1);
});

test("the sliced sort orders like the collator, keeps equal names in order, and lets other work run", async () => {
  const collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" });
  const names = Array.from({ length: 20_000 }, (_, i) => `${(i * 7919) % 20_000}-${i % 3 === 0 ? "A" : "a"}.txt`);
  let turns = 0;
  const ticker = setInterval(() => turns++, 0);
  const sorted = await sortInSlices(names, collator.compare);
  clearInterval(ticker);
  expect(sorted).toEqual([...names].sort(collator.compare)); // Array.prototype.sort is stable too
  expect(turns).toBeGreaterThan(5);
  const small = ["b", "a"];
  expect(await sortInSlices(small, collator.compare)).toEqual(["a", "b"]);
  expect(small).toEqual(["b", "a"]); // the input is left alone
});
