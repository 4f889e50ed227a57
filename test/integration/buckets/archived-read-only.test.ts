// An archived bucket is read-only for files and uploads: every files/uploads/versions mutation
// answers 409 BUCKET_ARCHIVED and changes nothing, while reads and copying out keep working.
// The table is checked against the route table, so a new files/uploads write route without a
// line here fails.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestPier, type ApiResult, type TestPier, type TestUser } from "../../helpers/pier";
import { declared, newBucket, putBytes, syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
let bucket: string;
let active: string;
const s: Record<string, string> = {};
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
  bucket = await newBucket(t, u.key, "to be archived");
  active = await newBucket(t, u.key, "active");
  await syncFiles(t, u.key, bucket, [textFile("notes.txt", "v1"), textFile("other.txt", "o")]);
  await syncFiles(t, u.key, bucket, [textFile("notes.txt", "v2")]);
  await syncFiles(t, u.key, active, [textFile("incoming.txt", "from the active bucket")]);
  const files = (await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files;
  s.file_id = files.find((f: any) => f.path === "notes.txt").id;
  s.incoming_id = (await t.api("GET", `/api/v1/buckets/${active}/files`, { key: u.key })).body.data.files[0].id;
  s.version_id = (await t.api("GET", `/api/v1/buckets/${bucket}/versions`, { key: u.key })).body.data.versions.at(-1).id;
  // Prepared before the archive: a file lock, a direct upload with its bytes, an open session.
  expect((await t.api("POST", `/api/v1/buckets/${bucket}/files/lock`, { key: u.key, body: { paths: ["other.txt"], message: "held" } })).status).toBe(200);
  const f = textFile("late.txt", "uploaded before the archive");
  const d = await t.api("POST", "/api/v1/direct_uploads", { key: u.key, body: { bucket_id: bucket, path: f.path, blob: declared(f) } });
  expect((await putBytes(d.body.data.upload, f.bytes)).status).toBe(200);
  s.signed_blob_id = d.body.data.signed_blob_id;
  const session = await t.api("POST", `/api/v1/buckets/${bucket}/upload_sessions`, { key: u.key, body: { delete_missing: false, expected_file_count: 0 } });
  s.sid = session.body.data.upload_session.id;
  const staged = textFile("staged.txt", "staged in the session");
  const up = await t.api("POST", `/api/v1/buckets/${bucket}/upload_sessions/${s.sid}/uploads`, { key: u.key, body: { files: [declared(staged)] } });
  expect((await putBytes(up.body.data.uploads[0].upload, staged.bytes)).status).toBe(200);
  const archived = await t.api("POST", `/api/v1/buckets/${bucket}/archive`, { key: u.key, body: {} });
  expect(archived.body.data.bucket.archived).toBe(true);
});
afterAll(() => t.stop());

const tables = ["files", "bucket_versions", "file_changes", "upload_sessions", "upload_entries", "file_locks", "bucket_locks", "buckets"];
const snapshot = () => JSON.stringify(tables.map((name) => t.pier.deps.sqlite.query(`SELECT * FROM ${name} ORDER BY rowid`).all()));
const fill = (path: string) => path.replace(":id", bucket).replace(":file_id", s.file_id!).replace(":sid", s.sid!).replace(":version_id", s.version_id!);

