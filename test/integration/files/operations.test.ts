import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { uploadLimits } from "../../../src/features/files/uploads/limits";
import { directUpload, newBucket, syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
});
afterAll(() => t.stop());

const paths = async (bucket: string, key = u.key) =>
  (await t.api("GET", `/api/v1/buckets/${bucket}/files?limit=1000`, { key })).body.data.files.map((f: any) => f.path);
const versionCount = async (bucket: string) => (await t.api("GET", `/api/v1/buckets/${bucket}/versions?limit=500`, { key: u.key })).body.data.versions.length;
const fileId = async (bucket: string, path: string) =>
  (await t.api("GET", `/api/v1/buckets/${bucket}/files?q=${encodeURIComponent(path)}`, { key: u.key })).body.data.files.find((f: any) => f.path === path).id;

describe("listing", () => {
  test("limit, offset and q page through files in path order", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(t, u.key, bucket, [
      ...Array.from({ length: 5 }, (_, i) => textFile(`docs/p${i}.md`, `# ${i}`, "text/markdown")),
      textFile("_email/2026/msg.eml", "Subject: hi", "message/rfc822"),
    ]);
    const page = await t.api("GET", `/api/v1/buckets/${bucket}/files?limit=2&offset=2`, { key: u.key });
    expect(page.body.data.files.map((f: any) => f.path)).toEqual(["docs/p1.md", "docs/p2.md"]);
    expect(page.body.data.pagination).toMatchObject({ limit: 2, offset: 2, total_count: 6, has_more: true, next_offset: 4 });
    const q = await t.api("GET", `/api/v1/buckets/${bucket}/files?q=_email/`, { key: u.key });
    expect(q.body.data.files.map((f: any) => f.path)).toEqual(["_email/2026/msg.eml"]);
    const byId = await t.api("GET", `/api/v1/buckets/${bucket}/files/${q.body.data.files[0].id}`, { key: u.key });
    expect(byId.body.data.file).toMatchObject({ path: "_email/2026/msg.eml", content_type: "message/rfc822" });
    const bad = await t.api("GET", `/api/v1/buckets/${bucket}/files?limit=5000`, { key: u.key });
    expect(bad.status).toBe(422);
  });
});

