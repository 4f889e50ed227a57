// Issue 10 #6 and issue 11 "what must exist" #3: received mail lives under `_email/` in the
// same bucket as the site, and must stay private to the API and dashboard: never deployed,
// listed by the Auto-Index or served; never deleted by a folder publish (publish session,
// upload session with delete_missing, version restore); deleted only by an explicit delete.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import { createBucket } from "../helpers/buckets";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { siteFetch } from "../helpers/sites";
import { putBytes, syncFiles, textFile } from "../helpers/uploads";

const DOMAIN = "mail.pier.test";
let t: TestPier;
let u: TestUser;
let bucketId: string;
let address: string;

const site = {
  "README.md": "# Welcome\n\nThe folder's readme.\n",
  "page.html": "<p>a page</p>",
};
const entry = (path: string, text: string) => ({
  path,
  byte_size: Buffer.byteLength(text),
  content_type: path.endsWith(".html") ? "text/html" : "text/markdown",
  checksum: new Bun.CryptoHasher("md5").update(text).digest("base64"),
  sha256: new Bun.CryptoHasher("sha256").update(text).digest("hex"),
});

beforeAll(async () => {
  t = await startTestPier({ smtpPort: 0, mailDomain: DOMAIN, smtpRateLimitPerIp: 10_000, uploadRateLimitPerMinute: 10_000 });
  u = await t.user({ plan: "pro" });
  const b = await createBucket(t, u, { title: "Site with mail", inbound_email: { enabled: true } });
  bucketId = b.id;
  address = b.inbound_email.address;
});
afterAll(() => t.stop());

async function deliver(subject: string) {
  await nodemailer
    .createTransport({
      host: "127.0.0.1",
      port: t.pier.smtp!.port,
      secure: false,
      requireTLS: true,
      tls: { rejectUnauthorized: false },
    } as SMTPTransport.Options)
    .sendMail({
      from: "Someone <someone@sender.test>",
      to: address,
      subject,
      text: `Private body of ${subject}`,
      attachments: [{ filename: "contract.pdf", content: "%PDF-1.4 private" }],
    });
}

async function mailFiles(): Promise<{ id: string; path: string }[]> {
  const r = await t.api("GET", `/api/v1/buckets/${bucketId}/files?q=_email/&limit=1000`, { key: u.key });
  expect(r.status).toBe(200);
  return r.body.data.files;
}

/** `pier publish DIR` as the CLI does it: a publish session with delete_missing (the default). */
async function publishFolder(opts: { preview?: boolean } = {}) {
  const s = await t.api("POST", "/api/v1/publish_sessions", {
    key: u.key,
    body: { bucket_id: bucketId, preview: opts.preview ?? false, files: Object.entries(site).map(([p, x]) => entry(p, x)) },
  });
  expect(s.status).toBe(201);
  for (const up of s.body.data.publish_session.uploads) expect((await putBytes(up.upload, site[up.path as keyof typeof site])).status).toBe(200);
  const fin = await t.api("POST", `/api/v1/publish_sessions/${s.body.data.publish_session.id}/finalize`, { key: u.key });
  expect(fin.status).toBe(202);
  await t.pier.runner.drain();
  const pub = (await t.api("GET", `/api/v1/publications/${fin.body.data.publication.id}`, { key: u.key })).body.data.publication;
  expect(pub.publish_state).toBe("ready");
  return { session: s.body.data, finalize: fin.body.data, host: new URL(pub.public_url).hostname };
}

describe("received mail is private to the API", () => {
  let host: string;
  let messagePaths: string[];

  test("a folder publish neither deletes the messages nor announces them as 'to delete'", async () => {
    host = (await publishFolder()).host;
    await deliver("first");
    await deliver("second");
    messagePaths = (await mailFiles()).map((f) => f.path);
    expect(messagePaths.length).toBeGreaterThanOrEqual(6); // eml + json + attachment, twice

    const again = await publishFolder();
    expect(again.session.changes.deleted).toBe(0);
    expect(again.session.deploy_summary).toContain("0 to delete");
    expect(again.finalize.files_deleted).toBe(0);
    expect((await mailFiles()).map((f) => f.path)).toEqual(messagePaths);
  });

  test("a preview publish keeps them too", async () => {
    await publishFolder({ preview: true });
    expect((await mailFiles()).map((f) => f.path)).toEqual(messagePaths);
  });

  test("never deployed, listed by the Auto-Index, or served", async () => {
    // Deliver one more and republish the whole bucket with the build job (no folder, no deletes).
    await deliver("third");
    messagePaths = (await mailFiles()).map((f) => f.path);
    const republish = await t.api("POST", `/api/v1/buckets/${bucketId}/publication`, { key: u.key, body: {} });
    expect(republish.status).toBeLessThan(300);
    await t.pier.runner.drain();
    const index = await siteFetch(t, host, "/");
    expect(index.status).toBe(200);
    const html = await index.text();
    expect(html).toContain("page.html");
    expect(html).not.toContain("_email");
    for (const p of ["/_email/", "/_email", ...messagePaths.map((x) => `/${x}`)]) {
      const r = await siteFetch(t, host, p);
      expect([p, r.status]).toEqual([p, 404]);
      expect(await r.text()).not.toContain("Private body");
    }
    // Even a publication rooted at the mail folder publishes nothing from it.
    const rooted = await t.api("POST", `/api/v1/buckets/${bucketId}/publication`, { key: u.key, body: { publication_root_directory: "_email" } });
    expect(rooted.status).toBeLessThan(300);
    await t.pier.runner.drain();
    const pub = (await t.api("GET", `/api/v1/publications/${rooted.body.data.publication.id}`, { key: u.key })).body.data.publication;
    expect(pub.publish_state).toBe("failed");
    for (const p of messagePaths) expect((await siteFetch(t, host, `/${p.slice("_email/".length)}`)).status).toBe(404);
  });

  test("an upload session with delete_missing and a version restore keep them", async () => {
    const { finalize } = await syncFiles(
      t,
      u.key,
      bucketId,
      Object.entries(site).map(([p, x]) => textFile(p, x)),
      { deleteMissing: true },
    );
    expect(finalize.status).toBe(200);
    expect(finalize.body.data.upload_session.deleted_files_count).toBe(0);
    expect((await mailFiles()).map((f) => f.path)).toEqual(messagePaths);

    const versions = (await t.api("GET", `/api/v1/buckets/${bucketId}/versions?limit=500`, { key: u.key })).body.data.versions;
    const first = versions.at(-1);
    const restored = await t.api("POST", `/api/v1/buckets/${bucketId}/versions/restore`, { key: u.key, body: { version_id: first.id } });
    expect(restored.status).toBeLessThan(300);
    expect((await mailFiles()).map((f) => f.path)).toEqual(messagePaths);
  });

  test("an explicit delete of a message file removes it", async () => {
    const [one, two] = await mailFiles();
    const del = await t.api("DELETE", `/api/v1/buckets/${bucketId}/files/${one!.id}`, { key: u.key });
    expect(del.status).toBe(200);
    const re = await t.api("POST", `/api/v1/buckets/${bucketId}/files/reorganize`, { key: u.key, body: { operations: [{ op: "delete", from: two!.path }] } });
    expect(re.status).toBe(200);
    const left = (await mailFiles()).map((f) => f.path);
    expect(left).not.toContain(one!.path);
    expect(left).not.toContain(two!.path);
    expect(left.length).toBe(messagePaths.length - 2);
  });
});
