// Typing text files in the dashboard, as MCP's bucket_file_write does: a new text file in the
// folder shown (never over a file already there), and a text file's Edit, which saves only over
// the content the page showed (a change made meanwhile is refused, the typing kept) and keeps a
// file's CRLF line breaks. Refusals sit next to their field; another account changes nothing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type Browser, formTokenOf, signedIn, unescapeHtml } from "../../helpers/browser";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { syncFiles, textFile } from "../../helpers/uploads";

let t: TestPier;
let u: TestUser;
let b: Browser;
const hidden = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
const textarea = (html: string, id: string) => unescapeHtml(new RegExp(`<textarea id="${id}"[^>]*>\\n([\\s\\S]*?)</textarea>`).exec(html)?.[1] ?? "");
const fileIdOf = (location: string) => /\/files\/(fil_[a-z0-9]+)/.exec(location)![1]!;
/** The file's bytes as the API hands them out (by_path redirects to the signed download). */
async function stored(bucketId: string, path: string): Promise<string> {
  const r = await t.api("GET", `/api/v1/buckets/${bucketId}/files/by_path?path=${encodeURIComponent(path)}`, { key: u.key });
  expect([302, 303, 307]).toContain(r.status);
  // Decoded keeping a byte-order mark (Response.text() drops it).
  const bytes = await (await fetch(new URL(r.headers.get("location")!, t.url))).arrayBuffer();
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
}

beforeAll(async () => {
  t = await startTestPier();
  u = await t.user();
  b = await signedIn(t.url, u);
});
afterAll(() => t?.stop());

test("New text file creates the file in the folder shown, with the typed line breaks, and never replaces one", async () => {
  const bucket = await createBucket(t, u, { title: "Typed files" });
  const page = (await b.get(`/dashboard/buckets/${bucket.id}/files?prefix=docs%2F`)).text;
  expect(page).toContain('id="new-h"');
  const made = await b.post(`/dashboard/buckets/${bucket.id}/files/new`, {
    csrf: formTokenOf(page),
    prefix: "docs/",
    name: "notes.md",
    content: "# Notes\r\nfirst line\r\n",
  });
  expect([made.status, made.location]).toEqual([303, expect.stringContaining("done=created")]);
  expect(await stored(bucket.id, "docs/notes.md")).toBe("# Notes\nfirst line\n");
  const created = (await b.get(made.location!)).text;
  expect(created).toContain("File created.");
  const file = (await t.api("GET", `/api/v1/buckets/${bucket.id}/files/${fileIdOf(made.location!)}`, { key: u.key })).body.data.file;
  expect([file.path, file.content_type]).toEqual(["docs/notes.md", expect.stringContaining("text/markdown")]);

  // The same name again: refused next to the name, the typing kept, the file untouched.
  const fresh = async () => formTokenOf((await b.get(`/dashboard/buckets/${bucket.id}/files`)).text);
  const again = await b.post(`/dashboard/buckets/${bucket.id}/files/new`, { csrf: await fresh(), prefix: "docs/", name: "notes.md", content: "other text" });
  expect(again.status).toBe(409);
  expect(again.text).toContain('id="new-name-error"');
  expect(unescapeHtml(again.text)).toContain("A file already exists at docs/notes.md");
  expect(textarea(again.text, "new-content")).toBe("other text");
  expect(await stored(bucket.id, "docs/notes.md")).toBe("# Notes\nfirst line\n");

  // A binary type by its name is not typed text.
  const png = await b.post(`/dashboard/buckets/${bucket.id}/files/new`, { csrf: await fresh(), prefix: "", name: "logo.png", content: "not an image" });
  expect(png.status).toBe(422);
  expect(png.text).toContain('id="new-name-error"');
  expect((await t.api("GET", `/api/v1/buckets/${bucket.id}/files?q=logo`, { key: u.key })).body.data.files).toEqual([]);
  // No name: said next to the field.
  const unnamed = await b.post(`/dashboard/buckets/${bucket.id}/files/new`, { csrf: await fresh(), prefix: "", name: " ", content: "x" });
  expect([unnamed.status, unnamed.text.includes('id="new-name-error"')]).toEqual([422, true]);
});

