// A private git server over HTTPS whose certificate a private CA signed: Pier refuses it until
// the operator names that CA with --git-ca-root, then imports and pushes through it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "selfsigned";
import { saveRepository } from "../../../src/features/gitsync";
import { git, startGitServer, type GitServer } from "../../helpers/git-server";
import { apiKeyActorOf, startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let dir: string;
let server: GitServer;
let trusting: TestPier;
let plain: TestPier;
const cred = { user: "deploy", password: "ca-token" };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pier-git-ca-"));
  const ca = await generate([{ name: "commonName", value: "Private Git CA" }], {
    keySize: 2048,
    days: 30,
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true },
      { name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] },
    ],
  } as Parameters<typeof generate>[1]);
  writeFileSync(join(dir, "ca.pem"), ca.cert);
  server = startGitServer({ credential: cred, tls: { cert: ca.cert, key: ca.private } });
  trusting = await startTestPier({ gitCaRoot: join(dir, "ca.pem"), gitAllowPrivateNetwork: "on" });
  plain = await startTestPier({ gitAllowPrivateNetwork: "on" });
});
afterAll(async () => {
  await trusting?.stop();
  await plain?.stop();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A repository with one commit, written straight into the server's bare repository. */
async function repoWithIndex(name: string): Promise<string> {
  const url = server.createRepo(name);
  const work = mkdtempSync(join(dir, "work-"));
  await git(work, "init", "--quiet", "--initial-branch=main");
  writeFileSync(join(work, "index.html"), "<h1>private</h1>\n");
  await git(work, "add", "-A");
  await git(work, "commit", "--quiet", "-m", "initial");
  await git(work, "push", "--quiet", join(server.root, `${name}.git`), "HEAD:main");
  return url;
}

async function importInto(t: TestPier, user: TestUser, url: string) {
  const bucketId = await newBucket(t, user.key, "private git");
  saveRepository(t.pier.deps, apiKeyActorOf(user), bucketId, { repository_url: url, branch: "main", username: cred.user, password: cred.password });
  const r = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key, body: { direction: "import" } });
  expect(r.status).toBe(202);
  await t.pier.runner.drain();
  const s = await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync`, { key: user.key });
  return { bucketId, sync: s.body.data.github_sync };
}

describe("git sync with a private CA (--git-ca-root)", () => {
  test("without the CA the remote's certificate is refused: state error, remote_unreachable, the bucket stays empty", async () => {
    const url = await repoWithIndex("refused");
    expect(url.startsWith("https://")).toBe(true);
    const user = await plain.user({ plan: "pro" });
    const { bucketId, sync } = await importInto(plain, user, url);
    expect(sync.state).toBe("error");
    expect(sync.error).toMatchObject({ code: "remote_unreachable" });
    const files = await plain.api("GET", `/api/v1/buckets/${bucketId}/files`, { key: user.key });
    expect(files.body.data.files).toEqual([]);
  });

  test("with --git-ca-root naming the CA, the import runs over HTTPS and bucket changes are pushed back", async () => {
    const url = await repoWithIndex("trusted");
    const user = await trusting.user({ plan: "pro" });
    const { bucketId, sync } = await importInto(trusting, user, url);
    expect(sync).toMatchObject({ state: "in_sync", error: null });
    const file = await trusting.api("GET", `/api/v1/buckets/${bucketId}/files/by_path?path=index.html`, { key: user.key });
    expect(file.status).toBe(302);
    const bare = join(server.root, "trusted.git");
    const imported = await git(bare, "rev-parse", "main");
    expect(sync.last_commit).toBe(imported);
    expect((await directUpload(trusting, user.key, bucketId, textFile("from-bucket.txt", "pushed over https\n"))).status).toBeLessThan(300);
    await trusting.pier.runner.schedulePeriodic();
    await trusting.pier.runner.drain();
    trusting.clock.advance(61_000); // past the debounce that batches bucket changes into one commit
    await trusting.pier.runner.drain();
    expect(await git(bare, "rev-parse", "main")).not.toBe(imported);
    expect(await git(bare, "show", "main:from-bucket.txt")).toBe("pushed over https");
  });
});
