// File locks whose holder can no longer act (D257), and breaking another holder's lock (D258).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApiKey, revokeApiKey } from "../../../src/features/accounts/keys";
import { destroySession } from "../../../src/features/accounts/sessions";
import { createGrant, issueTokens, revokeGrant } from "../../../src/features/oauth/grants";
import { discoverAndRegister, hiddenFields, page, sessionCookie } from "../../helpers/oauth";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier();
  u = await t.user({ plan: "pro" });
});
afterAll(() => t.stop());

const WEEK_S = 7 * 24 * 3600;

/** A bucket with notes.txt locked for a week by `holder`; returns the bucket and the file id. */
async function lockedFile(holder: string) {
  const bucket = await newBucket(t, u.key);
  const up = await directUpload(t, u.key, bucket, textFile("notes.txt", "hello"));
  expect(up.status).toBe(201);
  const lock = await t.api("POST", `/api/v1/buckets/${bucket}/files/lock`, {
    key: holder,
    body: { paths: ["notes.txt"], message: "agent at work", duration_seconds: WEEK_S },
  });
  expect(lock.status).toBe(200);
  return { bucket, fileId: up.body.data.file.id as string };
}

const fileLock = async (bucket: string, fileId: string) =>
  (await t.api("GET", `/api/v1/buckets/${bucket}/files/${fileId}`, { key: u.key })).body.data.file.lock;
const lockRows = (holderId: string) => t.pier.deps.sqlite.query("SELECT path FROM file_locks WHERE holder_id = ?").all(holderId);

/** The owner's writes on notes.txt go through: overwrite, then delete. */
async function ownerWrites(bucket: string, fileId: string) {
  expect((await directUpload(t, u.key, bucket, textFile("notes.txt", "new content"))).status).toBe(201);
  expect((await t.api("DELETE", `/api/v1/buckets/${bucket}/files/${fileId}`, { key: u.key })).status).toBe(200);
}

describe("a lock whose holder can no longer act blocks nobody", () => {
  test("a revoked key's locks are deleted with it; the owner writes at once", async () => {
    const { key: agentKey, record } = createApiKey(t.pier.deps, {
      accountId: u.accountId,
      userId: u.userId,
      label: "agent",
      kind: "named",
      scope: "bucket_write",
    });
    const { bucket, fileId } = await lockedFile(agentKey);
    expect((await t.api("DELETE", `/api/v1/buckets/${bucket}/files/${fileId}`, { key: u.key })).status).toBe(423);
    revokeApiKey(t.pier.deps, u.accountId, record.id);
    expect(lockRows(record.id)).toEqual([]);
    expect(await fileLock(bucket, fileId)).toBeNull();
    await ownerWrites(bucket, fileId);
  });

  test("an expired key's lock is ignored where locks are checked: listing, writes, taking and releasing the lock", async () => {
    const { key: agentKey, record } = createApiKey(t.pier.deps, {
      accountId: u.accountId,
      userId: u.userId,
      label: "short-lived agent",
      kind: "named",
      scope: "bucket_write",
      expiresAt: new Date(t.clock.now().getTime() + 3600_000).toISOString(),
    });
    const { bucket, fileId } = await lockedFile(agentKey);
    const other = t.key(u, { scope: "bucket_write" });
    expect((await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: other, body: { path: "notes.txt", text: "!" } })).status).toBe(423);
    t.clock.advance(2 * 3600_000); // the key expired; its week-long lock row is still there
    expect(lockRows(record.id)).toHaveLength(1);
    expect(await fileLock(bucket, fileId)).toBeNull();
    expect((await t.api("POST", `/api/v1/buckets/${bucket}/files/append_text`, { key: other, body: { path: "notes.txt", text: "!" } })).status).toBe(200);
    const taken = await t.api("POST", `/api/v1/buckets/${bucket}/files/lock`, { key: other, body: { paths: ["notes.txt"], message: "mine now" } });
    expect(taken.status).toBe(200);
    expect((await t.api("DELETE", `/api/v1/buckets/${bucket}/files/${fileId}/lock`, { key: other })).body.data).toMatchObject({
      unlocked: true,
      broken: false,
    });
  });

  test("a revoked OAuth connection's locks (its token's and its key's) are deleted with it", async () => {
    const { client } = await discoverAndRegister(t, { client_name: "agent", redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" });
    const grant = createGrant(t.pier.deps, {
      clientId: client.client_id,
      accountId: u.accountId,
      userId: u.userId,
      flow: "authorization_code",
      scope: "pier:mcp",
      permission: "bucket_write",
    });
    const { access_token } = issueTokens(t.pier.deps, grant);
    const { bucket, fileId } = await lockedFile(access_token);
    expect(lockRows(grant.id)).toHaveLength(1);
    revokeGrant(t.pier.deps, grant.id, "revoked_by_user");
    expect(lockRows(grant.id)).toEqual([]);
    await ownerWrites(bucket, fileId);
  });

  test("a browser session's lock stops blocking when it signs out", async () => {
    const cookie = sessionCookie(t, u);
    const bucket = await newBucket(t, u.key);
    const fileId = (await directUpload(t, u.key, bucket, textFile("notes.txt", "hello"))).body.data.file.id;
    const fileUrl = `${t.url}/dashboard/buckets/${bucket}/files/${fileId}`;
    const form = hiddenFields(await (await page(fileUrl, cookie)).text());
    const locked = await page(`${fileUrl}/lock`, cookie, { csrf: form.csrf!, message: "editing", duration_seconds: String(WEEK_S) });
    expect(locked.status).toBe(303);
    expect((await t.api("DELETE", `/api/v1/buckets/${bucket}/files/${fileId}`, { key: u.key })).status).toBe(423);
    // Signing out ends the session (what POST /signout does).
    destroySession(t.pier.deps, /pier_session=([^;]+)/.exec(cookie)![1]);
    expect(await fileLock(bucket, fileId)).toBeNull();
    expect((await t.api("DELETE", `/api/v1/buckets/${bucket}/files/${fileId}`, { key: u.key })).status).toBe(200);
  });
});