type Call = { path?: string; body: () => unknown };
/** Every write route of files, uploads and versions, with a body that would succeed on an active bucket. */
const refused: Record<string, Call> = {
  "POST /api/v1/direct_uploads": { body: () => ({ bucket_id: bucket, path: "new.txt", blob: declared(textFile("new.txt", "new")) }) },
  "POST /api/v1/buckets/:id/files": { body: () => ({ signed_blob_id: s.signed_blob_id }) },
  "POST /api/v1/buckets/:id/upload_sessions": { body: () => ({ delete_missing: false, expected_file_count: 1 }) },
  "POST /api/v1/buckets/:id/upload_sessions/:sid/uploads": { body: () => ({ files: [declared(textFile("more.txt", "more"))] }) },
  "POST /api/v1/buckets/:id/upload_sessions/:sid/finalize_batch": { body: () => ({ limit: 12 }) },
  "POST /api/v1/buckets/:id/upload_sessions/:sid/finalize": { body: () => ({ complete: true }) },
  "POST /api/v1/buckets/:id/files/reorganize": { body: () => ({ operations: [{ op: "copy", from: "notes.txt", to: "copy.txt" }] }) },
  "POST /api/v1/buckets/:id/files/append_text": { body: () => ({ path: "notes.txt", text: "more" }) },
  "POST /api/v1/buckets/:id/files/lock": { body: () => ({ paths: ["notes.txt"], message: "m" }) },
  "DELETE /api/v1/buckets/:id/files/:file_id": { body: () => undefined },
  "POST /api/v1/buckets/:id/files/:file_id/rename": { body: () => ({ path: "renamed.txt" }) },
  "POST /api/v1/buckets/:id/files/:file_id/copy": { body: () => ({ path: "copied-inside.txt" }) },
  "POST /api/v1/buckets/:id/files/:file_id/move": { body: () => ({ bucket_id: active, path: "moved-out.txt" }) },
  "POST /api/v1/buckets/:id/versions/restore": { body: () => ({ version_id: s.version_id }) },
  // Copying INTO the archived bucket from an active one: the target is what changes.
  "POST /api/v1/buckets/:id/files/:file_id/copy (into the archived bucket)": {
    path: "/api/v1/buckets/ACTIVE/files/INCOMING/copy",
    body: () => ({ bucket_id: bucket, path: "copied-in.txt" }),
  },
  "POST /api/v1/buckets/:id/files/:file_id/move (into the archived bucket)": {
    path: "/api/v1/buckets/ACTIVE/files/INCOMING/move",
    body: () => ({ bucket_id: bucket, path: "moved-in.txt" }),
  },
};

/** Writes that stay allowed: they change no file (same rule as releasing the bucket lock). */
const allowedWrites = ["DELETE /api/v1/buckets/:id/files/:file_id/lock", "POST /api/v1/buckets/:id/upload_sessions/:sid/finalize (complete: false)"];

const call = (name: string, c: Call): Promise<ApiResult> => {
  const [method, path] = name.split(" ") as [string, string];
  const url = (c.path ?? fill(path)).replace("ACTIVE", active).replace("INCOMING", s.incoming_id!);
  return t.api(method, url, { key: u.key, body: c.body() });
};