test("Edit saves over the content shown; a change made meanwhile is refused with the typing kept, then saved knowingly", async () => {
  const bucket = await createBucket(t, u, { title: "Edited files" });
  await syncFiles(t, u.key, bucket.id, [textFile("index.html", "<p>one</p>\n", "text/html")]);
  const fileId = (await t.api("GET", `/api/v1/buckets/${bucket.id}/files`, { key: u.key })).body.data.files[0].id;
  const url = `/dashboard/buckets/${bucket.id}/files/${fileId}`;
  const page = (await b.get(url)).text;
  expect(textarea(page, "edit-content")).toBe("<p>one</p>\n");

  const saved = await b.post(`${url}/edit`, { csrf: formTokenOf(page), based_on: hidden(page, "based_on")!, crlf: "", content: "<p>two</p>\r\n" });
  expect([saved.status, saved.location]).toEqual([303, expect.stringContaining("done=edited")]);
  expect(await stored(bucket.id, "index.html")).toBe("<p>two</p>\n");
  const versions = (await t.api("GET", `/api/v1/buckets/${bucket.id}/versions`, { key: u.key })).body.data.versions;
  expect(versions[0]).toMatchObject({ kind: "write", comment: "edit index.html (dashboard)" });

  // Opened, then changed by an agent, then saved from the stale page: refused, nothing saved.
  const opened = (await b.get(url)).text;
  expect(
    (await t.api("POST", `/api/v1/buckets/${bucket.id}/files/append_text`, { key: u.key, body: { path: "index.html", text: "<p>agent</p>\n" } })).status,
  ).toBe(200);
  const stale = await b.post(`${url}/edit`, { csrf: formTokenOf(opened), based_on: hidden(opened, "based_on")!, crlf: "", content: "<p>mine</p>\n" });
  expect(stale.status).toBe(409);
  expect(unescapeHtml(stale.text)).toContain("index.html changed since it was opened, so nothing was saved.");
  expect(textarea(stale.text, "edit-content")).toBe("<p>mine</p>\n");
  expect(await stored(bucket.id, "index.html")).toBe("<p>two</p>\n<p>agent</p>\n");
  // The refused page stands on the current content: saving from it is a choice made knowing it.
  const knowingly = await b.post(`${url}/edit`, {
    csrf: formTokenOf(stale.text),
    based_on: hidden(stale.text, "based_on")!,
    crlf: "",
    content: "<p>mine</p>\n",
  });
  expect(knowingly.status).toBe(303);
  expect(await stored(bucket.id, "index.html")).toBe("<p>mine</p>\n");
});

test("a file with CRLF line breaks keeps them; binary and large files get no editor; another account saves nothing", async () => {
  const bucket = await createBucket(t, u, { title: "Line breaks" });
  await syncFiles(t, u.key, bucket.id, [
    textFile("windows.txt", "a\r\nb\r\n"),
    { path: "image.png", bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]), contentType: "image/png" } as never,
    textFile("big.txt", "x".repeat(300 * 1024)),
  ]);
  const files = (await t.api("GET", `/api/v1/buckets/${bucket.id}/files`, { key: u.key })).body.data.files as { id: string; path: string }[];
  const idOf = (path: string) => files.find((f) => f.path === path)!.id;
  const url = `/dashboard/buckets/${bucket.id}/files/${idOf("windows.txt")}`;
  const page = (await b.get(url)).text;
  expect(hidden(page, "crlf")).toBe("1");
  expect((await b.post(`${url}/edit`, { csrf: formTokenOf(page), based_on: hidden(page, "based_on")!, crlf: "1", content: "a\r\nb\r\nc\r\n" })).status).toBe(
    303,
  );
  expect(await stored(bucket.id, "windows.txt")).toBe("a\r\nb\r\nc\r\n");

  for (const path of ["image.png", "big.txt"]) expect((await b.get(`/dashboard/buckets/${bucket.id}/files/${idOf(path)}`)).text).not.toContain('id="edit-h"');

  const other = await t.user();
  const stranger = await signedIn(t.url, other);
  const own = (await stranger.get("/dashboard/buckets")).text;
  const after = (await b.get(url)).text;
  const refused = await stranger.post(`${url}/edit`, { csrf: formTokenOf(own), based_on: hidden(after, "based_on")!, crlf: "1", content: "taken over" });
  expect(refused.status).toBe(404);
  const made = await stranger.post(`/dashboard/buckets/${bucket.id}/files/new`, { csrf: formTokenOf(own), prefix: "", name: "planted.txt", content: "x" });
  expect(made.status).toBe(404);
  expect(await stored(bucket.id, "windows.txt")).toBe("a\r\nb\r\nc\r\n");
  expect((await t.api("GET", `/api/v1/buckets/${bucket.id}/files?q=planted`, { key: u.key })).body.data.files).toEqual([]);
});