describe("rename, move, copy, delete", () => {
  test("rename keeps the id, refuses an existing target, and makes one version", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(t, u.key, bucket, [textFile("a.txt", "a"), textFile("b.txt", "b")]);
    const id = await fileId(bucket, "a.txt");
    const v0 = await versionCount(bucket);
    const clash = await t.api("POST", `/api/v1/buckets/${bucket}/files/${id}/rename`, { key: u.key, body: { path: "b.txt" } });
    expect(clash.status).toBe(409);
    expect(clash.body.error.code).toBe("FILE_EXISTS");
    const r = await t.api("POST", `/api/v1/buckets/${bucket}/files/${id}/rename`, { key: u.key, body: { path: "dir/a2.txt" } });
    expect(r.status).toBe(200);
    expect(r.body.data.file).toMatchObject({ id, path: "dir/a2.txt" });
    expect(await paths(bucket)).toEqual(["b.txt", "dir/a2.txt"]);
    expect(await versionCount(bucket)).toBe(v0 + 1);
    const exe = await t.api("POST", `/api/v1/buckets/${bucket}/files/${id}/rename`, { key: u.key, body: { path: "evil.exe" } });
    expect(exe.body.error.code).toBe("FORBIDDEN_FILE_TYPE");
    // Onto an existing file with overwrite: still this file's id (before: the overwritten
    // file's id, and this one's was gone).
    const b = await fileId(bucket, "b.txt");
    const over = await t.api("POST", `/api/v1/buckets/${bucket}/files/${id}/rename`, { key: u.key, body: { path: "b.txt", overwrite: true } });
    expect(over.status).toBe(200);
    expect(over.body.data.file).toMatchObject({ id, path: "b.txt", sha256: r.body.data.file.sha256 });
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/files/${id}`, { key: u.key })).body.data.file.path).toBe("b.txt");
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/files/${b}`, { key: u.key })).status).toBe(404);
    expect(await paths(bucket)).toEqual(["b.txt"]);
  });

  test("copy and move across buckets by reference; copying out of an archived bucket works", async () => {
    const src = await newBucket(t, u.key, "source");
    const dst = await newBucket(t, u.key, "target");
    await syncFiles(t, u.key, src, [textFile("one.txt", "1"), textFile("two.txt", "2")]);
    const one = await fileId(src, "one.txt");
    const two = await fileId(src, "two.txt");
    const copy = await t.api("POST", `/api/v1/buckets/${src}/files/${one}/copy`, { key: u.key, body: { bucket_id: dst, path: "copied/one.txt" } });
    expect(copy.status).toBe(201);
    const move = await t.api("POST", `/api/v1/buckets/${src}/files/${two}/move`, { key: u.key, body: { bucket_id: dst } });
    expect(move.status).toBe(200);
    expect(await paths(src)).toEqual(["one.txt"]);
    expect(await paths(dst)).toEqual(["copied/one.txt", "two.txt"]);
    // Read-only key on the source, write on the target is enough for a copy.
    const k = t.key(u, { scope: "bucket_write", bucketAccess: "selected", bucketPermissions: { [src]: "read", [dst]: "write" } });
    expect((await t.api("POST", `/api/v1/buckets/${src}/files/${one}/copy`, { key: k, body: { bucket_id: dst, path: "k.txt" } })).status).toBe(201);
    expect((await t.api("POST", `/api/v1/buckets/${src}/files/${one}/move`, { key: k, body: { bucket_id: dst, path: "k2.txt" } })).status).toBe(403);
    t.pier.deps.sqlite.run("UPDATE buckets SET archived_at = ? WHERE id = ?", [new Date().toISOString(), src]);
    expect((await t.api("POST", `/api/v1/buckets/${src}/files/${one}/copy`, { key: u.key, body: { bucket_id: dst, path: "from-archive.txt" } })).status).toBe(
      201,
    );
    const moveOut = await t.api("POST", `/api/v1/buckets/${src}/files/${one}/move`, { key: u.key, body: { bucket_id: dst, path: "nope.txt" } });
    expect(moveOut.body.error.code).toBe("BUCKET_ARCHIVED");
    expect(await paths(dst)).not.toContain("nope.txt");
  });

  test("delete makes a version and keeps the blob in history", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(t, u.key, bucket, [textFile("gone.txt", "bye")]);
    const id = await fileId(bucket, "gone.txt");
    const d = await t.api("DELETE", `/api/v1/buckets/${bucket}/files/${id}`, { key: u.key });
    expect(d.status).toBe(200);
    expect(await paths(bucket)).toEqual([]);
    expect((await t.api("GET", `/api/v1/buckets/${bucket}/files/${id}`, { key: u.key })).body.error.code).toBe("FILE_NOT_FOUND");
  });
});

describe("reorganize", () => {
  test("applies every operation in one version, or none", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(t, u.key, bucket, [textFile("a.txt", "a"), textFile("b.txt", "b"), textFile("c.txt", "c")]);
    const v0 = await versionCount(bucket);
    const bad = await t.api("POST", `/api/v1/buckets/${bucket}/files/reorganize`, {
      key: u.key,
      body: {
        operations: [
          { op: "rename", from: "a.txt", to: "x/a.txt" },
          { op: "delete", from: "missing.txt" },
        ],
      },
    });
    expect(bad.status).toBe(404);
    expect(bad.body.error.details.operation_index).toBe(1);
    expect(await paths(bucket)).toEqual(["a.txt", "b.txt", "c.txt"]);
    const ok = await t.api("POST", `/api/v1/buckets/${bucket}/files/reorganize`, {
      key: u.key,
      body: {
        operations: [
          { op: "rename", from: "a.txt", to: "x/a.txt" },
          { op: "copy", from: "b.txt", to: "x/b.txt" },
          { op: "move", from: "c.txt", to: "y/c.txt" },
          { op: "delete", from: "b.txt" },
        ],
      },
    });
    expect(ok.status).toBe(200);
    expect(await paths(bucket)).toEqual(["x/a.txt", "x/b.txt", "y/c.txt"]);
    expect(await versionCount(bucket)).toBe(v0 + 1);
  });
});

