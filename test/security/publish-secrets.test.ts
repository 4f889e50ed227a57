// Issue 10, medium #5: `.git/` is published. A `.git/config` with a token in its remote URL,
// uploaded through the API, was served by the public site. The server's publish rules
// (features/publish/exclusions.ts, one list) now keep version-control folders and other
// secret-bearing files out of every deploy (build job, publish sessions, previews), and the
// site server refuses them even in a deploy written before the rule existed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { deployFiles } from "../../src/db/schema";
import { isExcludedFromPublish } from "../../src/features/publish/exclusions";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { publishSite, siteFetch } from "../helpers/sites";
import { directUpload, newBucket, putBytes, textFile } from "../helpers/uploads";

let t: TestPier;
let u: TestUser;

const TOKEN = "ghp_0123456789abcdefSECRETTOKEN";
const secrets: Record<string, string> = {
  ".git/config": `[remote "origin"]\n\turl = https://x-access-token:${TOKEN}@github.com/acme/site.git\n`,
  ".git/HEAD": "ref: refs/heads/main\n",
  "docs/.git/config": `[remote "origin"]\n\turl = https://${TOKEN}@example.com/r.git\n`,
  ".hg/hgrc": `[paths]\ndefault = https://user:${TOKEN}@hg.example.com/repo\n`,
  ".svn/entries": `svn ${TOKEN}\n`,
  ".DS_Store": `Bud1 ${TOKEN}`,
  ".htaccess": `AuthUserFile /srv/${TOKEN}\n`,
  ".yarnrc.yml": `npmAuthToken: ${TOKEN}\n`,
  ".aws/config": `[default]\naws_secret_access_key = ${TOKEN}\n`,
  "docs/notes.md.swp": `b0VIM ${TOKEN}`,
};
const publicFiles: Record<string, string> = {
  "index.html": "<p>home</p>",
  "docs/guide.txt": "a guide",
  ".well-known/security.txt": "Contact: mailto:security@example.com\n",
};
const all = { ...secrets, ...publicFiles };
const typeOf = (p: string) => (p.endsWith(".html") ? "text/html" : "text/plain");

beforeAll(async () => {
  t = await startTestPier({ uploadRateLimitPerMinute: 10_000 });
  u = await t.user({ plan: "pro" });
});
afterAll(() => t.stop());

async function assertNothingSecretServed(host: string) {
  for (const p of Object.keys(secrets)) {
    const r = await siteFetch(t, host, `/${p}`);
    const body = await r.text();
    expect([p, r.status]).toEqual([p, 404]);
    expect(body).not.toContain(TOKEN);
  }
  // Folder listings: /.git/ is no folder of the site, and /docs/ does not list its .git.
  expect((await siteFetch(t, host, "/.git/")).status).toBe(404);
  const docs = await (await siteFetch(t, host, "/docs/")).text();
  expect(docs).toContain("guide.txt");
  expect(docs).not.toContain(".git");
  expect(docs).not.toContain(".swp");
  // What is meant to be public still is.
  expect(await (await siteFetch(t, host, "/.well-known/security.txt")).text()).toContain("Contact:");
}

describe("secret-bearing paths are never published", () => {
  test("bucket files uploaded through the API, published by the build job", async () => {
    const bucket = await newBucket(t, u.key, "Repo checkout");
    for (const [p, x] of Object.entries(all)) expect((await directUpload(t, u.key, bucket, textFile(p, x, typeOf(p)))).status).toBe(201);
    const r = await t.api("POST", `/api/v1/buckets/${bucket}/publication`, { key: u.key, body: {} });
    expect(r.status).toBeLessThan(300);
    await t.pier.runner.drain();
    const pub = (await t.api("GET", `/api/v1/publications/${r.body.data.publication.id}`, { key: u.key })).body.data.publication;
    expect(pub.publish_state).toBe("ready");
    expect(pub.published_files_count).toBe(Object.keys(publicFiles).length);
    await assertNothingSecretServed(new URL(pub.public_url).hostname);
  });

  test("a publish session (preview) whose manifest names them", async () => {
    const files = Object.entries(all).map(([path, x]) => ({
      path,
      byte_size: Buffer.byteLength(x),
      content_type: typeOf(path),
      checksum: new Bun.CryptoHasher("md5").update(x).digest("base64"),
      sha256: new Bun.CryptoHasher("sha256").update(x).digest("hex"),
    }));
    const s = await t.api("POST", "/api/v1/publish_sessions", { key: u.key, body: { bucket_title: "Preview checkout", preview: true, files } });
    expect(s.status).toBe(201);
    for (const up of s.body.data.publish_session.uploads) expect((await putBytes(up.upload, all[up.path]!)).status).toBe(200);
    const fin = await t.api("POST", `/api/v1/publish_sessions/${s.body.data.publish_session.id}/finalize`, { key: u.key });
    expect(fin.status).toBe(202);
    await t.pier.runner.drain();
    const pub = (await t.api("GET", `/api/v1/publications/${fin.body.data.publication.id}`, { key: u.key })).body.data.publication;
    expect(pub.publish_state).toBe("ready");
    await assertNothingSecretServed(new URL(pub.public_url).hostname);
  });

  test("a deploy written directly (any publishing path that calls writeDeploy)", async () => {
    const site = await publishSite(t, { user: u, files: Object.entries(all).map(([path, bytes]) => ({ path, bytes })) });
    await assertNothingSecretServed(site.host);
  });

  test("the site server refuses them even in a deploy stored before the rule existed", async () => {
    const site = await publishSite(t, { user: u, files: Object.entries(publicFiles).map(([path, bytes]) => ({ path, bytes })) });
    const blob = await t.pier.deps.blobs.putBytes(secrets[".git/config"]!);
    // A legacy deploy row, written behind the exclusion rules' back.
    t.pier.deps.db
      .insert(deployFiles)
      .values({
        deployId: site.deployId,
        path: ".git/config",
        blobSha256: blob.sha256,
        size: blob.size,
        contentType: "text/plain",
        etag: `"${blob.sha256}"`,
      })
      .run();
    const r = await siteFetch(t, site.host, "/.git/config");
    expect(r.status).toBe(404);
    expect(await r.text()).not.toContain(TOKEN);
  });

  test("the list: version control, credentials, swap files, mail; Windows trailing dots do not slip through", () => {
    for (const p of [
      ".git/config",
      "a/b/.git/objects/ab/cdef",
      ".GIT/config",
      ".git./config",
      ".hg/store",
      ".svn/wc.db",
      ".bzr/branch",
      "_email/x/message.json",
      ".env",
      ".env.production",
      ".npmrc",
      ".netrc",
      ".htpasswd",
      ".htaccess",
      ".DS_Store",
      "x/.ds_store",
      "id_rsa",
      "keys/id_ed25519",
      ".ssh/authorized_keys",
      ".aws/credentials",
      ".docker/config.json",
      ".kube/config",
      "a.swp",
      "evil.exe.",
      "evil.exe ",
      ".yarnrc.yml",
    ])
      expect([p, isExcludedFromPublish(p)]).toEqual([p, true]);
    for (const p of ["index.html", ".well-known/security.txt", "id_rsa.pub", "email/index.html", "docs/git/intro.md", ".nojekyll", "img/.gitkeep.png"]) {
      expect([p, isExcludedFromPublish(p)]).toEqual([p, false]);
    }
  });
});
