// Git sync attacks and hostile remotes, one test each: forged webhooks, remotes that hang or
// send too much, plain-http and credential-in-URL remotes, and secrets in API answers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { saveRepository } from "../../src/features/gitsync";
import { startGitServer, workClone, type GitServer, type WorkClone } from "../helpers/git-server";
import { apiKeyActorOf, startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { newBucket } from "../helpers/uploads";

let t: TestPier;
let strict: TestPier;
let server: GitServer;
let user: TestUser;
let strictUser: TestUser;
const clones: WorkClone[] = [];

beforeAll(async () => {
  server = startGitServer();
  // A short request deadline and a 1 MiB repository cap so the hostile-remote tests stay quick.
  t = await startTestPier({ gitAllowHttp: "on", gitAllowPrivateNetwork: "on", gitTimeout: 2, gitMaxRepositoryMb: 1 });
  strict = await startTestPier();
  user = await t.user({ plan: "pro" });
  strictUser = await strict.user({ plan: "pro" });
});
afterAll(async () => {
  for (const c of clones) c.cleanup();
  await t?.stop();
  await strict?.stop();
  await server?.stop();
});

let n = 0;
async function importRepo(files: Record<string, string | Uint8Array>) {
  const url = server.createRepo(`sec${++n}`);
  const other = await workClone(url);
  clones.push(other);
  for (const [p, v] of Object.entries(files)) other.write(p, v);
  await other.commitAndPush("content");
  const bucketId = await newBucket(t, user.key, `sec ${n}`);
  saveRepository(t.pier.deps, apiKeyActorOf(user), bucketId, { repository_url: url, password: "token-value-never-shown" });
  const r = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key, body: { direction: "import" } });
  expect(r.status).toBe(202);
  return { bucketId, url, other };
}
const state = async (bucketId: string) => (await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key })).body.data.github_sync;
const fileCount = async (bucketId: string) => (await t.api("GET", `/api/v1/buckets/${bucketId}/files`, { key: user.key })).body.data.files.length;

describe("git sync: hostile input", () => {
  test("a forged webhook (signed with another secret) runs no sync", async () => {
    const { bucketId } = await importRepo({ "a.txt": "a\n" });
    await t.pier.runner.drain();
    const s = await state(bucketId);
    const body = JSON.stringify({ ref: "refs/heads/main", after: "0".repeat(40) });
    const forged = `sha256=${createHmac("sha256", "guessed-secret").update(body).digest("hex")}`;
    const before = t.pier.deps.sqlite.query("select count(*) n from jobs where kind = 'gitsync.sync'").get() as { n: number };
    const r = await t.api("POST", `/api/v1/git_sync/webhooks/${s.id}`, { rawBody: body, headers: { "x-hub-signature-256": forged } });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("GIT_WEBHOOK_SIGNATURE_INVALID");
    const after = t.pier.deps.sqlite.query("select count(*) n from jobs where kind = 'gitsync.sync'").get() as { n: number };
    expect(after.n).toBe(before.n);
  });

  test("a remote that hangs ends the sync within the deadline as remote_timeout, retried later; the bucket keeps its files", async () => {
    const { bucketId } = await importRepo({ "a.txt": "a\n" });
    await t.pier.runner.drain();
    expect(await fileCount(bucketId)).toBe(1);
    server.hang = true;
    try {
      await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key: user.key, body: {} });
      const started = Date.now();
      await t.pier.runner.drain();
      // Bounded: the 2 s deadline, with a wide margin for a busy machine.
      expect(Date.now() - started).toBeLessThan(20_000);
    } finally {
      server.hang = false;
    }
    const s = await state(bucketId);
    expect(s.state).toBe("error");
    expect(s.error.code).toBe("remote_timeout");
    expect(Date.parse(s.next_check_at)).toBeGreaterThan(t.clock.now().getTime());
    expect(await fileCount(bucketId)).toBe(1);
  });

  test("a repository larger than the instance accepts stops with repository_too_large and imports nothing", async () => {
    const big = new Uint8Array(3 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 65536) crypto.getRandomValues(big.subarray(i, i + 65536));
    const { bucketId } = await importRepo({ "small.txt": "s\n", "big.bin": big });
    await t.pier.runner.drain();
    const s = await state(bucketId);
    expect(s.state).toBe("error");
    expect(s.error.code).toBe("repository_too_large");
    expect(await fileCount(bucketId)).toBe(0);
  });

  test("plain http:// remotes are refused unless the operator allows them; credentials in the URL always", async () => {
    const bucketId = await newBucket(strict, strictUser.key, "strict");
    const http = await strict.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, {
      key: strictUser.key,
      body: { direction: "import", repository_url: "http://127.0.0.1:9/x.git" },
    });
    expect(http.status).toBe(422);
    expect(http.body.error.code).toBe("GIT_REMOTE_REFUSED");
    const inUrl = await strict.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, {
      key: strictUser.key,
      body: { direction: "import", repository_url: "https://user:token@127.0.0.1:9/x.git" },
    });
    expect(inUrl.status).toBe(422);
    expect(inUrl.body.error.code).toBe("GIT_REMOTE_REFUSED");
    expect((await strict.api("GET", `/api/v1/buckets/${bucketId}/github_sync`, { key: strictUser.key })).body.data.github_sync).toBeNull();
  });

  test("the saved token and the webhook secret appear in no API answer and are encrypted at rest", async () => {
    const { bucketId } = await importRepo({ "a.txt": "a\n" });
    const answers = [
      await t.api("GET", `/api/v1/buckets/${bucketId}`, { key: user.key }),
      await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key }),
      await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync/setup`, { key: user.key }),
      await t.api("GET", `/api/v1/buckets`, { key: user.key }),
    ];
    for (const a of answers) expect(a.text).not.toContain("token-value-never-shown");
    const row = t.pier.deps.sqlite.query("select * from git_sync_connections where bucket_id = ?").get(bucketId) as Record<string, string>;
    expect(JSON.stringify(row)).not.toContain("token-value-never-shown");
    expect(row.credential_sealed).toStartWith("v1.");
  });

  test("another account cannot read, connect, sync or disconnect the bucket's git sync", async () => {
    const { bucketId } = await importRepo({ "a.txt": "a\n" });
    const other = await t.user({ plan: "pro" });
    for (const [method, path, body] of [
      ["GET", "", undefined],
      ["GET", "/setup", undefined],
      ["POST", "", { direction: "export" }],
      ["POST", "/sync", {}],
      ["PATCH", "", { auto_publish: true }],
      ["DELETE", "", undefined],
    ] as const) {
      const r = await t.api(method, `/api/v1/buckets/${bucketId}/github_sync${path}`, { key: other.key, body });
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("BUCKET_NOT_FOUND");
    }
    expect((await state(bucketId)).repository_url).toContain("/sec");
  });
});
