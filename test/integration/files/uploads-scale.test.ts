// Upload sessions with many declared files: a declare, a finalize chunk and a finalize_batch cost
// what their own files cost, not what the whole session holds. Measured as rows written, blobs
// looked at and the growth of a call's time from 1,500 to 15,000 pending files (never an absolute
// time: this machine is shared). Before: every declare rewrote every pending entry, and every
// finalize call loaded and sorted the whole pending set (200,000 files: 10-16 s per call, the
// server frozen meanwhile).
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { uploadLimits } from "../../../src/features/files/uploads/sessions";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { declared, newBucket, putBytes, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  // In this process: the test counts what the server does.
  t = await startTestPier({}, { servingWorkers: 1 });
  u = await t.user();
});
afterAll(() => t.stop());
const defaultChunk = uploadLimits.finalizeChunk;
afterEach(() => {
  uploadLimits.finalizeChunk = defaultChunk;
});

const base = (bucket: string) => `/api/v1/buckets/${bucket}/upload_sessions`;
let seeds = 0;

/** A session with one real declared-and-PUT file and `n` more pending entries cloned from it. */
async function sessionWith(n: number) {
  const bucket = await newBucket(t, u.key);
  const s = await t.api("POST", base(bucket), { key: u.key, body: { delete_missing: false, expected_file_count: 0 } });
  const sid = s.body.data.upload_session.id as string;
  const f = textFile("seed.txt", `seed ${++seeds}`);
  const d = await t.api("POST", `${base(bucket)}/${sid}/uploads`, { key: u.key, body: { files: [declared(f)] } });
  expect((await putBytes(d.body.data.uploads[0].upload, f.bytes)).status).toBe(200);
  const db = t.pier.deps.sqlite;
  const seed = db.query("select * from upload_entries where session_id = ?").get(sid) as Record<string, string | number>;
  const insert = db.prepare(
    "insert into upload_entries (id, session_id, bucket_id, account_id, credential_id, path, sha256, size, md5, content_type, status, created_at, expires_at, received_at) select ?, session_id, bucket_id, account_id, credential_id, ?, sha256, size, md5, content_type, status, created_at, expires_at, received_at from upload_entries where id = ?",
  );
  db.transaction(() => {
    for (let i = 0; i < n; i++) insert.run(`upl_s${seeds}x${String(i).padStart(6, "0")}`, `dir${i % 100}/f${i}.txt`, seed.id!);
  })();
  return { bucket, sid };
}

const rowsWritten = () => (t.pier.deps.sqlite.query("select total_changes() as n").get() as { n: number }).n;

describe("upload sessions at scale", () => {
  test("declaring one more file writes that file's rows, not one per pending file", async () => {
    const { bucket, sid } = await sessionWith(10_000);
    const g = textFile("more.txt", "one more");
    const before = rowsWritten();
    const r = await t.api("POST", `${base(bucket)}/${sid}/uploads`, { key: u.key, body: { files: [declared(g)] } });
    expect(r.status).toBe(200);
    expect(rowsWritten() - before).toBeLessThan(50);
    // The session still slid forward: its expiry is an hour from now.
    expect(Date.parse(r.body.data.uploads[0].upload.expires_at)).toBeGreaterThan(t.clock.now().getTime());
  });

  test("a finalize chunk costs about the same with 10x the pending files", async () => {
    uploadLimits.finalizeChunk = 20;
    /** The fastest of three repeat calls (after the first, which checks every file's bytes once). */
    const repeatCost = async (n: number) => {
      const { bucket, sid } = await sessionWith(n);
      const call = () => t.api("POST", `${base(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: true } });
      const first = await call();
      expect(first.status).toBe(202);
      expect(first.body.data.remaining_files_count).toBe(n + 1 - 20);
      let best = Infinity;
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        const r = await call();
        best = Math.min(best, performance.now() - t0);
        expect(r.status).toBe(202);
        expect(r.body.data.remaining_files_count).toBe(n + 1 - 20 * (i + 2));
      }
      return best;
    };
    const small = await repeatCost(1_500);
    const large = await repeatCost(15_000);
    // Linear in the session (before): ~10x. The slack absorbs a noisy machine's milliseconds.
    expect(large).toBeLessThan(3 * small + 20);
  });

  test("finalize_batch commits files uploaded out of declare order, behind files still waiting", async () => {
    uploadLimits.finalizeChunk = 10;
    const bucket = await newBucket(t, u.key);
    const s = await t.api("POST", base(bucket), { key: u.key, body: { delete_missing: false, expected_file_count: 0 } });
    const sid = s.body.data.upload_session.id as string;
    const files = Array.from({ length: 30 }, (_, i) => textFile(`ooo/f${String(i).padStart(2, "0")}.txt`, `out of order ${seeds} ${i}`));
    const d = await t.api("POST", `${base(bucket)}/${sid}/uploads`, { key: u.key, body: { files: files.map(declared) } });
    expect(d.status).toBe(200);
    // Only the five files last in the session's order get their bytes: the third chunk.
    const order = (t.pier.deps.sqlite.query("select path from upload_entries where session_id = ? order by created_at, id").all(sid) as { path: string }[]).map(
      (e) => e.path,
    );
    const sent = order.slice(25);
    for (const up of d.body.data.uploads.filter((x: { path: string }) => sent.includes(x.path))) {
      const f = files.find((x) => x.path === up.path)!;
      expect((await putBytes(up.upload, f.bytes)).status).toBe(200);
    }
    const r = await t.api("POST", `${base(bucket)}/${sid}/finalize_batch`, { key: u.key, body: { limit: 5 } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ finalized_files_count: 5, remaining_files_count: 25 });
    expect([...r.body.data.waiting_for_upload].sort()).toEqual(order.slice(0, 25).sort());
    const listed = await t.api("GET", `/api/v1/buckets/${bucket}/files?limit=100`, { key: u.key });
    expect(listed.body.data.files.map((f: { path: string }) => f.path).sort()).toEqual([...sent].sort());
  });

  test("finalize_batch looks at the next chunk's blobs, not every pending file's", async () => {
    uploadLimits.finalizeChunk = 100;
    const { bucket, sid } = await sessionWith(5_000);
    const blobs = t.pier.deps.blobs;
    const size = blobs.size;
    let looked = 0;
    blobs.size = (sha256: string) => {
      looked++;
      return size.call(blobs, sha256);
    };
    try {
      const r = await t.api("POST", `${base(bucket)}/${sid}/finalize_batch`, { key: u.key, body: { limit: 12 } });
      expect(r.status).toBe(200);
      expect(r.body.data).toMatchObject({ finalized_files_count: 12, remaining_files_count: 5_001 - 12, waiting_for_upload: [] });
    } finally {
      blobs.size = size;
    }
    expect(looked).toBeLessThanOrEqual(100);
  });
});