describe("a file and a folder cannot share a path", () => {
  // Before, "docs" and "docs/a.txt" were both accepted: a bucket no folder, git tree or backup
  // can hold, and a git export kept only one of them.
  test("a write that would make one is refused with PATH_CONFLICT and changes nothing; one commit may turn one into the other", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(t, u.key, bucket, [textFile("docs/a.txt", "a"), textFile("notes", "n")]);
    const v0 = await versionCount(bucket);
    for (const [path, conflicting] of [
      ["docs", "docs/a.txt"],
      ["notes/today.txt", "notes"],
      ["notes/deeper/today.txt", "notes"],
    ]) {
      const r = await directUpload(t, u.key, bucket, textFile(path!, "x"));
      expect(r.status).toBe(409);
      expect(r.body.error).toMatchObject({ code: "PATH_CONFLICT", details: { path, conflicting_path: conflicting } });
    }
    const appended = await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: u.key, body: { path: "docs", text: "x", create: true } });
    expect(appended.body.error.code).toBe("PATH_CONFLICT");
    const clash = await t.api("POST", `/api/v1/buckets/${bucket}/files/reorganize`, {
      key: u.key,
      body: { operations: [{ op: "copy", from: "notes", to: "docs/a.txt/b" }] },
    });
    expect(clash.body.error.code).toBe("PATH_CONFLICT");
    expect(await paths(bucket)).toEqual(["docs/a.txt", "notes"]);
    expect(await versionCount(bucket)).toBe(v0);

    // In one reorganize: the folder's only file leaves it, then a file takes its name.
    const swap = await t.api("POST", `/api/v1/buckets/${bucket}/files/reorganize`, {
      key: u.key,
      body: { operations: [{ op: "move", from: "docs/a.txt", to: "docs" }] },
    });
    expect(swap.status).toBe(200);
    expect(await paths(bucket)).toEqual(["docs", "notes"]);
  });

  test("a delete_missing sync that turns a file into a folder deletes the file with the chunk that needs its name", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(t, u.key, bucket, [textFile("docs", "old"), textFile("keep.txt", "k")]);
    const chunk = uploadLimits.finalizeChunk;
    uploadLimits.finalizeChunk = 1;
    try {
      const r = await syncFiles(t, u.key, bucket, [textFile("docs/a.txt", "a"), textFile("docs/b.txt", "b")], { deleteMissing: true });
      expect(r.finalize.status).toBe(200);
    } finally {
      uploadLimits.finalizeChunk = chunk;
    }
    expect(await paths(bucket)).toEqual(["docs/a.txt", "docs/b.txt"]);
  });
});

