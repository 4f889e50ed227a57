import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { utimesSync } from "node:fs";
import { blobReferenceQueries, collectGarbage, GC_GRACE_MS, referencedBlobs } from "../../src/blobs/gc";
import { DiskBlobStore } from "../../src/blobs/disk";
import { JobRunner } from "../../src/jobs/runner";
import { jobHandlers } from "../../src/jobs/tasks";
import { testDeps, type TestDeps } from "../helpers/deps";

// A stand-in for a feature table that points at blobs, registered the way features do it.
const REF_QUERY = "SELECT sha256 FROM test_blob_refs";

let t: TestDeps;
beforeEach(async () => {
  t = await testDeps();
  t.deps.sqlite.exec("CREATE TABLE test_blob_refs (id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL)");
  blobReferenceQueries.push(REF_QUERY);
});
afterEach(() => {
  blobReferenceQueries.splice(blobReferenceQueries.indexOf(REF_QUERY), 1);
  t.close();
});

const store = () => t.deps.blobs as DiskBlobStore;
const age = (sha256: string, ms: number) => {
  const when = new Date(Date.now() - ms);
  utimesSync(store().pathOf(sha256), when, when);
};
const reference = (sha256: string) => t.deps.sqlite.query("INSERT INTO test_blob_refs (sha256) VALUES (?)").run(sha256);

describe("blob garbage collection", () => {
  test("referencedBlobs unions every registered query", async () => {
    const a = await t.deps.blobs.putBytes("a");
    reference(a.sha256);
    reference(a.sha256);
    expect(referencedBlobs(t.deps.sqlite)).toEqual(new Set([a.sha256]));
  });

  test("old unreferenced blobs are deleted; young or referenced ones are kept", async () => {
    const oldOrphan = await t.deps.blobs.putBytes("old orphan");
    const oldReferenced = await t.deps.blobs.putBytes("old but referenced");
    const youngOrphan = await t.deps.blobs.putBytes("just uploaded, not yet attached");
    age(oldOrphan.sha256, GC_GRACE_MS + 3600_000);
    age(oldReferenced.sha256, GC_GRACE_MS + 3600_000);
    reference(oldReferenced.sha256);

    const result = await collectGarbage(t.deps);
    expect(result).toEqual({ scanned: 3, deleted: 1, bytes_freed: "old orphan".length });
    expect(await t.deps.blobs.has(oldOrphan.sha256)).toBe(false);
    expect(await t.deps.blobs.has(oldReferenced.sha256)).toBe(true);
    expect(await t.deps.blobs.has(youngOrphan.sha256)).toBe(true);

    // Once the grace period has passed for the young orphan, it goes too.
    t.clock.advance(GC_GRACE_MS + 60_000);
    expect(await collectGarbage(t.deps)).toMatchObject({ scanned: 2, deleted: 1 });
    expect(await t.deps.blobs.has(youngOrphan.sha256)).toBe(false);
    expect(await t.deps.blobs.has(oldReferenced.sha256)).toBe(true);
  });

  test("uploading bytes identical to an old orphan renews it, so GC cannot delete it before it is referenced", async () => {
    const first = await t.deps.blobs.putBytes("same content");
    age(first.sha256, GC_GRACE_MS * 2);
    const again = await t.deps.blobs.putBytes("same content"); // deduplicated
    expect(again.sha256).toBe(first.sha256);
    expect(await collectGarbage(t.deps)).toMatchObject({ deleted: 0 });
    expect(await t.deps.blobs.has(first.sha256)).toBe(true);
  });

  test("a sweep racing an upload of an old orphan's bytes never deletes the blob the upload was told is stored", async () => {
    // The upload deduplicates onto the orphan (its bytes are already stored) and its caller goes
    // on to reference it; the sweep read the orphan's mtime before the upload renewed it. Random
    // offsets between the two land the sweep's removal before, during and after the upload's check.
    let lost = 0;
    for (let i = 0; i < 150; i++) {
      const bytes = new TextEncoder().encode(`racing content ${i} `.repeat(40));
      const orphan = await t.deps.blobs.putBytes(bytes);
      age(orphan.sha256, GC_GRACE_MS * 2);
      const [, stored] = await Promise.all([
        Bun.sleep(Math.random() * 4).then(() => collectGarbage(t.deps)),
        t.deps.blobs.put(
          (async function* () {
            yield bytes;
          })(),
        ),
      ]);
      if (!(await t.deps.blobs.has(stored.sha256))) lost++;
    }
    expect(lost).toBe(0);
  });

  test("GC runs as the blobs.gc job and records what it did", async () => {
    const orphan = await t.deps.blobs.putBytes("orphan for the job");
    age(orphan.sha256, GC_GRACE_MS * 2);
    const runner = new JobRunner(t.deps, jobHandlers);
    const id = t.deps.jobs.enqueue("blobs.gc");
    await runner.drain();
    expect(t.deps.jobs.get(id)).toMatchObject({ status: "done", result: { scanned: 1, deleted: 1 } });
    expect(await t.deps.blobs.has(orphan.sha256)).toBe(false);
  });
});