describe("a lock follows its file", () => {
  test("renamed by its holder, the lock moves with the file (released by the file's id); deleted, it goes: the old path is free", async () => {
    const agent = t.key(u, { scope: "bucket_write" });
    const { bucket, fileId } = await lockedFile(agent);
    const renamed = await t.api("POST", `/api/v1/buckets/${bucket}/files/${fileId}/rename`, { key: agent, body: { path: "renamed.txt" } });
    expect(renamed.status).toBe(200);
    expect(await fileLock(bucket, fileId)).toMatchObject({ message: "agent at work" });
    // Before: the lock stayed on notes.txt, where no file is, so no file id could release it and
    // nobody else could write notes.txt for the week.
    expect((await directUpload(t, u.key, bucket, textFile("notes.txt", "mine"))).status).toBe(201);
    expect((await directUpload(t, u.key, bucket, textFile("renamed.txt", "mine"))).status).toBe(423);
    expect((await t.api("DELETE", `/api/v1/buckets/${bucket}/files/${fileId}/lock`, { key: agent })).body.data).toMatchObject({ path: "renamed.txt" });
    expect(await fileLock(bucket, fileId)).toBeNull();

    const relock = await t.api("POST", `/api/v1/buckets/${bucket}/files/lock`, { key: agent, body: { paths: ["renamed.txt"], message: "again" } });
    expect(relock.status).toBe(200);
    expect((await t.api("DELETE", `/api/v1/buckets/${bucket}/files/${fileId}`, { key: agent })).status).toBe(200);
    expect(t.pier.deps.sqlite.query("SELECT path FROM file_locks WHERE bucket_id = ?").all(bucket)).toEqual([]);
    expect((await directUpload(t, u.key, bucket, textFile("renamed.txt", "mine"))).status).toBe(201);
  });
});

describe("bucket_admin breaks another holder's live lock with force", () => {
  test("over the API: without force 423, a bucket_write key's force 403, a bucket_admin's force releases it", async () => {
    const agent = t.key(u, { scope: "bucket_write" });
    const { bucket, fileId } = await lockedFile(agent);
    const url = `/api/v1/buckets/${bucket}/files/${fileId}/lock`;
    const plain = await t.api("DELETE", url, { key: u.key });
    expect(plain.status).toBe(423);
    expect(plain.body.error.code).toBe("FILE_LOCKED");
    const writer = t.key(u, { scope: "bucket_write" });
    const weak = await t.api("DELETE", `${url}?force=true`, { key: writer });
    expect(weak.status).toBe(403);
    expect(weak.body.error).toMatchObject({ code: "FORBIDDEN", details: { required_scope: "bucket_admin" } });
    expect(await fileLock(bucket, fileId)).toMatchObject({ message: "agent at work" });
    const admin = t.key(u, { scope: "bucket_admin", bucketAccess: "selected", bucketPermissions: { [bucket]: "admin" } });
    const broke = await t.api("DELETE", `${url}?force=true`, { key: admin });
    expect(broke.status).toBe(200);
    expect(broke.body.data).toMatchObject({ unlocked: true, path: "notes.txt", broken: true });
    expect(await fileLock(bucket, fileId)).toBeNull();
    await ownerWrites(bucket, fileId);
  });

  test("in the dashboard: the owner sees Break the lock and breaking it frees the file", async () => {
    const agent = t.key(u, { scope: "bucket_write" });
    const { bucket, fileId } = await lockedFile(agent);
    const cookie = sessionCookie(t, u);
    const fileUrl = `${t.url}/dashboard/buckets/${bucket}/files/${fileId}`;
    const html = await (await page(fileUrl, cookie)).text();
    expect(html).toContain("Break the lock");
    const form = hiddenFields(html);
    const res = await page(`${fileUrl}/unlock`, cookie, { csrf: form.csrf!, force: "true" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toContain("done=broken");
    expect(await fileLock(bucket, fileId)).toBeNull();
    // The file is free: the agent may lock it again.
    const after = await t.api("POST", `/api/v1/buckets/${bucket}/files/lock`, { key: agent, body: { paths: ["notes.txt"], message: "again" } });
    expect(after.status).toBe(200);
  });
});