describe("append_text", () => {
  test("appends as a new version; refuses binary files", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(t, u.key, bucket, [
      textFile("log.md", "line 1\n", "text/markdown"),
      { path: "img.png", bytes: new Uint8Array([137, 80, 78, 71]), contentType: "image/png" },
    ]);
    const r = await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: u.key, body: { path: "log.md", text: "line 2 ✓\n" } });
    expect(r.status).toBe(200);
    expect(r.body.data.file.version_count).toBe(2);
    const dl = await t.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=log.md`, { key: u.key });
    expect(await (await fetch(dl.headers.get("location")!)).text()).toBe("line 1\nline 2 ✓\n");
    const bin = await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: u.key, body: { path: "img.png", text: "x" } });
    expect(bin.body.error.code).toBe("NOT_TEXT_FILE");
    const missing = await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: u.key, body: { path: "new.txt", text: "x" } });
    expect(missing.body.error.code).toBe("FILE_NOT_FOUND");
    const created = await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: u.key, body: { path: "new.txt", text: "x", create: true } });
    expect(created.body.data.file.content_type).toStartWith("text/plain");
  });
});

describe("file locks", () => {
  test("another key gets 423 on a locked file; the holder writes and unlocks", async () => {
    const bucket = await newBucket(t, u.key);
    await syncFiles(t, u.key, bucket, [textFile("doc.txt", "v1")]);
    const other = t.key(u, { scope: "bucket_write" });
    const lock = await t.api("POST", `/api/v1/buckets/${bucket}/files/lock`, {
      key: u.key,
      body: { paths: ["doc.txt"], message: "editing", duration_seconds: 600 },
    });
    expect(lock.status).toBe(200);
    const blocked = await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: other, body: { path: "doc.txt", text: "x" } });
    expect(blocked.status).toBe(423);
    expect(blocked.body.error.code).toBe("FILE_LOCKED");
    const listed = await t.api("GET", `/api/v1/buckets/${bucket}/files`, { key: other });
    expect(listed.body.data.files[0].lock).toMatchObject({ message: "editing", held_by_you: false });
    expect((await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: u.key, body: { path: "doc.txt", text: "x" } })).status).toBe(200);
    const id = await fileId(bucket, "doc.txt");
    expect((await t.api("DELETE", `/api/v1/buckets/${bucket}/files/${id}/lock`, { key: other })).status).toBe(423);
    expect((await t.api("DELETE", `/api/v1/buckets/${bucket}/files/${id}/lock`, { key: u.key })).status).toBe(200);
    expect((await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: other, body: { path: "doc.txt", text: "y" } })).status).toBe(200);
  });
});

describe("templates", () => {
  test("three templates; from_template makes a private bucket with the files in one version", async () => {
    const list = await t.api("GET", "/api/v1/buckets/templates", { key: u.key });
    expect(list.body.data.templates.map((x: any) => x.name)).toEqual(["landing", "docs", "spa"]);
    const r = await t.api("POST", "/api/v1/buckets/from_template", { key: u.key, body: { template: "docs", title: "My docs" } });
    expect(r.status).toBe(201);
    const b = r.body.data.bucket;
    expect(b).toMatchObject({ title: "My docs", published: false });
    expect(await paths(b.id)).toContain("README.md");
    expect(await versionCount(b.id)).toBe(1);
    const readme = await t.api("GET", `/api/v1/buckets/${b.id}/files/by_path?path=README.md`, { key: u.key });
    expect(await (await fetch(readme.headers.get("location")!)).text()).toContain("# Project docs");
    const none = await t.api("POST", "/api/v1/buckets/from_template", { key: u.key, body: { template: "nope" } });
    expect(none.body.error.code).toBe("TEMPLATE_NOT_FOUND");
  });
});

describe("writeFiles (for inbound mail, publishing, templates)", () => {
  test("writes several files from bytes as one version; refuses bad paths and forbidden types", async () => {
    const { writeFiles } = await import("../../../src/features/files/write");
    const bucket = await newBucket(t, u.key);
    const r = await writeFiles(
      t.pier.deps,
      { kind: "system", name: "inbound-mail" },
      bucket,
      [
        { path: "_email/2026/11/msg.eml", bytes: "Subject: hello\r\n\r\nbody", contentType: "message/rfc822" },
        { path: "_email/2026/11/attachment.pdf", bytes: new Uint8Array([37, 80, 68, 70]) },
      ],
      { kind: "write", comment: "mail from a@example.com" },
    );
    expect(r.version!.changedCount).toBe(2);
    expect(r.version!.author).toBe("system:inbound-mail");
    const listed = (await t.api("GET", `/api/v1/buckets/${bucket}/files?q=_email/`, { key: u.key })).body.data.files;
    expect(listed.map((f: any) => [f.path, f.content_type])).toEqual([
      ["_email/2026/11/attachment.pdf", "application/pdf"],
      ["_email/2026/11/msg.eml", "message/rfc822"],
    ]);
    await expect(writeFiles(t.pier.deps, { kind: "system", name: "x" }, bucket, [{ path: "../x", bytes: "x" }])).rejects.toMatchObject({
      code: "INVALID_PATH",
    });
    await expect(writeFiles(t.pier.deps, { kind: "system", name: "x" }, bucket, [{ path: "a.exe", bytes: "x" }])).rejects.toMatchObject({
      code: "FORBIDDEN_FILE_TYPE",
    });
    expect(await versionCount(bucket)).toBe(1);
  });
});
