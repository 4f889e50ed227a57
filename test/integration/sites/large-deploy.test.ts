// A deploy of many files: its manifest is read in steps of DEPLOY_FILES_STEP rows with a turn of the
// event loop between, so the first request of a 20,000-file site no longer holds every other site
// of the process while one query reads them all. Requests that come meanwhile share the reading.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DEPLOY_FILES_STEP as MANIFEST_STEP } from "../../../src/features/publish";
import { SiteDirectory } from "../../../src/sites/directory";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";

let t: TestPier;
let big: PublishedSite;
let small: PublishedSite;
const N = Math.floor(MANIFEST_STEP * 2.5);
const name = (i: number) => `f/${String(i).padStart(5, "0")}.txt`;

beforeAll(async () => {
  t = await startTestPier({}, { servingWorkers: 1 });
  const files = Array.from({ length: N }, (_, i) => ({ path: name(i), bytes: `file ${i}` }));
  files.push({ path: "index.html", bytes: "<h1>big</h1>" }, { path: "deep/er/still/x.txt", bytes: "deep" });
  big = await publishSite(t, { files });
  small = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>small</h1>" }] });
}, 120_000);
afterAll(() => t.stop());

describe("a deploy larger than one step", () => {
  test("is read in steps: one shared promise, the event loop turns between steps, then every file and folder is there", async () => {
    const directory = new SiteDirectory(t.pier.deps);
    const deployId = big.deployId;
    const first = directory.manifest(deployId);
    expect(first).toBeInstanceOf(Promise);
    expect(directory.manifest(deployId)).toBe(first); // a second request waits on the same reading
    let turns = 0;
    const tick = () => {
      turns++;
      if (turns < 1000) setImmediate(tick);
    };
    setImmediate(tick);
    const m = await first;
    expect(turns).toBeGreaterThan(0); // other work ran between the steps
    expect(m.files.size).toBe(N + 2);
    for (const i of [0, MANIFEST_STEP - 1, MANIFEST_STEP, N - 1]) expect(m.files.get(name(i))?.size).toBe(`file ${i}`.length);
    expect([...m.dirs].sort()).toEqual(["", "deep", "deep/er", "deep/er/still", "f"]);
    expect(directory.manifest(deployId)).toBe(m); // kept: later requests answer without a promise
  });

  test("a small deploy is read at once", async () => {
    const directory = new SiteDirectory(t.pier.deps);
    const m = directory.manifest(small.deployId);
    expect(m).not.toBeInstanceOf(Promise);
    expect((m as Exclude<typeof m, Promise<unknown>>).files.has("index.html")).toBe(true);
  });

  test("over HTTP, first requests from every step answer with their bytes while another site answers too", async () => {
    const paths = ["/", `/${name(0)}`, `/${name(MANIFEST_STEP + 7)}`, `/${name(N - 1)}`, "/deep/er/still/x.txt", "/f/missing.txt"];
    const [answers, other] = await Promise.all([
      Promise.all(paths.map((p) => siteFetch(t, big.host, p).then(async (r) => [r.status, await r.text()] as const))),
      siteFetch(t, small.host, "/").then(async (r) => [r.status, await r.text()] as const),
    ]);
    expect(answers.slice(0, 5)).toEqual([
      [200, "<h1>big</h1>"],
      [200, "file 0"],
      [200, `file ${MANIFEST_STEP + 7}`],
      [200, `file ${N - 1}`],
      [200, "deep"],
    ]);
    expect(answers[5]![0]).toBe(404);
    expect(other).toEqual([200, "<h1>small</h1>"]);
  });
});
