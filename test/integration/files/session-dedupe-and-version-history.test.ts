// Gaps found auditing the files/uploads/versions work against its acceptance list: dedupe in
// sessions, descriptor reuse after finalize or cancel, zero-byte files through a session, one
// version per committed change of every kind, and per-file history across those changes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { declared, directUpload, newBucket, putBytes, syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
});
afterAll(() => t.stop());

const counts = () =>
  ["files", "file_changes", "bucket_versions", "upload_entries"]
    .map((n) => (t.pier.deps.sqlite.query(`SELECT count(*) AS n FROM ${n}`).get() as { n: number }).n)
    .join(",");
const sessions = (bucket: string) => `/api/v1/buckets/${bucket}/upload_sessions`;
async function open(bucket: string, expected = 0) {
  const r = await t.api("POST", sessions(bucket), { key: u.key, body: { delete_missing: false, expected_file_count: expected } });
  expect(r.status).toBe(201);
  return r.body.data.upload_session.id as string;
}
const read = async (bucket: string, path: string) => {
  const r = await t.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=${encodeURIComponent(path)}`, { key: u.key });
  return r.status === 302 ? (await fetch(r.headers.get("location")!)).text() : null;
};

describe("upload sessions", () => {
  test("bytes the account already stores get no descriptor in a session; finalize commits them without a PUT", async () => {
    const a = await newBucket(t, u.key);
    const b = await newBucket(t, u.key);
    const known = textFile("logo.svg", "<svg>known bytes</svg>", "image/svg+xml");
    await syncFiles(t, u.key, a, [known]);
    const sid = await open(b, 2);
    const fresh = textFile("fresh.txt", "never seen before");
    const r = await t.api("POST", `${sessions(b)}/${sid}/uploads`, {
      key: u.key,
      body: { files: [declared({ ...known, path: "img/logo.svg" }), declared(fresh)] },
    });
    expect(r.body.data.files.map((f: any) => [f.path, f.upload_required])).toEqual([
      ["img/logo.svg", false],
      ["fresh.txt", true],
    ]);
    expect(r.body.data.uploads.map((x: any) => x.path)).toEqual(["fresh.txt"]);
    expect((await putBytes(r.body.data.uploads[0].upload, fresh.bytes)).status).toBe(200);
    const fin = await t.api("POST", `${sessions(b)}/${sid}/finalize`, { key: u.key, body: { complete: true } });
    expect(fin.status).toBe(200);
    expect(await read(b, "img/logo.svg")).toBe("<svg>known bytes</svg>");
    // Another account never learns that these bytes exist: it must upload them.
    const stranger = await t.user();
    const sb = await newBucket(t, stranger.key);
    const ss = await t.api("POST", sessions(sb), { key: stranger.key, body: { delete_missing: false, expected_file_count: 1 } });
    const sr = await t.api("POST", `${sessions(sb)}/${ss.body.data.upload_session.id}/uploads`, { key: stranger.key, body: { files: [declared(known)] } });
    expect(sr.body.data.files[0].upload_required).toBe(true);
  });

  test("a session's descriptor cannot be reused after finalize or after cancel; nothing changes", async () => {
    const bucket = await newBucket(t, u.key);
    const sid = await open(bucket, 1);
    const f = textFile("once.txt", "uploaded once");
    const r = await t.api("POST", `${sessions(bucket)}/${sid}/uploads`, { key: u.key, body: { files: [declared(f)] } });
    const upload = r.body.data.uploads[0].upload;
    expect((await putBytes(upload, f.bytes)).status).toBe(200);
    expect((await t.api("POST", `${sessions(bucket)}/${sid}/finalize`, { key: u.key, body: { complete: true } })).status).toBe(200);
    const before = counts();
    const again = await putBytes(upload, f.bytes);
    expect(again.status).toBe(409);
    expect(((await again.json()) as any).error.code).toBe("UPLOAD_ALREADY_FINALIZED");
    expect(counts()).toBe(before);

    const sid2 = await open(bucket, 1);
    const g = textFile("cancelled.txt", "never committed");
    const r2 = await t.api("POST", `${sessions(bucket)}/${sid2}/uploads`, { key: u.key, body: { files: [declared(g)] } });
    await t.api("POST", `${sessions(bucket)}/${sid2}/finalize`, { key: u.key, body: { complete: false } });
    const late = await putBytes(r2.body.data.uploads[0].upload, g.bytes);
    expect(late.status).toBe(404);
    expect(((await late.json()) as any).error.code).toBe("UPLOAD_NOT_FOUND");
    expect(await read(bucket, "cancelled.txt")).toBeNull();
  });

  test("a zero-byte file goes through a session: declared, PUT empty, committed, listed, downloaded empty", async () => {
    const bucket = await newBucket(t, u.key);
    const empty = { path: "empty/.keep", bytes: new Uint8Array(0), contentType: "application/octet-stream" };
    const { finalize } = await syncFiles(t, u.key, bucket, [empty, textFile("full.txt", "x")]);
    expect(finalize.status).toBe(200);
    const listed = (await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: u.key })).body.data.files;
    expect(listed.find((f: any) => f.path === "empty/.keep")).toMatchObject({ byte_size: 0 });
    expect(await read(bucket, "empty/.keep")).toBe("");
  });
});

describe("versions", () => {
  test("every kind of committed change makes exactly one version, and file history follows the file", async () => {
    const bucket = await newBucket(t, u.key);
    const other = await newBucket(t, u.key);
    await syncFiles(t, u.key, other, [textFile("from-other.txt", "copied in")]);
    const versions = async () => (await t.api("GET", `/api/v1/buckets/${bucket}/versions?limit=500`, { key: u.key })).body.data.versions;
    const files = async () => (await t.api("GET", `/api/v1/buckets/${bucket}/files?limit=1000`, { key: u.key })).body.data.files;
    const idOf = async (path: string) => (await files()).find((f: any) => f.path === path).id;
    const steps: [string, () => Promise<unknown>][] = [
      ["upload", () => directUpload(t, u.key, bucket, textFile("index.html", "<p>1</p>", "text/html"))],
      ["finalize", () => syncFiles(t, u.key, bucket, [textFile("index.html", "<p>2</p>", "text/html"), textFile("log.txt", "a\n")])],
      ["rename", async () => t.api("POST", `/api/v1/buckets/${bucket}/files/${await idOf("log.txt")}/rename`, { key: u.key, body: { path: "logs/log.txt" } })],
      ["move", async () => t.api("POST", `/api/v1/buckets/${bucket}/files/${await idOf("logs/log.txt")}/move`, { key: u.key, body: { path: "log.txt" } })],
      [
        "copy",
        async () => {
          const id = (await t.api("GET", `/api/v1/buckets/${other}/files`, { key: u.key })).body.data.files[0].id;
          return t.api("POST", `/api/v1/buckets/${other}/files/${id}/copy`, { key: u.key, body: { bucket_id: bucket } });
        },
      ],
      ["append", () => t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: u.key, body: { path: "log.txt", text: "b\n" } })],
      [
        "reorganize",
        () =>
          t.api("POST", `/api/v1/buckets/${bucket}/files/reorganize`, {
            key: u.key,
            body: { operations: [{ op: "copy", from: "index.html", to: "backup.html" }] },
          }),
      ],
      ["delete", async () => t.api("DELETE", `/api/v1/buckets/${bucket}/files/${await idOf("index.html")}`, { key: u.key })],
      [
        "restore",
        async () =>
          t.api("POST", `/api/v1/buckets/${bucket}/versions/restore`, {
            key: u.key,
            body: { version_id: (await versions()).find((v: any) => v.kind === "finalize").id },
          }),
      ],
    ];
    for (const [kind, run] of steps) {
      const before = (await versions()).length;
      const r = (await run()) as { status?: number; finalize?: { status: number } };
      const status = r.status ?? r.finalize?.status ?? 0;
      expect([kind, status >= 200 && status < 300]).toEqual([kind, true]);
      const after = await versions();
      expect([kind, after.length]).toEqual([kind, before + 1]);
      expect(after[0].kind).toBe(kind);
      // The version's counts agree with the bucket.
      expect(after[0].file_count).toBe((await files()).length);
    }
    // index.html: uploaded, changed, deleted, restored — the same file id, every content readable.
    const index = (await files()).find((f: any) => f.path === "index.html");
    const history = await t.api("GET", `/api/v1/buckets/${bucket}/files/${index.id}/versions`, { key: u.key });
    expect(history.body.data.versions.map((v: any) => [v.kind, v.deleted])).toEqual([
      ["restore", false],
      ["delete", true],
      ["finalize", false],
      ["upload", false],
    ]);
    expect(await read(bucket, "index.html")).toBe("<p>2</p>");
    // Restoring the very first version brings back the first content.
    const first = (await versions()).at(-1);
    await t.api("POST", `/api/v1/buckets/${bucket}/versions/restore`, { key: u.key, body: { version_id: first.id } });
    expect(await read(bucket, "index.html")).toBe("<p>1</p>");
  });
});
