// Attacks on the dashboard's Files and Versions pages: markup in file and folder names and in
// Markdown content, cross-site posts to the file forms, and another account's file and version
// ids (in their bucket, or smuggled into one's own bucket's URL). Each is reproduced over HTTP
// and shown to run nothing, change nothing and reveal nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Browser, csrfOf } from "../helpers/browser";
import { createBucket } from "../helpers/buckets";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { syncFiles, textFile } from "../helpers/uploads";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(async () => {
  await t?.stop();
});

async function signedIn(u: TestUser): Promise<Browser> {
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  return b;
}

const listing = async (u: TestUser, bucketId: string) =>
  (await t.api("GET", `/api/v1/buckets/${bucketId}/files?limit=1000`, { key: u.key })).body.data.files as { id: string; path: string; lock: unknown }[];

describe("dashboard files pages", () => {
  test("markup in file and folder names is shown as text in the browser and on the file page", async () => {
    const u = await t.user();
    const bucket = await createBucket(t, u, { title: "names" });
    const evil = `<img src=x onerror=alert(1)>`;
    await syncFiles(t, u.key, bucket.id, [textFile(`${evil}/inner.txt`, "x"), textFile(`${evil}.txt`, "y")]);
    const b = await signedIn(u);
    const root = await b.get(`/dashboard/buckets/${bucket.id}/files`);
    expect(root.status).toBe(200);
    expect(root.text).not.toContain("<img src=x");
    expect(root.text).toContain("&#60;img src&#61;x onerror&#61;alert(1)&#62;/");
    const file = (await listing(u, bucket.id)).find((f) => f.path === `${evil}.txt`)!;
    const page = await b.get(`/dashboard/buckets/${bucket.id}/files/${file.id}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain("<img src=x");
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
  });

  test("a Markdown preview runs no script: raw HTML is text, javascript: links are dropped", async () => {
    const u = await t.user();
    const bucket = await createBucket(t, u, { title: "md" });
    const md = `# Hi\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n[click](javascript:alert(3)) [ok](https://example.com/)\n`;
    await syncFiles(t, u.key, bucket.id, [textFile("evil.md", md, "text/markdown")]);
    const b = await signedIn(u);
    const [file] = await listing(u, bucket.id);
    const page = await b.get(`/dashboard/buckets/${bucket.id}/files/${file!.id}`);
    const preview = page.text.slice(page.text.indexOf('id="preview"'), page.text.indexOf('id="rename"'));
    expect(preview).not.toMatch(/<script|<img src=x|href="javascript:/i);
    expect(preview).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(preview).toContain('href="https://example.com/"');
  });

  test("a cross-site post to a file form (no or a forged CSRF token) deletes and renames nothing", async () => {
    const u = await t.user();
    const bucket = await createBucket(t, u, { title: "csrf" });
    await syncFiles(t, u.key, bucket.id, [textFile("keep.txt", "keep")]);
    const [file] = await listing(u, bucket.id);
    const b = await signedIn(u);
    for (const csrf of ["", "forged-token-forged-token-forged"]) {
      expect((await b.post(`/dashboard/buckets/${bucket.id}/files/${file!.id}/delete`, { csrf })).status).toBe(403);
      expect((await b.post(`/dashboard/buckets/${bucket.id}/files/${file!.id}/rename`, { csrf, path: "moved.txt" })).status).toBe(403);
    }
    expect((await listing(u, bucket.id)).map((f) => f.path)).toEqual(["keep.txt"]);
  });

  test("another account's file and version ids: 404 like unknown ids, and their forms change nothing", async () => {
    const owner = await t.user();
    const theirs = await createBucket(t, owner, { title: "Their bucket" });
    await syncFiles(t, owner.key, theirs.id, [textFile("secret.txt", "the secret plan")]);
    await syncFiles(t, owner.key, theirs.id, [textFile("secret.txt", "the secret plan v2")]);
    const [file] = await listing(owner, theirs.id);
    const versions = (await t.api("GET", `/api/v1/buckets/${theirs.id}/versions`, { key: owner.key })).body.data.versions;
    const intruder = await t.user();
    const mine = await createBucket(t, intruder, { title: "Mine" });
    const b = await signedIn(intruder);
    const csrf = csrfOf((await b.get(`/dashboard/buckets/${mine.id}`)).text);
    const pages = [
      `/dashboard/buckets/${theirs.id}/files`,
      `/dashboard/buckets/${theirs.id}/files/${file!.id}`,
      `/dashboard/buckets/${mine.id}/files/${file!.id}`,
      `/dashboard/buckets/${theirs.id}/versions`,
      `/dashboard/buckets/${theirs.id}/versions/${versions[1].id}`,
      `/dashboard/buckets/${mine.id}/versions/${versions[1].id}`,
    ];
    for (const path of pages) {
      const res = await b.get(path);
      expect(res.status).toBe(404);
      expect(res.text).not.toContain("secret.txt");
      expect(res.text).not.toContain("the secret plan");
    }
    for (const bucketId of [theirs.id, mine.id]) {
      const base = `/dashboard/buckets/${bucketId}/files/${file!.id}`;
      expect((await b.post(`${base}/delete`, { csrf })).status).toBe(404);
      expect((await b.post(`${base}/rename`, { csrf, path: "stolen.txt", bucket_id: mine.id })).status).toBe(404);
      expect((await b.post(`${base}/copy`, { csrf, path: "stolen.txt", bucket_id: mine.id })).status).toBe(404);
      expect((await b.post(`${base}/lock`, { csrf, message: "mine now", duration_seconds: "3600" })).status).toBe(404);
      expect((await b.post(`/dashboard/buckets/${bucketId}/versions/${versions[1].id}/restore`, { csrf, confirm: "on" })).status).toBe(404);
    }
    const after = await listing(owner, theirs.id);
    expect(after.map((f) => [f.path, f.lock])).toEqual([["secret.txt", null]]);
    expect((await t.api("GET", `/api/v1/buckets/${theirs.id}/versions`, { key: owner.key })).body.data.versions.length).toBe(versions.length);
    expect(await listing(intruder, mine.id)).toEqual([]);
  });
});
