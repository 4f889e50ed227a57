// Crash safety: SIGKILL the real server (a subprocess) in the middle of a large upload and of a
// finalize, restart it on the same data dir, and check: no partial file, no lost committed
// file, and the session can finish (releasing the bucket lock).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { loadConfig } from "../../../src/config";
import { silentLogger } from "../../../src/core/log";
import { createApiKey } from "../../../src/features/accounts/keys";
import { hashPassword, insertUserWithAccount } from "../../../src/features/accounts/service";
import { createDeps } from "../../../src/runtime";
import { spawnFromSource } from "../../helpers/binary";
import { declared, putBytes, textFile } from "../../helpers/uploads";

let dataDir: string;
let port: number;
let key: string;
let proc: Subprocess | null = null;
const url = () => `http://127.0.0.1:${port}`;

function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const p = s.port!;
  s.stop(true);
  return p;
}

async function startServer(): Promise<void> {
  proc = (await spawnFromSource({ dataDir, httpPort: port, args: ["--log-level", "error"] })).proc;
}

async function kill(): Promise<void> {
  proc!.kill("SIGKILL");
  await proc!.exited;
  proc = null;
}

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(url() + path, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "pier-kill-"));
  port = freePort();
  // Seed a user and key straight into the database before the server runs.
  const config = { ...loadConfig({}, {}), dataDir, httpPort: port, smtpPort: null };
  const deps = await createDeps(config, port, { log: silentLogger });
  const { user, account } = insertUserWithAccount(deps, { email: "kill@example.com", passwordHash: await hashPassword("correct horse battery staple") });
  key = createApiKey(deps, { accountId: account.id, userId: user.id, label: "kill test", kind: "owner", scope: "bucket_admin" }).key;
  deps.close();
  await startServer();
}, 90_000);

afterAll(async () => {
  if (proc) await kill();
  rmSync(dataDir, { recursive: true, force: true });
});

const listPaths = async (bucket: string) => (await api("GET", `/api/v1/buckets/${bucket}/files?limit=1000&q=`)).body.data;

describe("SIGKILL", () => {
  test("mid-upload and mid-finalize: nothing partial, nothing committed lost, session completes", async () => {
    const bucket = (await api("POST", "/api/v1/buckets", { bucket: { title: "crash" } })).body.data.bucket.id;
    // A committed file that must survive everything.
    const committed = textFile("committed.txt", "safe and sound");
    const s0 = (await api("POST", `/api/v1/buckets/${bucket}/upload_sessions`, { delete_missing: false, expected_file_count: 1 })).body.data.upload_session.id;
    const d0 = await api("POST", `/api/v1/buckets/${bucket}/upload_sessions/${s0}/uploads`, { files: [declared(committed)] });
    await putBytes(d0.body.data.uploads[0].upload, committed.bytes);
    expect((await api("POST", `/api/v1/buckets/${bucket}/upload_sessions/${s0}/finalize`, { complete: true })).status).toBe(200);

    // 1) Kill during a 64 MiB streaming PUT.
    const big = new Uint8Array(64 * 1024 * 1024).map((_, i) => (i * 31) & 255);
    const bigFile = { path: "big.bin", bytes: big, contentType: "application/octet-stream" };
    const sid = (await api("POST", `/api/v1/buckets/${bucket}/upload_sessions`, { delete_missing: false, expected_file_count: 1 })).body.data.upload_session.id;
    const d = await api("POST", `/api/v1/buckets/${bucket}/upload_sessions/${sid}/uploads`, { files: [declared(bigFile)] });
    const upload = d.body.data.uploads[0].upload;
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent >= big.byteLength) return controller.close();
        controller.enqueue(big.subarray(sent, sent + 1024 * 1024));
        sent += 1024 * 1024;
        await Bun.sleep(5);
      },
    });
    const put = fetch(upload.url, { method: "PUT", headers: upload.headers, body }).catch((e) => e);
    while (sent < 16 * 1024 * 1024) await Bun.sleep(5);
    await kill();
    // The upload fails for the client: its connection drops or, through a serving worker whose
    // primary was killed, the worker answers 503 "restarting" (Retry-After).
    const answer = await put;
    expect(answer instanceof Error ? "connection lost" : answer.status).toBeOneOf(["connection lost", 503]);
    await startServer();
    expect(readdirSync(join(dataDir, "blobs", "tmp"))).toEqual([]); // the partial body is gone
    let files = await listPaths(bucket);
    expect(files.files.map((f: any) => f.path)).toEqual(["committed.txt"]);
    const sha = createHash("sha256").update(big).digest("hex");
    expect(await Bun.file(join(dataDir, "blobs", "sha256", sha.slice(0, 2), sha.slice(2, 4), sha)).exists()).toBe(false);
    // The session survived the crash: upload again and finish it.
    expect((await putBytes(upload, big)).status).toBe(200);
    expect((await api("POST", `/api/v1/buckets/${bucket}/upload_sessions/${sid}/finalize`, { complete: true })).status).toBe(200);

    // 2) Kill during a finalize that commits 1,200 files in chunks.
    const many = Array.from({ length: 1200 }, (_, i) => textFile(`many/f${String(i).padStart(4, "0")}.txt`, `file ${i}`));
    const s2 = (await api("POST", `/api/v1/buckets/${bucket}/upload_sessions`, { delete_missing: true, expected_file_count: many.length + 1 })).body.data
      .upload_session.id;
    for (let i = 0; i < many.length; i += 100) {
      const batch = many.slice(i, i + 100);
      const r = await api("POST", `/api/v1/buckets/${bucket}/upload_sessions/${s2}/uploads`, { files: batch.map(declared) });
      await Promise.all(r.body.data.uploads.map((u: any) => putBytes(u.upload, batch.find((f) => f.path === u.path)!.bytes)));
    }
    await api("POST", `/api/v1/buckets/${bucket}/upload_sessions/${s2}/uploads`, { files: [declared(committed)] });
    const fin = fetch(`${url()}/api/v1/buckets/${bucket}/upload_sessions/${s2}/finalize`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ complete: true }),
    }).catch((e) => e);
    await Bun.sleep(30);
    await kill();
    await fin;
    await startServer();
    files = await listPaths(bucket);
    // Either the first chunk committed whole or not at all; committed files are all there.
    expect([2, 1000 + 2, 1000]).toContain(files.pagination.total_count);
    const paths = files.files.map((f: any) => f.path);
    expect(paths).toContain("committed.txt");
    let last;
    for (let n = 0; n < 20; n++) {
      last = await api("POST", `/api/v1/buckets/${bucket}/upload_sessions/${s2}/finalize`, { complete: true });
      if (last.status !== 202) break;
    }
    expect({ status: last!.status, body: last!.body }).toMatchObject({ status: 200 });
    files = await listPaths(bucket);
    expect(files.pagination.total_count).toBe(1201); // delete_missing removed big.bin, kept committed.txt
    expect(files.files.map((f: any) => f.path)).not.toContain("big.bin");
    const b = await api("GET", `/api/v1/buckets/${bucket}`);
    expect(b.body.data.bucket.lock).toBeUndefined();
    // Every listed file downloads.
    const dl = await fetch(`${url()}/api/v1/buckets/${bucket}/files/by_path?path=committed.txt`, { headers: { authorization: `Bearer ${key}` } });
    expect(await dl.text()).toBe("safe and sound");
  }, 180_000);
});
