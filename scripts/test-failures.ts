// After a suite run: name the files that had failures, read from bun's JUnit report. Bun's own
// summary names a failing hook only as "(unnamed)", which does not say where it ran.
const report = process.argv[2] ?? "";
const xml = await Bun.file(report)
  .text()
  .catch(() => "");
const failing = [...xml.matchAll(/^  <testsuite name="([^"]+)"[^>]*? failures="(\d+)"/gm)].filter((m) => m[2] !== "0");
for (const [, file, count] of failing) console.error(`test.sh: ${count} failure(s) in ${file}`);
export {};
