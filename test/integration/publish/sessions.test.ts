// Folder publishing: the `pier publish` / `pier preview` CLI against a real server, and the
// publish-session API's answers (only changed files uploaded, stale / expired / not pending,
// missing bytes, locks, rate limits).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { siteFetch } from "../../helpers/sites";
import { putBytes } from "../../helpers/uploads";
import { pierCommand } from "../../helpers/cli";
import { Database } from "bun:sqlite";
import { prunePublishSessions } from "../../../src/features/publish";
import { utimesSync } from "node:fs";
import type { DiskBlobStore } from "../../../src/blobs/disk";
import { collectGarbage } from "../../../src/blobs/gc";

let t: TestPier;
let dirs: string[] = [];
beforeAll(async () => {
  t = await startTestPier({ uploadRateLimitPerMinute: 1000 });
});
afterAll(async () => {
  await t.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "pier-site-"));
  dirs.push(dir);
  write(dir, files);
  return dir;
}
function write(dir: string, files: Record<string, string>) {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(join(dir, p, ".."), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
}

/** Run the CLI as a user would, draining the job runner while it polls. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([...(await pierCommand()), ...args], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "pier-xdg-")), PIER_URL: "", PIER_API_KEY: "", ...env },
  });
  let exited = false;
  const pump = (async () => {
    while (!exited) {
      await t.pier.runner.drain();
      await Bun.sleep(50);
    }
  })();
  const code = await proc.exited;
  exited = true;
  await pump;
  return { code, stdout: await new Response(proc.stdout).text(), stderr: await new Response(proc.stderr).text() };
}

const entry = (path: string, text: string, contentType = "text/html") => ({
  path,
  byte_size: Buffer.byteLength(text),
  content_type: contentType,
  checksum: new Bun.CryptoHasher("md5").update(text).digest("base64"),
  sha256: new Bun.CryptoHasher("sha256").update(text).digest("hex"),
});

describe("pier publish / pier preview", () => {
  test("publishes a folder, republishes only what changed, deletes what is gone, previews with an expiry", async () => {
    const u = await t.user({ plan: "pro" });
    const dir = folder({
      "index.html": "<h1>cli</h1>",
      "css/site.css": "body{}",
      "docs/guide.html": "<p>guide</p>",
      ".env": "SECRET=1",
      "node_modules/x/index.js": "x",
    });
    const first = await cli(["publish", dir, "--url", t.url, "--key", u.key, "--slug", "cli-published-site"]);
    expect(first.stderr).toContain("3 files — 3 new");
    expect(first.code).toBe(0);
    const url = first.stdout.trim();
    expect(url).toContain("cli-published-site.");
    const host = new URL(url).hostname;
    expect(await (await siteFetch(t, host, "/")).text()).toBe("<h1>cli</h1>");
    // Clean URLs (on by default): /docs/guide serves docs/guide.html, the .html address moves there.
    expect(await (await siteFetch(t, host, "/docs/guide")).text()).toBe("<p>guide</p>");
    expect((await siteFetch(t, host, "/docs/guide.html")).headers.get("location")).toBe("/docs/guide");
    expect((await siteFetch(t, host, "/.env")).status).toBe(404);

    write(dir, { "index.html": "<h1>cli v2</h1>" });
    rmSync(join(dir, "docs"), { recursive: true });
    const second = await cli(["publish", dir, "--url", t.url, "--key", u.key]);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain("0 new, 1 changed, 1 unchanged, 1 to delete; 1 to upload");
    expect(second.stdout.trim()).toBe(url);
    expect(await (await siteFetch(t, host, "/")).text()).toBe("<h1>cli v2</h1>");
    expect((await siteFetch(t, host, "/docs/guide")).status).toBe(404);
    expect((await siteFetch(t, host, "/docs/guide.html")).status).toBe(404);

    // Credentials from the file `pier login` writes.
    const xdg = mkdtempSync(join(tmpdir(), "pier-xdg-"));
    mkdirSync(join(xdg, "pier"));
    writeFileSync(join(xdg, "pier", "credentials.json"), JSON.stringify({ base_url: t.url, api_key: u.key }));
    const preview = await cli(["preview", dir, "--expires", "30", "--access", "password"], { XDG_CONFIG_HOME: xdg });
    expect(preview.code).toBe(0);
    const purl = preview.stdout.trim();
    expect(purl).toContain("preview-cli-published-site.");
    expect(preview.stderr).toContain("Expires at");
    expect(preview.stderr).toContain("Password:");
    expect((await siteFetch(t, new URL(purl).hostname, "/")).status).toBe(401);
    t.clock.advance(31 * 60_000);
    // The test's clock is the primary's: serving workers (PIER_TEST_WORKERS) run on the real one.
    expect((await t.primaryFetch(new URL(purl).hostname, "/")).status).toBe(410);
    expect(await (await siteFetch(t, host, "/")).text()).toBe("<h1>cli v2</h1>");
  });

  test("plan refusals are explained and exit 1; missing credentials exit 1", async () => {
    const u = await t.user({ plan: "free" });
    const dir = folder({ "index.html": "free" });
    const r = await cli(["publish", dir, "--url", t.url, "--key", u.key, "--access", "password"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("PUBLICATION_UPGRADE_REQUIRED");
    expect(r.stderr).toContain("pier preview");
    const none = await cli(["publish", dir]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("pier login URL");
    expect(none.stderr).toContain("PIER_URL and PIER_API_KEY");
  });
});

describe("pier publish under rate limits", () => {
  test("a 429 is waited out (Retry-After) and the publish still succeeds", async () => {
    const limited = await startTestPier({ uploadRateLimitPerMinute: 60 });
    try {
      const u = await limited.user({ plan: "pro" });
      // Spend the account's whole upload-control budget first. It refills one a second, so on a
      // busy machine (a request taking tens of milliseconds) 61 requests are not always enough.
      let status = 0;
      for (let i = 0; i < 600 && status !== 429; i++) {
        status = (
          await limited.api("POST", "/api/v1/publish_sessions", { key: u.key, body: { bucket_title: "Spent Budget Site", files: [entry("index.html", "x")] } })
        ).status;
      }
      expect(status).toBe(429);
      const dir = folder({ "index.html": "<p>patient</p>" });
      const proc = Bun.spawn([...(await pierCommand()), "publish", dir, "--url", limited.url, "--key", u.key], {
        stdout: "pipe",
        stderr: "pipe",
        env: { ...process.env, XDG_CONFIG_HOME: dir },
      });
      let exited = false;
      const pump = (async () => {
        while (!exited) {
          await limited.pier.runner.drain();
          await Bun.sleep(50);
        }
      })();
      const code = await proc.exited;
      exited = true;
      await pump;
      expect(code).toBe(0);
      const url = (await new Response(proc.stdout).text()).trim();
      expect(await (await siteFetch(limited, new URL(url).hostname, "/")).text()).toBe("<p>patient</p>");
    } finally {
      await limited.stop();
    }
  });
});

describe("publish sessions API", () => {
  async function session(u: TestUser, body: Record<string, unknown>) {
    return t.api("POST", "/api/v1/publish_sessions", { key: u.key, body });
  }

  test("descriptors only for changed files; stale, not pending, expired; missing bytes answer 503", async () => {
    const u = await t.user({ plan: "pro" });
    const files = { "index.html": "<p>one</p>", "a.txt": "aaa" };
    const s1 = await session(u, {
      bucket_title: "Session Bucket Site",
      files: Object.entries(files).map(([p, x]) => entry(p, x, p.endsWith(".txt") ? "text/plain" : "text/html")),
    });
    expect(s1.status).toBe(201);
    expect(s1.body.data.publish_session.uploads.length).toBe(2);
    expect(s1.body.data.deploy_summary).toContain("2 new");
    const sid = s1.body.data.publish_session.id;
    expect(sid.startsWith("pus_")).toBe(true);
    const bucketId = s1.body.data.bucket.id;

    const early = await t.api("POST", `/api/v1/publish_sessions/${sid}/finalize`, { key: u.key });
    expect([early.status, early.body.error.code]).toEqual([503, "PUBLISH_FILES_MISSING"]);
    expect(early.body.error.details.missing.sort()).toEqual(["a.txt", "index.html"]);
    expect((await t.api("GET", `/api/v1/buckets/${bucketId}/files`, { key: u.key })).body.data.files.length).toBe(0);

    const refreshed = await t.api("POST", `/api/v1/publish_sessions/${sid}/uploads/refresh`, { key: u.key });
    for (const up of refreshed.body.data.publish_session.uploads) expect((await putBytes(up.upload, files[up.path as keyof typeof files])).status).toBe(200);
    const fin = await t.api("POST", `/api/v1/publish_sessions/${sid}/finalize`, { key: u.key });
    expect(fin.status).toBe(202);
    expect(fin.body.data.publication).toMatchObject({ publish_state: "queued", status: "publishing" });
    const again = await t.api("POST", `/api/v1/publish_sessions/${sid}/finalize`, { key: u.key });
    expect([again.status, again.body.error.code]).toEqual([409, "PUBLISH_SESSION_NOT_PENDING"]);
    await t.pier.runner.drain();

    // Same manifest again, one file changed: one descriptor; the same bucket is found by title.
    const s2 = await session(u, {
      bucket_title: "Session Bucket Site",
      delete_missing: false,
      files: [entry("index.html", "<p>two</p>"), entry("a.txt", "aaa", "text/plain")],
    });
    expect(s2.body.data.bucket.id).toBe(bucketId);
    expect(s2.body.data.publish_session.uploads.map((x: { path: string }) => x.path)).toEqual(["index.html"]);
    // Someone else writes to the bucket meanwhile: the session is stale, nothing is written.
    const s3 = await session(u, { bucket_id: bucketId, files: [entry("index.html", "<p>two</p>")] });
    await putBytes(s2.body.data.publish_session.uploads[0].upload, "<p>two</p>");
    expect((await t.api("POST", `/api/v1/publish_sessions/${s2.body.data.publish_session.id}/finalize`, { key: u.key })).status).toBe(202);
    const stale = await t.api("POST", `/api/v1/publish_sessions/${s3.body.data.publish_session.id}/finalize`, { key: u.key });
    expect([stale.status, stale.body.error.code]).toEqual([409, "PUBLISH_SESSION_STALE"]);

    const s4 = await session(u, { bucket_id: bucketId, files: [entry("index.html", "<p>two</p>")] });
    t.clock.advance(2 * 3600_000);
    const expired = await t.api("POST", `/api/v1/publish_sessions/${s4.body.data.publish_session.id}/finalize`, { key: u.key });
    expect([expired.status, expired.body.error.code]).toEqual([409, "PUBLISH_SESSION_EXPIRED"]);
  });

  test("content the account holds in another bucket is not uploaded again, and survives that bucket's delete and a blob collection before finalize", async () => {
    const u = await t.user({ plan: "pro" });
    const text = `<p>held elsewhere ${crypto.randomUUID()}</p>`;
    const first = await session(u, { bucket_title: "Holder Bucket Site", files: [entry("index.html", text)] });
    await putBytes(first.body.data.publish_session.uploads[0].upload, text);
    expect((await t.api("POST", `/api/v1/publish_sessions/${first.body.data.publish_session.id}/finalize`, { key: u.key })).status).toBe(202);
    await t.pier.runner.drain();
    const holder = first.body.data.bucket.id;
    // Stored two days ago: past the collector's grace once nothing refers to it.
    const sha = entry("index.html", text).sha256;
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    utimesSync((t.pier.deps.blobs as DiskBlobStore).pathOf(sha), twoDaysAgo, twoDaysAgo);

    const second = await session(u, { bucket_title: "Borrower Bucket Site", files: [entry("index.html", text)] });
    expect(second.body.data.publish_session.uploads).toEqual([]);
    // The holder goes (its site first), and the collector runs, before the session is finalized.
    await t.api("DELETE", `/api/v1/buckets/${holder}/publication`, { key: u.key });
    await t.pier.runner.drain();
    const confirmation = (await t.api("GET", `/api/v1/buckets/${holder}`, { key: u.key })).body.data.bucket.delete.confirmation;
    expect((await t.api("DELETE", `/api/v1/buckets/${holder}`, { key: u.key, body: { confirmation } })).status).toBe(200);
    await collectGarbage(t.pier.deps);
    const fin = await t.api("POST", `/api/v1/publish_sessions/${second.body.data.publish_session.id}/finalize`, { key: u.key });
    expect(fin.status).toBe(202);
    await t.pier.runner.drain();
    const slug = fin.body.data.publication.public_slug;
    expect(await (await siteFetch(t, `${slug}.${t.pier.deps.urls.sitesDomain}`, "/")).text()).toBe(text);
  });

  test("a file the bucket already holds keeps its real MD5 and size whatever the manifest claims", async () => {
    // Review item 16: for a path whose sha256 matched the current file, finalize wrote the
    // manifest's MD5 (never checked against any bytes) when only the content type changed.
    const u = await t.user({ plan: "pro" });
    const real = entry("data.txt", "the real bytes", "text/plain");
    const s1 = await session(u, { bucket_title: "Checksum Site", files: [real] });
    const bucketId = s1.body.data.bucket.id;
    await putBytes(s1.body.data.publish_session.uploads[0].upload, "the real bytes");
    expect((await t.api("POST", `/api/v1/publish_sessions/${s1.body.data.publish_session.id}/finalize`, { key: u.key })).status).toBe(202);
    await t.pier.runner.drain();

    const lying = {
      ...real,
      content_type: "text/markdown",
      checksum: new Bun.CryptoHasher("md5").update("other bytes").digest("base64"),
      byte_size: real.byte_size + 5,
    };
    const s2 = await session(u, { bucket_id: bucketId, files: [lying] });
    expect(s2.body.data.publish_session.uploads).toEqual([]);
    expect((await t.api("POST", `/api/v1/publish_sessions/${s2.body.data.publish_session.id}/finalize`, { key: u.key })).status).toBe(202);
    await t.pier.runner.drain();
    const file = (await t.api("GET", `/api/v1/buckets/${bucketId}/files`, { key: u.key })).body.data.files[0];
    expect([file.content_type, file.checksum, file.byte_size]).toEqual(["text/markdown", real.checksum, real.byte_size]);
  });

  test("a locked bucket answers 423; bad manifests 422; archived BUCKET_ARCHIVED; the upload limiter 429 with Retry-After", async () => {
    const u = await t.user({ plan: "pro" });
    const s = await session(u, { bucket_title: "Locked Session Site", files: [entry("index.html", "x")] });
    const bucketId = s.body.data.bucket.id;
    const other = t.key(u, { scope: "bucket_admin" });
    await t.api("POST", `/api/v1/buckets/${bucketId}/lock`, { key: other, body: { message: "busy", duration_seconds: 600 } });
    await putBytes(s.body.data.publish_session.uploads[0].upload, "x");
    const locked = await t.api("POST", `/api/v1/publish_sessions/${s.body.data.publish_session.id}/finalize`, { key: u.key });
    expect([locked.status, locked.body.error.code]).toEqual([423, "BUCKET_LOCKED"]);
    expect(locked.headers.get("retry-after")).toBeTruthy();
    await t.api("DELETE", `/api/v1/buckets/${bucketId}/lock`, { key: other });

    const dup = await session(u, { bucket_id: bucketId, files: [entry("a.html", "1"), entry("a.html", "2")] });
    expect([dup.status, dup.body.error.code]).toEqual([422, "VALIDATION_FAILED"]);
    const bad = await session(u, { bucket_id: bucketId, files: [{ ...entry("b.html", "1"), sha256: "nope" }] });
    expect(bad.status).toBe(422);
    const noBucket = await session(u, { files: [entry("b.html", "1")] });
    expect(noBucket.status).toBe(422);
    await t.api("POST", `/api/v1/buckets/${bucketId}/archive`, { key: u.key });
    const archived = await session(u, { bucket_id: bucketId, files: [entry("b.html", "1")] });
    expect(archived.body.error.code).toBe("BUCKET_ARCHIVED");

    const limited = await startTestPier({ uploadRateLimitPerMinute: 2 });
    try {
      const lu = await limited.user({ plan: "pro" });
      const codes = [];
      for (let i = 0; i < 3; i++) {
        const r = await limited.api("POST", "/api/v1/publish_sessions", {
          key: lu.key,
          body: { bucket_title: "Rate Limited Site", files: [entry("index.html", "x")] },
        });
        codes.push(r.status);
        if (r.status === 429) {
          expect(r.body.error.code).toBe("UPLOAD_RATE_LIMIT_EXCEEDED");
          expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
        }
      }
      expect(codes).toEqual([201, 201, 429]);
    } finally {
      await limited.stop();
    }
  });
  test("a site password given to a session is never stored in clear: sealed until finalize, gone after", async () => {
    // Review: publish_request kept the password in clear for the session's hour and the week after.
    const u = await t.user({ plan: "pro" });
    const password = "Sup3r-Secret-Gate-PW";
    const rows = () => {
      const db = new Database(join(t.dataDir, "pier.db"), { readonly: true });
      try {
        return db.query<{ id: string; publish_request: string }, []>("SELECT id, publish_request FROM publish_sessions").all();
      } finally {
        db.close();
      }
    };
    const request = (id: string) => JSON.parse(rows().find((r) => r.id === id)!.publish_request);
    const s = await session(u, { bucket_title: "Sealed Password Site", access_mode: "password", password, files: [entry("index.html", "<p>gated</p>")] });
    expect(s.status).toBe(201);
    const sid = s.body.data.publish_session.id;
    expect(JSON.stringify(rows())).not.toContain(password);
    expect(request(sid)).toMatchObject({ access_mode: "password", password_sealed: expect.stringMatching(/^v1\./) });

    await putBytes(s.body.data.publish_session.uploads[0].upload, "<p>gated</p>");
    const fin = await t.api("POST", `/api/v1/publish_sessions/${sid}/finalize`, { key: u.key });
    expect(fin.status).toBe(202);
    await t.pier.runner.drain();
    expect(request(sid).password_sealed).toBeUndefined();
    // The site opens with the password given to the session.
    const host = new URL(fin.body.data.publication.public_url).hostname;
    const gate = (pw: string) =>
      siteFetch(t, host, "/_pier/gate/password", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ password: pw, next: "/" }).toString(),
        redirect: "manual",
      });
    expect((await gate("wrong-password")).status).toBe(401);
    const ok = await gate(password);
    expect(ok.status).toBe(303);
    expect(ok.headers.get("set-cookie")).toBeTruthy();

    // A session that expires unfinalized loses its sealed copy at the next sweep.
    const late = await session(u, {
      bucket_title: "Sealed Password Site",
      access_mode: "password",
      password: "another-secret",
      files: [entry("index.html", "<p>x</p>")],
    });
    const lateId = late.body.data.publish_session.id;
    expect(request(lateId).password_sealed).toBeString();
    prunePublishSessions(t.pier.deps);
    expect(request(lateId).password_sealed).toBeString(); // still pending: finalize needs it
    t.clock.advance(2 * 3600_000);
    prunePublishSessions(t.pier.deps);
    expect(request(lateId)).toMatchObject({ access_mode: "password" });
    expect(request(lateId).password_sealed).toBeUndefined();
  });
});