test("Edit keeps the stored type and a byte-order mark; a refused Save (a lock) still cannot erase a change made meanwhile", async () => {
  const bucket = await createBucket(t, u, { title: "Kept as stored" });
  await syncFiles(t, u.key, bucket.id, [textFile("page", "<p>served as html</p>", "text/html"), textFile("bom.txt", "\uFEFFwith a mark\n")]);
  const files = (await t.api("GET", `/api/v1/buckets/${bucket.id}/files`, { key: u.key })).body.data.files as {
    id: string;
    path: string;
    content_type: string;
  }[];
  const idOf = (path: string) => files.find((f) => f.path === path)!.id;

  const pageUrl = `/dashboard/buckets/${bucket.id}/files/${idOf("page")}`;
  const opened = (await b.get(pageUrl)).text;
  expect(
    (await b.post(`${pageUrl}/edit`, { csrf: formTokenOf(opened), based_on: hidden(opened, "based_on")!, crlf: "", content: "<p>still html</p>" })).status,
  ).toBe(303);
  const after = (await t.api("GET", `/api/v1/buckets/${bucket.id}/files/${idOf("page")}`, { key: u.key })).body.data.file;
  expect(after.content_type).toContain("text/html");
  // Saving the same text again makes no version, and says so.
  const same = (await b.get(pageUrl)).text;
  const unchanged = await b.post(`${pageUrl}/edit`, { csrf: formTokenOf(same), based_on: hidden(same, "based_on")!, crlf: "", content: "<p>still html</p>" });
  expect(unchanged.location).toContain("done=unchanged");

  const bomUrl = `/dashboard/buckets/${bucket.id}/files/${idOf("bom.txt")}`;
  const bomPage = (await b.get(bomUrl)).text;
  const typed = textarea(bomPage, "edit-content");
  expect(typed.startsWith("\uFEFF")).toBe(true);
  expect(
    (await b.post(`${bomUrl}/edit`, { csrf: formTokenOf(bomPage), based_on: hidden(bomPage, "based_on")!, crlf: "", content: `${typed}more\n` })).status,
  ).toBe(303);
  expect(await stored(bucket.id, "bom.txt")).toBe("\uFEFFwith a mark\nmore\n");

  // Opened; an agent appends and locks the file; the Save is refused (423) and the form stays on
  // what it was opened on: once the lock is gone, saving from it is a CONFLICT, not an overwrite.
  const stale = (await b.get(bomUrl)).text;
  const agent = t.key(u, { scope: "bucket_write" });
  expect((await t.api("POST", `/api/v1/buckets/${bucket.id}/files/append_text`, { key: agent, body: { path: "bom.txt", text: "agent\n" } })).status).toBe(200);
  expect((await t.api("POST", `/api/v1/buckets/${bucket.id}/files/lock`, { key: agent, body: { paths: ["bom.txt"], message: "agent editing" } })).status).toBe(
    200,
  );
  const locked = await b.post(`${bomUrl}/edit`, { csrf: formTokenOf(stale), based_on: hidden(stale, "based_on")!, crlf: "", content: "mine\n" });
  expect(locked.status).toBe(423);
  expect(hidden(locked.text, "based_on")).toBe(hidden(stale, "based_on"));
  const fileNow = (await t.api("GET", `/api/v1/buckets/${bucket.id}/files/${idOf("bom.txt")}`, { key: u.key })).body.data.file;
  expect((await t.api("DELETE", `/api/v1/buckets/${bucket.id}/files/${fileNow.id}/lock`, { key: agent })).status).toBe(200);
  const retried = await b.post(`${bomUrl}/edit`, { csrf: formTokenOf(locked.text), based_on: hidden(locked.text, "based_on")!, crlf: "", content: "mine\n" });
  expect(retried.status).toBe(409);
  expect(await stored(bucket.id, "bom.txt")).toBe("\uFEFFwith a mark\nmore\nagent\n");
});
