// After a suite run: name the files that had failures, read from bun's JUnit reports (one per
// bun test run). Bun's own summary names a failing hook only as "(unnamed)", which does not say
// where it ran. With --totals it prints the runs' combined pass/fail counts instead, as bun does.
const args = process.argv.slice(2);
const totals = args[0] === "--totals";
const reports = await Promise.all(
  args
    .filter((a) => a !== "--totals")
    .map((report) =>
      Bun.file(report)
        .text()
        .catch(() => ""),
    ),
);
if (totals) {
  let pass = 0;
  let fail = 0;
  for (const xml of reports) {
    const all = /<testsuites\b[^>]*?\btests="(\d+)"[^>]*?\bfailures="(\d+)"[^>]*?\bskipped="(\d+)"/.exec(xml);
    if (!all) continue;
    const [tests, failures, skipped] = all.slice(1).map(Number) as [number, number, number];
    pass += tests - failures - skipped;
    fail += failures;
  }
  console.error(`\n ${pass} pass\n ${fail} fail`);
} else {
  for (const xml of reports) {
    const failing = [...xml.matchAll(/^  <testsuite name="([^"]+)"[^>]*? failures="(\d+)"/gm)].filter((m) => m[2] !== "0");
    for (const [, file, count] of failing) console.error(`test.sh: ${count} failure(s) in ${file}`);
  }
}
export {};
