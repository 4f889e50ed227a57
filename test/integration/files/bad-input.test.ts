// Every bad input gets a documented 4xx code and changes nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { scenarios, type Scenario, type ScenarioTable } from "../../helpers/scenario";
import { declared, directUpload, newBucket, syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
let bucket: string;
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
  bucket = await newBucket(t, u.key);
});
afterAll(() => t.stop());

const countRows = (table: string) => (t.pier.deps.sqlite.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
const snapshot = () => ["files", "file_changes", "bucket_versions", "upload_entries"].map(countRows).join(",");
// Every refused row below also proves these counts did not move.
const table: ScenarioTable = { pier: () => t, credentials: () => ({ owner: u.key }), snapshot };

const badPaths: [string, string][] = [
  ["../etc/passwd", "traversal"],
  ["a/../../b.txt", "traversal"],
  ["./a.txt", "traversal"],
  ["%2e%2e/secret.txt", "traversal"],
  ["a/%2E%2e/b.txt", "traversal"],
  ["%252e%252e/x.txt", "traversal"],
  ["a%2f..%2fb.txt", "traversal"],
  ["\uff0e\uff0e/x.txt", "traversal"],
  ["/etc/passwd", "absolute"],
  ["C:/Windows/x.txt", "absolute"],
  ["a\\..\\b.txt", "backslash"],
  ["a\u0000b.txt", "nul"],
  ["a\u0007b.txt", "control_character"],
  ["line\nbreak.txt", "control_character"],
  ["invoice\u202Efdp.txt", "control_character"],
  ["index.ht\u200Bml", "invisible_character"],
  ["pay\u2062pal/login.html", "invisible_character"],
  ["a\u2060b.txt", "invisible_character"],
  ["a//b.txt", "empty_segment"],
  ["folder/", "empty_segment"],
  ["x".repeat(1100), "too_long"],
  [`${"y".repeat(300)}.txt`, "too_long"],
];

describe("bad paths", () => {
  // Each bad path is refused on every entry point: direct upload (with the reason), download
  // by path and append_text.
  scenarios(
    table,
    badPaths.flatMap(([path, reason]): Scenario[] => [
      {
        name: `${JSON.stringify(path)} is refused (${reason}) by a direct upload`,
        method: "POST",
        url: "/api/v1/direct_uploads",
        as: "owner",
        body: () => ({ bucket_id: bucket, path, blob: declared(textFile("ok.txt", "x")) }),
        status: 422,
        code: "INVALID_PATH",
        expect: { error: { details: { reason } } },
      },
      {
        name: `${JSON.stringify(path)} is refused by a download by path`,
        method: "GET",
        url: () => `/api/v1/buckets/${bucket}/files/by_path?path=${encodeURIComponent(path)}`,
        as: "owner",
        status: 422,
      },
      {
        name: `${JSON.stringify(path)} is refused by append_text`,
        method: "POST",
        url: () => `/api/v1/buckets/${bucket}/files/append_text`,
        as: "owner",
        body: { path, text: "x", create: true },
        status: 422,
        code: "INVALID_PATH",
      },
    ]),
  );

  test("session descriptors refuse a bad path in a batch as a whole", async () => {
    const s = await t.api("POST", `/api/v1/buckets/${bucket}/upload_sessions`, { key: u.key, body: { delete_missing: false, expected_file_count: 2 } });
    const sid = s.body.data.upload_session.id;
    const before = snapshot();
    const r = await t.api("POST", `/api/v1/buckets/${bucket}/upload_sessions/${sid}/uploads`, {
      key: u.key,
      body: { files: [declared(textFile("good.txt", "g")), { ...declared(textFile("x", "b")), path: "../bad.txt" }] },
    });
    expect(r.body.error.code).toBe("INVALID_PATH");
    expect(snapshot()).toBe(before);
    await t.api("POST", `/api/v1/buckets/${bucket}/upload_sessions/${sid}/finalize`, { key: u.key, body: { complete: false } });
  });

  test("Unicode normalization: composed and decomposed names are one NFC key", async () => {
    const b = await newBucket(t, u.key);
    const r1 = await directUpload(t, u.key, b, textFile("cafe\u0301.txt", "one"));
    expect(r1.body.data.file.path).toBe("caf\u00e9.txt");
    const r2 = await directUpload(t, u.key, b, textFile("caf\u00e9.txt", "two"));
    expect(r2.body.data.file.id).toBe(r1.body.data.file.id);
    expect(r2.body.data.file.version_count).toBe(2);
    const dl = await t.api("GET", `/api/v1/buckets/${b}/files/by_path?path=${encodeURIComponent("cafe\u0301.txt")}`, { key: u.key });
    expect(dl.status).toBe(302);
  });
});

describe("forbidden file types", () => {
  const upload =
    (path: string, file = textFile(path, "x")) =>
    () => ({ bucket_id: bucket, path, blob: declared(file) });
  scenarios(table, [
    ...["setup.exe", "Installer.DMG", ".env", "config/.env.production", "home/.ssh/id_rsa", "certs/server.key", "tls.pem", "run.bat"].map(
      (path): Scenario => ({
        name: `${path} is refused`,
        method: "POST",
        url: "/api/v1/direct_uploads",
        as: "owner",
        body: upload(path),
        status: 422,
        code: "FORBIDDEN_FILE_TYPE",
      }),
    ),
    {
      name: "a forbidden content type is refused even with an innocent name",
      method: "POST",
      url: "/api/v1/direct_uploads",
      as: "owner",
      body: upload("readme.txt", { ...textFile("readme.txt", "MZ"), contentType: "application/x-msdownload" }),
      status: 422,
      code: "FORBIDDEN_FILE_TYPE",
    },
  ]);
});

describe("declared sizes and checksums", () => {
  const declaring = (name: string, patch: Record<string, unknown>, status: number, code: string): Scenario => ({
    name,
    method: "POST",
    url: "/api/v1/direct_uploads",
    as: "owner",
    body: () => ({ bucket_id: bucket, path: "f.txt", blob: { ...declared(textFile("f.txt", "x")), ...patch } }),
    status,
    code,
  });
  scenarios(table, [
    declaring("negative byte_size", { byte_size: -1 }, 422, "VALIDATION_FAILED"),
    declaring("fractional byte_size", { byte_size: 1.5 }, 422, "VALIDATION_FAILED"),
    declaring("huge byte_size", { byte_size: 11 * 1024 ** 3 }, 413, "FILE_TOO_LARGE"),
    declaring("byte_size past any safe integer", { byte_size: 1e30 }, 413, "FILE_TOO_LARGE"),
    declaring("checksum not base64 MD5", { checksum: "abc" }, 422, "VALIDATION_FAILED"),
    declaring("sha256 not hex", { sha256: "z".repeat(64) }, 422, "VALIDATION_FAILED"),
    declaring("bad content type", { content_type: "text\\html" }, 422, "VALIDATION_FAILED"),
  ]);

  test("a lying byte_size is caught at PUT: the body is refused and nothing is attached", async () => {
    const f = textFile("lie.txt", "twelve bytes");
    const d = { ...declared(f), byte_size: 5 };
    const r = await t.api("POST", "/api/v1/direct_uploads", { key: u.key, body: { bucket_id: bucket, path: f.path, blob: d } });
    const put = await fetch(r.body.data.upload.url, { method: "PUT", headers: r.body.data.upload.headers, body: f.bytes as BodyInit });
    expect(put.status).toBe(400);
    expect(((await put.json()) as any).error.code).toBe("UPLOAD_SIZE_MISMATCH");
    const attach = await t.api("POST", `/api/v1/buckets/${bucket}/files`, { key: u.key, body: { signed_blob_id: r.body.data.signed_blob_id } });
    expect(attach.body.error.code).toBe("BLOB_NOT_UPLOADED");
  });

  test("reads with only bucket_read scope cannot write", async () => {
    const reader = t.key(u, { scope: "bucket_read" });
    await syncFiles(t, u.key, bucket, [textFile("r.txt", "r")]);
    const r = await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: reader, body: { path: "r.txt", text: "x" } });
    expect(r.status).toBe(403);
    const s = await t.api("POST", `/api/v1/buckets/${bucket}/upload_sessions`, { key: reader, body: { delete_missing: false, expected_file_count: 1 } });
    expect(s.status).toBe(403);
  });
});
