// An upload session expires an hour after the last call of its client, whichever call it was:
// declare, finalize (each chunk of a large one), finalize_batch, reading the session, or a PUT of
// one of its files. Before, only a declare slid it: a client repeating finalize as told (202, then
// again) got UPLOAD_SESSION_EXPIRED partway, with some chunks committed, the rest dropped and
// delete_missing never applied.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { uploadLimits } from "../../../src/features/files/uploads/sessions";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { declared, directUpload, newBucket, putBytes, textFile, type LocalFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
let advanced = 0;
beforeAll(async () => {
  // In this process: the test moves the server's clock.
  t = await startTestPier({}, { servingWorkers: 1 });
  u = await t.user();
});
afterAll(() => t.stop());
const defaultChunk = uploadLimits.finalizeChunk;
afterEach(() => {
  uploadLimits.finalizeChunk = defaultChunk;
  t.clock.advance(-advanced);
  advanced = 0;
});
const minutes = (n: number) => {
  t.clock.advance(n * 60_000);
  advanced += n * 60_000;
};

const base = (bucket: string) => `/api/v1/buckets/${bucket}/upload_sessions`;
const paths = async (bucket: string) => (await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files.map((f: any) => f.path);
const lockOf = async (bucket: string) => (await t.api("GET", `/api/v1/buckets/${bucket}`, { key: u.key })).body.data.bucket.lock;
/** The test clock runs on with real time: "now" is within a few seconds. */
const about = (iso: string, fromNowMs: number) => expect(Math.abs(Date.parse(iso) - (t.clock.now().getTime() + fromNowMs))).toBeLessThan(5_000);
const anHourFromNow = (iso: string) => about(iso, uploadLimits.sessionTtlMs);

async function open(bucket: string, body: Record<string, unknown>) {
  const r = await t.api("POST", base(bucket), { key: u.key, body: { delete_missing: false, expected_file_count: 0, ...body } });
  expect(r.status).toBe(201);
  return r.body.data.upload_session.id as string;
}
async function declare(bucket: string, sid: string, files: LocalFile[]) {
  const r = await t.api("POST", `${base(bucket)}/${sid}/uploads`, { key: u.key, body: { files: files.map(declared) } });
  expect(r.status).toBe(200);
  return r.body.data.uploads as { path: string; upload: { url: string; headers: Record<string, string> } }[];
}
const finalize = (bucket: string, sid: string) => t.api("POST", `${base(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: true } });

describe("upload sessions expire an hour after the last call", () => {
  test("a chunked finalize repeated as told keeps its session and lock alive to the end, delete_missing included", async () => {
    uploadLimits.finalizeChunk = 1;
    const bucket = await newBucket(t, u.key);
    expect((await directUpload(t, u.key, bucket, textFile("old.txt", "old"))).status).toBe(201);
    const files = [textFile("a.txt", "A"), textFile("b.txt", "B"), textFile("c.txt", "C")];
    const sid = await open(bucket, { delete_missing: true, expected_file_count: 3 });
    for (const up of await declare(bucket, sid, files)) expect((await putBytes(up.upload, files.find((f) => f.path === up.path)!.bytes)).status).toBe(200);
    minutes(50);
    for (let call = 1; call <= 2; call++) {
      const r = await finalize(bucket, sid);
      expect(r.status).toBe(202);
      anHourFromNow(r.body.data.upload_session.expires_at);
      anHourFromNow((await lockOf(bucket)).expires_at);
      minutes(59);
    }
    const last = await finalize(bucket, sid);
    expect(last.status).toBe(200);
    expect(last.body.data.upload_session).toMatchObject({ status: "completed", committed_files_count: 3, deleted_files_count: 1 });
    expect(await paths(bucket)).toEqual(["a.txt", "b.txt", "c.txt"]);
    expect(await lockOf(bucket)).toBeUndefined();
  });

  test("finalize_batch and reading the session each slide it", async () => {
    const bucket = await newBucket(t, u.key);
    const files = [textFile("one.txt", "1"), textFile("two.txt", "2")];
    const sid = await open(bucket, { expected_file_count: 2 });
    for (const up of await declare(bucket, sid, files)) expect((await putBytes(up.upload, files.find((f) => f.path === up.path)!.bytes)).status).toBe(200);
    minutes(50);
    const batch = await t.api("POST", `${base(bucket)}/${sid}/finalize_batch`, { key: u.key, body: { limit: 1 } });
    expect(batch.body.data).toMatchObject({ finalized_files_count: 1, remaining_files_count: 1 });
    anHourFromNow(batch.body.data.upload_session.expires_at);
    minutes(50);
    const read = await t.api("GET", `${base(bucket)}/${sid}`, { key: u.key });
    expect(read.body.data.upload_session.status).toBe("open");
    anHourFromNow(read.body.data.upload_session.expires_at);
    anHourFromNow((await lockOf(bucket)).expires_at);
    minutes(50);
    const last = await finalize(bucket, sid);
    expect(last.status).toBe(200);
    expect(await paths(bucket)).toEqual(["one.txt", "two.txt"]);
  });

  test("a PUT of one of its files slides the session and its lock", async () => {
    const bucket = await newBucket(t, u.key);
    const f = textFile("late.txt", "late");
    const sid = await open(bucket, { expected_file_count: 1 });
    const [up] = await declare(bucket, sid, [f]);
    minutes(50);
    expect((await putBytes(up!.upload, f.bytes)).status).toBe(200);
    minutes(50);
    about((await lockOf(bucket)).expires_at, 10 * 60_000);
    const r = await finalize(bucket, sid);
    expect(r.status).toBe(200);
    expect(await paths(bucket)).toEqual(["late.txt"]);
  });

  test("without calls the session still expires an hour after the last one", async () => {
    const bucket = await newBucket(t, u.key);
    const f = textFile("never.txt", "never");
    const sid = await open(bucket, { expected_file_count: 1 });
    const [up] = await declare(bucket, sid, [f]);
    expect((await putBytes(up!.upload, f.bytes)).status).toBe(200);
    minutes(61);
    const r = await finalize(bucket, sid);
    expect(r.body.error.code).toBe("UPLOAD_SESSION_EXPIRED");
    const read = await t.api("GET", `${base(bucket)}/${sid}`, { key: u.key });
    expect(read.body.data.upload_session.status).toBe("expired");
    expect(await lockOf(bucket)).toBeUndefined();
  });
});

describe("an open session holds the bucket for its credential, whatever that credential does with its own bucket lock", () => {
  // Before: the session's lock and the credential's explicit lock were one row, so an explicit
  // lock shorter than the session, taken before or during it, or released by its holder, left
  // the bucket open to every other credential in the middle of the session.
  test("an explicit lock taken before or during the session, then expired or released, still leaves the bucket locked until the session closes", async () => {
    const other = t.key(u, { scope: "bucket_write" });
    const otherWrites = (bucket: string) =>
      t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: other, body: { path: "other.txt", text: "other", create: true } });
    const lock = (bucket: string) => t.api("POST", `/api/v1/buckets/${bucket}/lock`, { key: u.key, body: { duration_seconds: 60 } });

    const before = await newBucket(t, u.key);
    expect((await lock(before)).status).toBe(200);
    const sid = await open(before, {});
    await declare(before, sid, [textFile("mine.txt", "mine")]);
    minutes(2);
    expect((await otherWrites(before)).status).toBe(423);

    const during = await newBucket(t, u.key);
    await open(during, {});
    expect((await lock(during)).status).toBe(200);
    minutes(2);
    expect((await otherWrites(during)).status).toBe(423);

    const released = await newBucket(t, u.key);
    const sid2 = await open(released, {});
    expect((await t.api("DELETE", `/api/v1/buckets/${released}/lock`, { key: u.key })).status).toBe(200);
    const refused = await otherWrites(released);
    expect(refused.status).toBe(423);
    expect(refused.body.error.details.lock).toMatchObject({ holder_kind: "upload_session" });
    // Closing the session releases the bucket.
    expect((await t.api("POST", `${base(released)}/${sid2}/finalize`, { key: u.key, body: { complete: false } })).status).toBe(200);
    expect((await otherWrites(released)).status).toBe(200);
  });
});