describe("archived bucket", () => {
  test("the table covers every write route of files, uploads and versions", () => {
    const writes = (t.pier.app.routes as Array<{ method: string; path: string }>)
      .filter((r) => r.method !== "GET" && r.method !== "HEAD")
      .map((r) => `${r.method} ${r.path}`)
      .filter((k) => /^\S+ \/api\/v1\/(direct_uploads|buckets\/:id\/(files|upload_sessions|versions))/.test(k));
    const covered = new Set([...Object.keys(refused), ...allowedWrites].map((k) => k.split(" ").slice(0, 2).join(" ")));
    expect(writes.length).toBeGreaterThan(10);
    for (const w of writes) expect(covered.has(w) ? w : `${w} is missing from the archived-bucket table`).toBe(w);
  });

  test.each(Object.keys(refused))("%s answers 409 BUCKET_ARCHIVED and changes nothing", async (name) => {
    const before = snapshot();
    const r = await call(name, refused[name]!);
    expect([r.status, r.body?.error?.code]).toEqual([409, "BUCKET_ARCHIVED"]);
    expect(r.body.error.docs_url).toEndWith("#BUCKET_ARCHIVED");
    expect(snapshot()).toBe(before);
  });

  test("Pier's own writers (inbound mail) are refused too", async () => {
    const { writeFiles } = await import("../../../src/features/files/write");
    const before = snapshot();
    await expect(writeFiles(t.pier.deps, { kind: "system", name: "inbound-mail" }, bucket, [{ path: "_email/m.eml", bytes: "x" }])).rejects.toMatchObject({
      code: "BUCKET_ARCHIVED",
    });
    expect(snapshot()).toBe(before);
  });

  test("reads work: list, metadata, download, file history, versions, a version's files, the session", async () => {
    const reader = t.key(u, { scope: "bucket_read" });
    const list = await t.api("GET", `/api/v1/buckets/${bucket}/files?q=notes`, { key: reader });
    expect(list.body.data.files.map((f: any) => f.path)).toEqual(["notes.txt"]);
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/files/${s.file_id}`, { key: reader })).body.data.file.version_count).toBe(2);
    const dl = await t.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=notes.txt`, { key: reader });
    expect(dl.status).toBe(302);
    expect(await (await fetch(dl.headers.get("location")!)).text()).toBe("v2");
    const history = await t.api("GET", `/api/v1/buckets/${bucket}/files/${s.file_id}/versions`, { key: reader });
    expect(history.body.data.versions.map((v: any) => v.byte_size)).toEqual([2, 2]);
    const versions = await t.api("GET", `/api/v1/buckets/${bucket}/versions`, { key: reader });
    expect(versions.body.data.versions).toHaveLength(2);
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/versions/${s.version_id}`, { key: reader })).status).toBe(200);
    const snap = await t.api("GET", `/api/v1/buckets/${bucket}/versions/${s.version_id}/files`, { key: reader });
    expect(snap.body.data.files.map((f: any) => f.path)).toEqual(["notes.txt", "other.txt"]);
    const session = await t.api("GET", `/api/v1/buckets/${bucket}/upload_sessions/${s.sid}`, { key: u.key });
    expect(session.body.data.upload_session.status).toBe("open");
  });

  test("copying out to an active bucket works, with write on the target and read on the source", async () => {
    const k = t.key(u, { scope: "bucket_write", bucketAccess: "selected", bucketPermissions: { [bucket]: "read", [active]: "write" } });
    const r = await t.api("POST", `/api/v1/buckets/${bucket}/files/${s.file_id}/copy`, { key: k, body: { bucket_id: active, path: "rescued.txt" } });
    expect(r.status).toBe(201);
    const dl = await t.api("GET", `/api/v1/buckets/${active}/files/by_path?path=rescued.txt`, { key: u.key });
    expect(await (await fetch(dl.headers.get("location")!)).text()).toBe("v2");
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/files/${s.file_id}`, { key: u.key })).status).toBe(200);
  });

  test("releasing a file lock and cancelling a session still work; after unarchive writes work again", async () => {
    const other = (await t.api("GET", `/api/v1/buckets/${bucket}/files?q=other`, { key: u.key })).body.data.files[0];
    expect(other.lock).toMatchObject({ held_by_you: true });
    expect((await t.api("DELETE", `/api/v1/buckets/${bucket}/files/${other.id}/lock`, { key: u.key })).status).toBe(200);
    const cancel = await t.api("POST", `/api/v1/buckets/${bucket}/upload_sessions/${s.sid}/finalize`, { key: u.key, body: { complete: false } });
    expect([cancel.status, cancel.body.data.upload_session.status]).toEqual([200, "cancelled"]);
    expect((await t.api("GET", `/api/v1/buckets/${bucket}`, { key: u.key })).body.data.bucket.lock).toBeUndefined();

    expect((await t.api("POST", `/api/v1/buckets/${bucket}/unarchive`, { key: u.key, body: {} })).status).toBe(200);
    const attach = await t.api("POST", `/api/v1/buckets/${bucket}/files`, { key: u.key, body: { signed_blob_id: s.signed_blob_id } });
    expect(attach.status).toBe(201);
    expect((await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: u.key, body: { path: "notes.txt", text: "+" } })).status).toBe(200);
  });
});
