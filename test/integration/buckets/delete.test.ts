import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createBucket, snapshot } from "../../helpers/buckets";
import { createLogger } from "../../../src/core/log";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";

// A tiny sync limit so a handful of variables makes a "large" bucket that deletes in the background.
let t: TestPier;
let u: TestUser;
/** The server log: where a failed delete's raw error goes (and only there). */
const logLines: string[] = [];
beforeAll(async () => {
  t = await startTestPier({ bucketDeleteSyncLimit: 3 }, { log: createLogger("info", (l) => logLines.push(l)) });
  u = await t.user();
});
afterAll(() => t.stop());

const vars = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`VAR_${i}`, `value ${i}`]));
const notifications = (accountId: string) =>
  t.pier.deps.sqlite.query("select kind, subject, body, data from notifications where account_id = ? order by created_at, rowid").all(accountId) as any[];

describe("delete", () => {
  test("a small bucket is deleted at once with the confirmation phrase; its id stays tombstoned", async () => {
    const b = await createBucket(t, u);
    expect(b.delete).toEqual({ allowed: true, confirmation: `delete ${b.id}` });
    await t.api("PATCH", `/api/v1/buckets/${b.id}/variables`, { key: u.key, body: { variables: { A: "1" }, secrets: { S: "x" } } });

    const r = await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: u.key, body: { confirmation: b.delete.confirmation } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ deleted: true, bucket: { id: b.id, deleted: true } });
    const gone = await t.api("GET", `/api/v1/buckets/${b.id}`, { key: u.key });
    expect([gone.status, gone.body.error.code, gone.body.error.details.deleted]).toEqual([404, "BUCKET_NOT_FOUND", true]);
    // Another account learns nothing about it.
    const stranger = await t.user();
    const other = await t.api("GET", `/api/v1/buckets/${b.id}`, { key: stranger.key });
    expect([other.status, other.body.error.details]).toEqual([404, undefined]);
    const db = t.pier.deps.sqlite;
    expect(db.query("select count(*) n from bucket_variables where bucket_id = ?").get(b.id)).toEqual({ n: 0 });
    expect(db.query("select id, account_id from deleted_buckets where id = ?").get(b.id)).toEqual({ id: b.id, account_id: u.accountId });
    // Deleting again: gone.
    const again = await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: u.key, body: { confirmation: b.delete.confirmation } });
    expect(again.status).toBe(404);
  });

  test("a wrong confirmation is 422 CONFIRMATION_MISMATCH and deletes nothing", async () => {
    const b = await createBucket(t, u);
    const before = snapshot(t);
    for (const confirmation of ["", "delete", `delete ${b.id} `, b.id, `DELETE ${b.id}`]) {
      const r = await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: u.key, body: { confirmation } });
      expect(r.status).toBe(422);
      expect(r.body.error.code).toBe("CONFIRMATION_MISMATCH");
    }
    expect(snapshot(t)).toBe(before);
  });

  test("a large bucket is deleted in the background: 202, visible with bucket_delete progress, then a notification", async () => {
    const b = await createBucket(t, u, { title: "Big one" });
    await t.api("PATCH", `/api/v1/buckets/${b.id}/variables`, { key: u.key, body: { variables: vars(5), secrets: { TOKEN: "s3cret" } } });

    const r = await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: u.key, body: { confirmation: b.delete.confirmation } });
    expect(r.status).toBe(202);
    expect(r.body.data.deleted).toBe(false);
    expect(r.body.data.bucket).toMatchObject({
      id: b.id,
      deletion_started: true,
      lock: { kind: "bucket_delete", phase: "queued", total_items: 6, total_files: 0, total_versions: 0 },
    });
    expect(r.body.data.delete_progress).toMatchObject({ phase: "queued", total_files: 0, total_versions: 0, total_items: 6, deleted_items: 0 });

    // Still listed and readable, but locked: mutations answer 423, a second delete too.
    const got = await t.api("GET", `/api/v1/buckets/${b.id}`, { key: u.key });
    expect(got.body.data.bucket.lock).toMatchObject({ kind: "bucket_delete", total_items: 6 });
    expect(got.body.data.bucket.delete.allowed).toBe(false);
    const listed = await t.api("GET", "/api/v1/buckets", { key: u.key });
    expect(listed.body.data.buckets.find((x: any) => x.id === b.id).lock.kind).toBe("bucket_delete");
    const patch = await t.api("PATCH", `/api/v1/buckets/${b.id}`, { key: u.key, body: { bucket: { title: "no" } } });
    expect([patch.status, patch.body.error.code]).toEqual([423, "BUCKET_LOCKED"]);
    const twice = await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: u.key, body: { confirmation: b.delete.confirmation } });
    expect([twice.status, twice.body.error.code]).toEqual([423, "BUCKET_LOCKED"]);
    expect(twice.body.error.details.lock).toMatchObject({ kind: "bucket_delete", total_items: 6 });

    // One bucket at a time per account.
    const small = await createBucket(t, u);
    const before = snapshot(t);
    const other = await t.api("DELETE", `/api/v1/buckets/${small.id}`, { key: u.key, body: { confirmation: small.delete.confirmation } });
    expect([other.status, other.body.error.code]).toEqual([409, "BUCKET_DELETE_IN_PROGRESS"]);
    expect(other.body.error.details.deleting_bucket_id).toBe(b.id);
    expect(other.headers.get("retry-after")).toBeTruthy();
    expect(snapshot(t)).toBe(before);

    expect(await t.pier.runner.drain()).toBe(1);
    expect((await t.api("GET", `/api/v1/buckets/${b.id}`, { key: u.key })).status).toBe(404);
    const db = t.pier.deps.sqlite;
    expect(db.query("select count(*) n from bucket_variables where bucket_id = ?").get(b.id)).toEqual({ n: 0 });
    expect(db.query("select count(*) n from deleted_buckets where id = ?").get(b.id)).toEqual({ n: 1 });
    const n = notifications(u.accountId).filter((x) => JSON.parse(x.data).bucket_id === b.id);
    expect(n).toHaveLength(1);
    expect(n[0].kind).toBe("bucket_deleted");
    expect(n[0].subject).toContain("Big one");
    // The account reads it over REST (any account-wide key), newest first.
    const told = await t.api("GET", "/api/v1/notifications", { key: t.key(u, { scope: "bucket_read" }) });
    expect(told.status).toBe(200);
    expect(told.body.data.notifications[0]).toMatchObject({
      kind: "bucket_deleted",
      subject: expect.stringContaining("Big one"),
      data: { bucket_id: b.id },
      created_at: expect.any(String),
    });
    // Not to keys limited to selected buckets, and not to other accounts.
    const selected = t.key(u, { scope: "bucket_admin", bucketAccess: "selected", bucketPermissions: { [small.id]: "admin" } });
    const refused = await t.api("GET", "/api/v1/notifications", { key: selected });
    expect([refused.status, refused.body.error.code]).toEqual([403, "FORBIDDEN"]);
    const stranger = await t.api("GET", "/api/v1/notifications", { key: (await t.user()).key });
    expect(stranger.body.data.notifications).toEqual([]);
    const bad = await t.api("GET", "/api/v1/notifications?limit=0", { key: u.key });
    expect([bad.status, bad.body.error.code]).toEqual([422, "VALIDATION_FAILED"]);

    // Now the other delete may go.
    expect((await t.api("DELETE", `/api/v1/buckets/${small.id}`, { key: u.key, body: { confirmation: small.delete.confirmation } })).status).toBe(200);
  });

  test("a delete interrupted by a crash resumes after restart (the sweeper requeues the job)", async () => {
    const b = await createBucket(t, u);
    await t.api("PATCH", `/api/v1/buckets/${b.id}/variables`, { key: u.key, body: { variables: vars(8) } });
    expect((await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: u.key, body: { confirmation: b.delete.confirmation } })).status).toBe(202);
    // Simulate a crash mid-delete: half the rows gone, job left "running" with an expired lease.
    const db = t.pier.deps.sqlite;
    db.run("delete from bucket_variables where rowid in (select rowid from bucket_variables where bucket_id = ? limit 4)", [b.id]);
    db.run("update jobs set status = 'running', lease_until = '2000-01-01T00:00:00.000Z', attempts = 1 where kind = 'buckets.delete' and status = 'queued'");
    expect(t.pier.runner.sweep()).toBe(1);
    expect(await t.pier.runner.drain()).toBe(1);
    expect((await t.api("GET", `/api/v1/buckets/${b.id}`, { key: u.key })).status).toBe(404);
  });

  test("while a background delete runs, the bucket's receiving address is not ready: bucket_deleting", async () => {
    const owner = await t.user();
    const b = await createBucket(t, owner, { title: "Mail going away", inbound_email: { enabled: true } });
    await t.api("PATCH", `/api/v1/buckets/${b.id}/variables`, { key: owner.key, body: { variables: vars(5) } });
    expect((await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: owner.key, body: { confirmation: b.delete.confirmation } })).status).toBe(202);
    const state = await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email`, { key: owner.key });
    expect(state.body.data).toMatchObject({ ready: false, blocked_reason: "bucket_deleting", address: b.inbound_email.address });
    await t.pier.runner.drain();
    expect((await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email`, { key: owner.key })).status).toBe(404);
  });

  test("a big bucket empties in bounded batches, one transaction each", async () => {
    const b = await createBucket(t, u, { title: "Huge" });
    // More rows than the API's variable cap: written straight to the table, as a bulk import would.
    const insert = t.pier.deps.sqlite.prepare(
      "insert into bucket_variables (bucket_id, name, secret, value, updated_at) values (?, ?, 0, 'v', '2026-01-01T00:00:00.000Z')",
    );
    t.pier.deps.sqlite.transaction(() => {
      for (let i = 0; i < 1200; i++) insert.run(b.id, `V_${i}`);
    })();
    const r = await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: u.key, body: { confirmation: b.delete.confirmation } });
    expect(r.body.data.delete_progress.total_items).toBe(1200);
    expect(await t.pier.runner.drain()).toBe(1);
    const job = t.pier.deps.sqlite.query("select status, result from jobs where kind = 'buckets.delete' order by rowid desc limit 1").get() as any;
    expect(job.status).toBe("done");
    expect(JSON.parse(job.result)).toEqual({ bucket_id: b.id, batches: 3 }); // 500 + 500 + 200
    const n = notifications(u.accountId).find((x) => JSON.parse(x.data).bucket_id === b.id);
    expect(JSON.parse(n.data).total_items).toBe(1200);
  });

  test("a background delete that keeps failing unlocks the bucket and records a failed-delete notification", async () => {
    const b = await createBucket(t, u, { title: "Stubborn" });
    await t.api("PATCH", `/api/v1/buckets/${b.id}/variables`, { key: u.key, body: { variables: vars(5) } });
    const db = t.pier.deps.sqlite;
    // The storage layer refuses the deletes (as a broken disk would), with a reason that names a server path.
    db.run(
      `create trigger refuse_var_delete before delete on bucket_variables when old.bucket_id = '${b.id}' begin select raise(abort, 'disk I/O error reading /srv/pier-data/pier.db'); end`,
    );
    try {
      expect((await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: u.key, body: { confirmation: b.delete.confirmation } })).status).toBe(202);
      for (let attempt = 0; attempt < 3; attempt++) {
        expect(await t.pier.runner.drain()).toBe(1);
        t.clock.advance(3600_000); // past the retry backoff
      }
      const got = await t.api("GET", `/api/v1/buckets/${b.id}`, { key: u.key });
      expect(got.status).toBe(200);
      expect(got.body.data.bucket.lock).toBeUndefined();
      expect(got.body.data.bucket.delete.allowed).toBe(true);
      const n = notifications(u.accountId).filter((x) => JSON.parse(x.data).bucket_id === b.id);
      expect(n.map((x) => x.kind)).toEqual(["bucket_delete_failed"]);
      const rest = (await t.api("GET", "/api/v1/notifications?limit=1", { key: u.key })).body.data.notifications;
      expect(rest).toHaveLength(1);
      expect(rest[0]).toMatchObject({ kind: "bucket_delete_failed", data: { bucket_id: b.id } });
      // The account gets a stable code and a sentence, never the raw internal error (it names a
      // server path); the operator finds that in the server log, with the bucket's id.
      expect(rest[0].data.error_code).toBe("INTERNAL");
      expect(rest[0].data.error_message).toContain("server log");
      expect(rest[0].data.error).toBeUndefined();
      expect(JSON.stringify(rest[0])).not.toContain("/srv/pier-data");
      expect(JSON.stringify(rest[0])).not.toContain("disk I/O error");
      const logged = logLines.map((l) => JSON.parse(l)).find((l) => l.msg === "bucket delete failed" && l.bucket_id === b.id);
      expect(logged?.error).toContain("disk I/O error reading /srv/pier-data/pier.db");
      // The bucket works again.
      expect((await t.api("PATCH", `/api/v1/buckets/${b.id}`, { key: u.key, body: { bucket: { title: "Still here" } } })).status).toBe(200);
    } finally {
      db.run("drop trigger refuse_var_delete");
    }
    // With the disk healthy again, the delete goes through.
    expect((await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: u.key, body: { confirmation: b.delete.confirmation } })).status).toBe(202);
    await t.pier.runner.drain();
    expect((await t.api("GET", `/api/v1/buckets/${b.id}`, { key: u.key })).status).toBe(404);
  });

  test("another key's bucket lock blocks delete with 423", async () => {
    const b = await createBucket(t, u);
    const agent = t.key(u, { scope: "bucket_write" });
    await t.api("POST", `/api/v1/buckets/${b.id}/lock`, { key: agent, body: { message: "agent at work" } });
    const before = snapshot(t);
    const r = await t.api("DELETE", `/api/v1/buckets/${b.id}`, { key: u.key, body: { confirmation: b.delete.confirmation } });
    expect([r.status, r.body.error.code]).toEqual([423, "BUCKET_LOCKED"]);
    expect(r.body.error.details.lock.message).toBe("agent at work");
    expect(snapshot(t)).toBe(before);
  });
});
