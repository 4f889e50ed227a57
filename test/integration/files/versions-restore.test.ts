// Restoring a version: the result equals that version's files (plus mail received since), and
// its cost follows the changes made since that version, not the size of the bucket.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { commitChanges, type BlobRef, type Change } from "../../../src/features/files/commit";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { newBucket } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
});
afterAll(() => t.stop());

const sys = { kind: "system" as const, name: "test" };

/** Path -> "sha256 content-type" and path -> file id, as the API lists them now. */
async function current(bucket: string) {
  const state = new Map<string, string>();
  const ids = new Map<string, string>();
  for (let offset = 0; ; offset += 1000) {
    const r = await t.api("GET", `/api/v1/buckets/${bucket}/files?limit=1000&offset=${offset}`, { key: u.key });
    expect(r.status).toBe(200);
    for (const f of r.body.data.files) {
      state.set(f.path, `${f.sha256} ${f.content_type}`);
      ids.set(f.path, f.id);
    }
    if (r.body.data.files.length < 1000) return { state, ids };
  }
}

const restore = (bucket: string, versionId: string) =>
  t.api("POST", `/api/v1/buckets/${bucket}/versions/restore`, { key: u.key, body: { version_id: versionId } });

describe("restoring a version", () => {
  test("equals the version's files, with mail received since kept, across random histories", async () => {
    const bucket = await newBucket(t, u.key);
    const blobs: BlobRef[] = [];
    for (const text of ["a", "b", "c"]) {
      const info = await t.pier.deps.blobs.putBytes(text);
      blobs.push({ ...info, contentType: "text/plain" }, { ...info, contentType: "text/html" });
    }
    const paths = [...Array.from({ length: 12 }, (_, i) => `dir${i % 3}/f${i}.txt`), "_email/m1/message.eml", "_email/m2/message.eml"];
    // A small deterministic generator, so a failure replays.
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    // The model: each version's snapshot (path -> "sha256 content-type") and the file ids it had.
    const snapshots = new Map<string, { state: Map<string, string>; ids: Map<string, string> }>();
    for (let round = 0; round < 40; round++) {
      if (round > 3 && rnd(3) === 0) {
        const versions = [...snapshots.keys()];
        const target = versions[rnd(versions.length)]!;
        const before = await current(bucket);
        const r = await restore(bucket, target);
        expect(r.status).toBe(201);
        const want = new Map(snapshots.get(target)!.state);
        for (const [p, s] of before.state) if (p.startsWith("_email/") && !want.has(p)) want.set(p, s);
        const after = await current(bucket);
        expect(after.state).toEqual(want);
        expect(r.body.data.version.file_count).toBe(want.size);
        // A path brought back takes the id it had in that version when no other file holds it.
        const held = new Set(before.ids.values());
        for (const [p, id] of snapshots.get(target)!.ids) {
          if (!before.state.has(p) && !held.has(id)) expect(after.ids.get(p)).toBe(id);
        }
        snapshots.set(r.body.data.version.id, after);
        continue;
      }
      const changes: Change[] = [];
      for (let k = 1 + rnd(4); k > 0; k--) {
        const path = paths[rnd(paths.length)]!;
        changes.push({ path, blob: rnd(4) === 0 ? null : blobs[rnd(blobs.length)]! });
      }
      const c = commitChanges(t.pier.deps, sys, bucket, changes, { kind: "write", alwaysVersion: true });
      snapshots.set(c.version!.id, await current(bucket));
    }
  });

  test("touches the changes since the version, not every file: a big bucket restores one path as fast as a small one", async () => {
    const blob = async (text: string): Promise<BlobRef> => ({ ...(await t.pier.deps.blobs.putBytes(text)), contentType: "text/plain" });
    const [one, two] = [await blob("one"), await blob("two")];
    // A bucket of `n` files, then one of them changed: restoring the first version changes one
    // path, restoring the second changes it back.
    const seed = async (n: number) => {
      const bucket = await newBucket(t, u.key);
      const changes: Change[] = Array.from({ length: n }, (_, i) => ({ path: `d${i % 100}/f${i}.txt`, blob: one }));
      const v1 = commitChanges(t.pier.deps, sys, bucket, changes, { kind: "write" }).version!;
      const v2 = commitChanges(t.pier.deps, sys, bucket, [{ path: "d0/f0.txt", blob: two }], { kind: "write" }).version!;
      return { bucket, n, v1: v1.id, v2: v2.id };
    };
    const small = await seed(200);
    const big = await seed(60_000);
    const time = async (b: { bucket: string; n: number; v1: string; v2: string }) => {
      const took: number[] = [];
      for (let i = 0; i < 8; i++) {
        const s = performance.now();
        const r = await restore(b.bucket, i % 2 === 0 ? b.v1 : b.v2);
        took.push(performance.now() - s);
        expect(r.status).toBe(201);
        expect(r.body.data.version).toMatchObject({ changed_paths_count: 1, file_count: b.n });
      }
      return took.sort((a, b) => a - b)[4]!;
    };
    const smallMs = await time(small);
    const bigMs = await time(big);
    // Before, a restore read every file row and rebuilt the whole snapshot: 300 times the files
    // took ~100 times as long (~1 s here). Now both walk the one changed path.
    expect(bigMs).toBeLessThan(Math.max(10 * smallMs, 200));
  }, 120_000);
});
