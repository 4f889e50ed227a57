// Received mail (under _email/) is private to the bucket: git sync never pushes it to a
// repository, and nothing in a repository writes or deletes it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { commitChanges } from "../../../src/features/files";
import { saveRepository } from "../../../src/features/gitsync";
import { bucketText, syncNowAndWait, syncOf } from "../../helpers/gitsync";
import { git, startGitServer, workClone, type GitServer, type WorkClone } from "../../helpers/git-server";
import { apiKeyActorOf, startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
let server: GitServer;
let user: TestUser;
const clones: WorkClone[] = [];

beforeAll(async () => {
  server = startGitServer();
  t = await startTestPier({ gitAllowHttp: "on", gitAllowPrivateNetwork: "on" });
  user = await t.user({ plan: "pro" });
});
afterAll(async () => {
  for (const c of clones) c.cleanup();
  await t?.stop();
  await server?.stop();
});

const sync = (b: string) => syncOf(t, user.key, b);
const syncNow = (b: string) => syncNowAndWait(t, user.key, b);
/** What the mail receiver writes for a message (the system writer, not the API). */
async function receiveMail(b: string, path: string, text: string) {
  const blob = await t.pier.deps.blobs.putBytes(new TextEncoder().encode(text));
  commitChanges(t.pier.deps, { kind: "system", name: "mail" }, b, [{ path, blob: { ...blob, contentType: "text/plain" } }], { kind: "write" });
}

test("mail is not pushed, a repository's _email/ files are not imported, and deleting them in the repository leaves the bucket's mail", async () => {
  const url = server.createRepo("mail");
  const other = await workClone(url);
  clones.push(other);
  other.write("index.html", "hi\n");
  other.write("_email/2026/11/01/old/message.txt", "planted in the repository\n");
  await other.commitAndPush("init");
  const b = await newBucket(t, user.key, "mail");
  saveRepository(t.pier.deps, apiKeyActorOf(user), b, { repository_url: url, branch: "main" });
  expect((await t.api("POST", `/api/v1/buckets/${b}/github_sync`, { key: user.key, body: { direction: "import" } })).status).toBe(202);
  await t.pier.runner.drain();
  expect((await sync(b)).state).toBe("in_sync");
  expect(await bucketText(t, user.key, b, "index.html")).toBe("hi\n");
  expect(await bucketText(t, user.key, b, "_email/2026/11/01/old/message.txt")).toBeNull();

  // Mail arrives at the path the repository holds, and at a new one; a page changes too.
  await receiveMail(b, "_email/2026/11/01/old/message.txt", "real mail\n");
  await receiveMail(b, "_email/2026/11/22/x/message.txt", "Your reset code is 123456\n");
  await directUpload(t, user.key, b, textFile("page.html", "page\n"));
  expect((await syncNow(b)).state).toBe("in_sync");
  await other.pull();
  expect(other.read("page.html")).toBe("page\n");
  expect(existsSync(join(other.dir, "_email/2026/11/22"))).toBe(false);
  expect(other.read("_email/2026/11/01/old/message.txt")).toBe("planted in the repository\n");

  // The repository deletes its _email/ folder: the bucket's mail stays.
  await git(other.dir, "rm", "-rq", "_email");
  await other.commitAndPush("remove mail");
  expect((await syncNow(b)).state).toBe("in_sync");
  expect(await bucketText(t, user.key, b, "_email/2026/11/01/old/message.txt")).toBe("real mail\n");
  expect(await bucketText(t, user.key, b, "_email/2026/11/22/x/message.txt")).toBe("Your reset code is 123456\n");
});
