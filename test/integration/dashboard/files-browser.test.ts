// The bucket's Files and Versions tabs in real Chromium, used as a person would: browse
// folders, preview text, Markdown and images (escaped / rendered safely), download, rename,
// copy, lock and unlock, delete; upload files by the file input and by a drop, with a failed
// PUT retried alone; the history with what changed, a version's files, and a confirmed
// restore. Each step is checked in the page and then through the REST API. Over plain HTTP: a
// file's History pages, Append text and its MD5.
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { Browser as HttpBrowser, unescapeHtml } from "../../helpers/browser";
import { dashboardUrl, expectAccessible, screenshot, signIn, submit, withDashboard } from "../../helpers/dashboard";
import type { TestPier, TestUser } from "../../helpers/pier";
import { createBucket } from "../../helpers/buckets";
import { syncFiles, textFile, type LocalFile } from "../../helpers/uploads";
import { bucketText } from "../../helpers/gitsync";

let t: TestPier;
let browser: Browser;

withDashboard({}, (d) => ({ t, browser } = d));

const url = (path: string) => dashboardUrl(t, path);
const PNG = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="), (c) => c.charCodeAt(0));
const png = (path: string): LocalFile => ({ path, bytes: PNG, contentType: "image/png" });

async function paths(u: TestUser, bucketId: string): Promise<string[]> {
  const r = await t.api("GET", `/api/v1/buckets/${bucketId}/files?limit=1000`, { key: u.key });
  return r.body.data.files.map((f: { path: string }) => f.path);
}
const fileAt = async (u: TestUser, bucketId: string, path: string) =>
  (await t.api("GET", `/api/v1/buckets/${bucketId}/files?limit=1000`, { key: u.key })).body.data.files.find((f: { path: string }) => f.path === path);

/** The page's first PUT to storage fails on the way (the connection drops); later ones go through. */
async function failFirstPut(page: Page): Promise<void> {
  let failOnce = true;
  await page.route("**/_storage/**", (route) => {
    if (failOnce && route.request().method() === "PUT") {
      failOnce = false;
      return route.abort("connectionfailed");
    }
    return route.continue();
  });
}

async function withPage<T>(u: TestUser, next: string, run: (page: Page) => Promise<T>): Promise<T> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  try {
    await signIn(page, t, u, next);
    return await run(page);
  } finally {
    await ctx.close();
  }
}

describe("the Files tab in Chromium", () => {
  test("folders, previews, download, rename, copy, lock, delete", async () => {
    const u = await t.user({ email: "files-owner@example.com" });
    const b = await createBucket(t, u, { title: "Docs site" });
    await syncFiles(t, u.key, b.id, [
      textFile("index.html", "<h1>hi</h1>", "text/html"),
      textFile("notes.txt", "plain <b>not bold</b> text"),
      textFile("docs/guide.md", "# Guide\n\nSome **bold** words.\n\n<script>alert(1)</script>\n", "text/markdown"),
      textFile("docs/deep/a.txt", "deep"),
      png("img/dot.png"),
    ]);
    await withPage(u, `/dashboard/buckets/${b.id}/files`, async (page) => {
      // The root: folders first, then files; the tab is marked current.
      const names = await page.locator("tbody tr td:nth-child(2)").allTextContents();
      expect(names.map((n) => n.trim())).toEqual(["docs/", "img/", "index.html", "notes.txt"]);
      expect(await page.getAttribute("nav.tabs a[aria-current=page]", "href")).toBe(`/dashboard/buckets/${b.id}/files`);
      await expectAccessible(page);
      await screenshot(page, "files");

      // Into docs/: its sub-folder and file, and breadcrumbs back to the root.
      await submit(page, "tbody a[href*='prefix=docs']");
      expect(await page.locator("tbody tr td:nth-child(2)").allTextContents()).toEqual(["deep/", "guide.md"]);
      expect(await page.textContent("nav.crumbs [aria-current=page]")).toBe("docs");

      // Markdown is rendered; its raw HTML stays text.
      await submit(page, "tbody a:text('guide.md')");
      expect(await page.textContent("#preview strong")).toBe("bold");
      expect(await page.textContent("#preview h3")).toBe("Guide");
      expect(await page.locator("#preview script").count()).toBe(0);
      expect(await page.textContent("#preview")).toContain("<script>alert(1)</script>");
      await expectAccessible(page);
      await screenshot(page, "file");

      // The download link serves the bytes (signed URL, same origin).
      const href = await page.getAttribute("#download", "href");
      expect(href).toContain("/_storage/");
      expect(await (await page.request.get(href!)).text()).toContain("Some **bold** words.");

      // Rename onto an existing path is refused next to the field, with what was typed kept.
      await page.fill("#rename-path", "index.html");
      await submit(page, "#rename button[type=submit]");
      expect(await page.textContent("#rename-path-error")).toContain("already exists");
      expect(await page.inputValue("#rename-path")).toBe("index.html");
      await page.fill("#rename-path", "docs/manual.md");
      await submit(page, "#rename button[type=submit]");
      expect(await page.textContent("h1")).toBe("manual.md");
      expect(await page.textContent("[role=status]")).toContain("File renamed.");
      expect(await paths(u, b.id)).toContain("docs/manual.md");
      expect(await paths(u, b.id)).not.toContain("docs/guide.md");

      // Copy into the same bucket: a new file page, both in the API's list.
      await page.fill("#copy-path", "docs/manual-copy.md");
      await submit(page, "#copy button[type=submit]");
      expect(await page.textContent("h1")).toBe("manual-copy.md");
      expect(await paths(u, b.id)).toEqual(expect.arrayContaining(["docs/manual.md", "docs/manual-copy.md"]));

      // Lock: an API key is then refused (423) on that path; unlock lets it through.
      await page.fill("#lock-message", "editing the manual");
      await submit(page, "#lock button[type=submit]");
      expect(await page.textContent("#lock-state")).toContain("editing the manual");
      const copy = await fileAt(u, b.id, "docs/manual-copy.md");
      expect(copy.lock.message).toBe("editing the manual");
      const blocked = await t.api("DELETE", `/api/v1/buckets/${b.id}/files/${copy.id}`, { key: u.key });
      expect(blocked.status).toBe(423);
      await submit(page, "#lock button[type=submit]");
      expect(await page.textContent("[role=status]")).toContain("Lock removed.");
      expect((await fileAt(u, b.id, "docs/manual-copy.md")).lock).toBeNull();

      // Delete: back to the folder, gone from the API's list.
      await submit(page, "#delete button[type=submit]");
      expect(new URL(page.url()).searchParams.get("prefix")).toBe("docs/");
      expect(await page.textContent("[role=status]")).toContain("File deleted.");
      expect(await paths(u, b.id)).not.toContain("docs/manual-copy.md");

      // Text is escaped; images are shown.
      const notes = await fileAt(u, b.id, "notes.txt");
      await page.goto(url(`/dashboard/buckets/${b.id}/files/${notes.id}`));
      expect(await page.textContent("#preview pre")).toBe("plain <b>not bold</b> text");
      expect(await page.locator("#preview b").count()).toBe(0);
      const dot = await fileAt(u, b.id, "img/dot.png");
      await page.goto(url(`/dashboard/buckets/${b.id}/files/${dot.id}`));
      await page.waitForFunction(() => (document.querySelector("#preview img") as HTMLImageElement | null)?.complete);
      expect(await page.evaluate(() => (document.querySelector("#preview img") as HTMLImageElement).naturalWidth)).toBe(1);
    });
  }, 60_000);

  test("a long preview (an inbound email's message.json) and a wide Markdown code block scroll, and a keyboard reaches both", async () => {
    const u = await t.user({ email: "previews-owner@example.com" });
    const b = await createBucket(t, u, { title: "Inbox" });
    const message = {
      from: "ann@example.com",
      subject: "Hello",
      headers: Array.from({ length: 300 }, (_, i) => ({ name: `X-Header-${i}`, value: "v".repeat(40) })),
    };
    await syncFiles(t, u.key, b.id, [
      textFile("mail/message.json", JSON.stringify(message, null, 2), "application/json"),
      textFile("docs/wide.md", `# Wide\n\n\`\`\`\n${"x".repeat(600)}\n\`\`\`\n`, "text/markdown"),
    ]);
    await withPage(u, `/dashboard/buckets/${b.id}/files/${(await fileAt(u, b.id, "mail/message.json")).id}`, async (page) => {
      const pre = page.locator("#preview pre");
      expect(await pre.evaluate((e) => e.scrollHeight > e.clientHeight)).toBe(true);
      await expectAccessible(page); // scrollable-region-focusable before the preview took focus
      expect(await pre.getAttribute("tabindex")).toBe("0");
      expect(await page.getByRole("region", { name: "Contents of message.json" }).count()).toBe(1);

      await page.goto(url(`/dashboard/buckets/${b.id}/files/${(await fileAt(u, b.id, "docs/wide.md")).id}`));
      const code = page.locator("#preview pre");
      expect(await code.evaluate((e) => e.scrollWidth > e.clientWidth)).toBe(true);
      await expectAccessible(page);
      expect(await page.getByRole("region", { name: "Code block 1 of wide.md" }).count()).toBe(1);
    });
  }, 60_000);

  test("ticked files and folders moved, copied and deleted together, all or nothing, one version each", async () => {
    const u = await t.user({ email: "entries-owner@example.com" });
    const b = await createBucket(t, u, { title: "Drafts" });
    await syncFiles(t, u.key, b.id, [
      textFile("drafts/a.md", "draft a"),
      textFile("drafts/b.md", "draft b"),
      png("drafts/img/x.png"),
      textFile("archive/b.md", "old b"),
      textFile("keep.txt", "kept"),
    ]);
    const text = async (path: string) => bucketText(t, u.key, b.id, path);
    const versions = async () => (await t.api("GET", `/api/v1/buckets/${b.id}/versions`, { key: u.key })).body.data.versions;
    await withPage(u, `/dashboard/buckets/${b.id}/files?prefix=drafts%2F`, async (page) => {
      // Nothing ticked: said on the page, nothing sent to the bucket.
      const before = (await versions()).length;
      await submit(page, "button[value=move]");
      expect(await page.textContent("[role=alert]")).toContain("Tick the files or folders");
      expect((await versions()).length).toBe(before);

      // A name taken at the destination refuses the whole move; the ticks and the folder stay.
      for (const name of ["a.md", "b.md", "img/"]) await page.check(`input[aria-label="Select ${name}"]`);
      await page.fill("#entries-to", "archive");
      await submit(page, "button[value=move]");
      expect(await page.textContent("[role=alert]")).toContain("archive/b.md");
      expect(await page.inputValue("#entries-to")).toBe("archive");
      expect(await page.isChecked('input[aria-label="Select img/"]')).toBe(true);
      expect((await versions()).length).toBe(before);
      expect(await paths(u, b.id)).toContain("drafts/a.md");
      await expectAccessible(page);

      // With "Replace": one version moves all three, and the page shows where they went.
      await page.check("input[name=overwrite]");
      await submit(page, "button[value=move]");
      expect(new URL(page.url()).searchParams.get("prefix")).toBe("archive/");
      expect(await page.textContent("[role=status]")).toContain("Moved here");
      expect((await paths(u, b.id)).sort()).toEqual(["archive/a.md", "archive/b.md", "archive/img/x.png", "keep.txt"]);
      expect(await text("archive/b.md")).toBe("draft b");
      const moved = (await versions())[0];
      expect([moved.kind, moved.changed_paths_count]).toEqual(["reorganize", 6]);

      // Copy a folder elsewhere: the paths below this folder are kept.
      await page.check('input[aria-label="Select img/"]');
      await page.fill("#entries-to", "gallery/2026");
      await submit(page, "button[value=copy]");
      expect(new URL(page.url()).searchParams.get("prefix")).toBe("gallery/2026/");
      expect(await paths(u, b.id)).toEqual(expect.arrayContaining(["archive/img/x.png", "gallery/2026/img/x.png"]));

      // Delete two files at once; the folder stays on screen without them.
      await page.goto(url(`/dashboard/buckets/${b.id}/files?prefix=archive%2F`));
      await page.check('input[aria-label="Select a.md"]');
      await page.check('input[aria-label="Select b.md"]');
      await submit(page, "button[value=delete]");
      expect(await page.textContent("[role=status]")).toContain("Deleted");
      expect(await page.locator("tbody tr td:nth-child(2)").allTextContents()).toEqual(["img/"]);
      const deleted = (await versions())[0];
      expect([deleted.kind, deleted.changed_paths_count]).toEqual(["reorganize", 2]);
      expect((await paths(u, b.id)).sort()).toEqual(["archive/img/x.png", "gallery/2026/img/x.png", "keep.txt"]);
    });
  }, 60_000);

  test("upload by the file input and by a drop; a failed PUT is retried alone; summary", async () => {
    const u = await t.user({ email: "files-uploader@example.com" });
    const b = await createBucket(t, u, { title: "Uploads" });
    await syncFiles(t, u.key, b.id, [textFile("site/keep.txt", "keep")]);
    await withPage(u, `/dashboard/buckets/${b.id}/files?prefix=site/`, async (page) => {
      await page.locator("[data-upload-ui]").waitFor({ state: "visible" });
      expect(await page.isHidden("[data-upload-noscript]")).toBe(true);
      await page.setInputFiles("#upload-files", [
        { name: "a.txt", mimeType: "text/plain", buffer: Buffer.from("alpha") },
        { name: "b.md", mimeType: "text/markdown", buffer: Buffer.from("# beta") },
      ]);
      await page.waitForFunction(() => /^2 uploaded.* 0 failed\.$/.test(document.getElementById("upload-summary")?.textContent ?? ""));
      expect(await page.textContent("#upload-summary")).toBe("2 uploaded (11 B), 0 failed.");
      expect(await paths(u, b.id)).toEqual(["site/a.txt", "site/b.md", "site/keep.txt"]);

      // A drop of two files; the first PUT fails on the way, then "retry" sends only that one.
      await failFirstPut(page);
      await page.evaluate(() => {
        const dt = new DataTransfer();
        dt.items.add(new File(["one"], "one.txt", { type: "text/plain" }));
        dt.items.add(new File(["two two"], "two.txt", { type: "text/plain" }));
        document.querySelector("[data-dropzone]")!.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
      });
      await page.waitForFunction(
        () =>
          /failed\./.test(document.getElementById("upload-summary")?.textContent ?? "") &&
          !/to go/.test(document.getElementById("upload-summary")!.textContent!),
      );
      expect(await page.textContent("#upload-summary")).toContain("1 failed");
      expect(await page.locator(".uploads .failed").count()).toBe(1);
      const before = (await paths(u, b.id)).length;
      expect(before).toBe(4);
      const puts: string[] = [];
      page.on("request", (r) => r.method() === "PUT" && puts.push(r.url()));
      await page.click("[data-upload-retry]");
      await page.waitForFunction(() => / 0 failed\.$/.test(document.getElementById("upload-summary")?.textContent ?? ""));
      expect(puts.length).toBe(1);
      expect(await paths(u, b.id)).toEqual(["site/a.txt", "site/b.md", "site/keep.txt", "site/one.txt", "site/two.txt"]);
      expect(await page.textContent("#upload-summary")).toBe("4 uploaded (21 B), 0 failed.");

      // A whole folder, its inner folders kept.
      const dir = mkdtempSync(join(tmpdir(), "pier-upload-"));
      mkdirSync(join(dir, "photos", "2024"), { recursive: true });
      writeFileSync(join(dir, "photos", "readme.txt"), "pics");
      writeFileSync(join(dir, "photos", "2024", "dot.png"), PNG);
      await page.setInputFiles("#upload-folder", join(dir, "photos"));
      await page.waitForFunction(() => /^6 uploaded.* 0 failed\.$/.test(document.getElementById("upload-summary")?.textContent ?? ""));
      rmSync(dir, { recursive: true });
      expect(await paths(u, b.id)).toEqual(expect.arrayContaining(["site/photos/readme.txt", "site/photos/2024/dot.png"]));

      // A dropped folder arrives as FileSystem entries (webkitGetAsEntry); a synthetic drop
      // cannot carry a real one, so this drop hands the page entries shaped like Chromium's,
      // with readEntries answering in batches as it does for large folders.
      await page.evaluate(() => {
        const fileEntry = (name: string, text: string) => ({
          isFile: true,
          isDirectory: false,
          name,
          file: (ok: (f: File) => void) => ok(new File([text], name, { type: "text/plain" })),
        });
        const dirEntry = (name: string, children: unknown[]) => ({
          isFile: false,
          isDirectory: true,
          name,
          createReader: () => {
            const batches = [children.slice(0, 1), children.slice(1), []];
            return { readEntries: (ok: (e: unknown[]) => void) => ok(batches.shift() ?? []) };
          },
        });
        const tree = dirEntry("album", [fileEntry("cover.txt", "cover"), dirEntry("side-b", [fileEntry("track.txt", "track")])]);
        const drop = new DragEvent("drop", { bubbles: true, cancelable: true });
        Object.defineProperty(drop, "dataTransfer", { value: { items: [{ kind: "file", webkitGetAsEntry: () => tree }], files: [] } });
        document.querySelector("[data-dropzone]")!.dispatchEvent(drop);
      });
      await page.waitForFunction(() => /^8 uploaded.* 0 failed\.$/.test(document.getElementById("upload-summary")?.textContent ?? ""));
      expect(await paths(u, b.id)).toEqual(expect.arrayContaining(["site/album/cover.txt", "site/album/side-b/track.txt"]));

      // A file Pier refuses for good (an executable) is not offered a retry that cannot succeed.
      await page.setInputFiles("#upload-files", [{ name: "setup.exe", mimeType: "application/octet-stream", buffer: Buffer.from("MZ fake") }]);
      await page.waitForFunction(() => /^8 uploaded.* 1 failed\.$/.test(document.getElementById("upload-summary")?.textContent ?? ""));
      expect(await page.locator(".uploads .failed").textContent()).toStartWith("refused: ");
      expect(await page.isHidden("[data-upload-retry]")).toBe(true);
      expect(await paths(u, b.id)).not.toContain("site/setup.exe");
      await expectAccessible(page);
      await screenshot(page, "files-upload");
    });
  }, 60_000);
});

describe("replacing the bucket's contents from the Files tab", () => {
  test("one upload session with delete_missing: a folder's contents become the bucket's in one version; a failed PUT is retried before anything changes; a refused batch changes nothing", async () => {
    const u = await t.user({ email: "replace-owner@example.com" });
    const b = await createBucket(t, u, { title: "Replace me" });
    await syncFiles(t, u.key, b.id, [
      textFile("index.html", "<h1>old</h1>", "text/html"),
      textFile("old/page.html", "stale", "text/html"),
      textFile("same.txt", "same"),
    ]);
    const versions = async () => (await t.api("GET", `/api/v1/buckets/${b.id}/versions`, { key: u.key })).body.data.versions;
    await withPage(u, `/dashboard/buckets/${b.id}/files`, async (page) => {
      const summaryIs = (re: RegExp) =>
        page.waitForFunction((src) => new RegExp(src).test(document.getElementById("upload-summary")?.textContent ?? ""), re.source);
      await page.locator("[data-upload-ui]").waitFor({ state: "visible" });
      const before = (await versions()).length;

      // The first PUT fails: nothing is committed until "retry" sends it and the session is finalized.
      await failFirstPut(page);
      const dir = mkdtempSync(join(tmpdir(), "pier-replace-"));
      mkdirSync(join(dir, "site", "css"), { recursive: true });
      writeFileSync(join(dir, "site", "index.html"), "<h1>new</h1>");
      writeFileSync(join(dir, "site", "css", "app.css"), "body{}");
      writeFileSync(join(dir, "site", "same.txt"), "same");
      await page.check("#upload-replace");
      await page.setInputFiles("#upload-folder", join(dir, "site"));
      await summaryIs(/1 failed\.$/);
      expect((await versions()).length).toBe(before);
      expect(await bucketText(t, u.key, b.id, "old/page.html")).toBe("stale");
      await page.click("[data-upload-retry]");
      await summaryIs(/^The bucket now holds these 3 files/);
      rmSync(dir, { recursive: true }); // the browser reads the chosen files until they are sent
      expect(await page.textContent("#upload-summary")).toContain("1 other file was deleted");
      // The bytes Pier already had were not sent again.
      expect(await page.textContent(".uploads li:has-text('same.txt')")).toContain("already stored");
      expect((await paths(u, b.id)).sort()).toEqual(["css/app.css", "index.html", "same.txt"]);
      expect(await bucketText(t, u.key, b.id, "index.html")).toBe("<h1>new</h1>");
      expect((await versions()).length).toBe(before + 1);
      // The box is asked for anew: the next upload adds files again.
      expect(await page.isChecked("#upload-replace")).toBe(false);
      await expectAccessible(page);

      // A batch the API refuses (a forbidden file type) cancels the session: nothing changes, the lock is released.
      await page.unroute("**/_storage/**");
      await page.check("#upload-replace");
      await page.setInputFiles("#upload-files", [
        { name: "keep.txt", mimeType: "text/plain", buffer: Buffer.from("k") },
        { name: "tool.exe", mimeType: "application/octet-stream", buffer: Buffer.from("MZ") },
      ]);
      await summaryIs(/^Nothing was changed: /);
      expect((await paths(u, b.id)).sort()).toEqual(["css/app.css", "index.html", "same.txt"]);
      const locked = await t.api("POST", `/api/v1/buckets/${b.id}/files/append_text`, { key: u.key, body: { path: "notes.txt", text: "hi", create: true } });
      expect(locked.status).toBe(200);
      expect(await page.isHidden("[data-upload-retry]")).toBe(true);
    });
  }, 60_000);

  test("Cancel before committing changes nothing and frees the bucket; a commit cut halfway is finished, not undone; decomposed names go through", async () => {
    const u = await t.user({ email: "replace-twice@example.com" });
    const b = await createBucket(t, u, { title: "Replace carefully" });
    await syncFiles(t, u.key, b.id, [textFile("old.txt", "old")]);
    const versions = async () => (await t.api("GET", `/api/v1/buckets/${b.id}/versions`, { key: u.key })).body.data.versions.length;
    await withPage(u, `/dashboard/buckets/${b.id}/files`, async (page) => {
      const summaryIs = (re: RegExp) =>
        page.waitForFunction((src) => new RegExp(src).test(document.getElementById("upload-summary")?.textContent ?? ""), re.source);
      await page.locator("[data-upload-ui]").waitFor({ state: "visible" });
      const before = await versions();

      // Every PUT fails: the replacement waits for a retry; Cancel ends its session instead.
      await page.route("**/_storage/**", (route) => (route.request().method() === "PUT" ? route.abort("connectionfailed") : route.continue()));
      await page.check("#upload-replace");
      await page.setInputFiles("#upload-files", [{ name: "new.txt", mimeType: "text/plain", buffer: Buffer.from("new") }]);
      await summaryIs(/1 failed\.$/);
      await page.click("[data-upload-cancel]");
      await summaryIs(/^Nothing was changed: the replacement was cancelled\.$/);
      expect(await versions()).toBe(before);
      expect(await paths(u, b.id)).toEqual(["old.txt"]);
      // The session's bucket lock went with it: an API key writes at once.
      expect((await t.api("POST", `/api/v1/buckets/${b.id}/files/append_text`, { key: u.key, body: { path: "old.txt", text: "+" } })).status).toBe(200);
      await page.unroute("**/_storage/**");

      // The first finalize is cut off on its way back: "Finish the replacement" asks again and
      // completes it (a finalize is safe to repeat), nothing is cancelled. The name is typed as
      // macOS spells it (e + combining acute), stored as the API normalizes it.
      let cutOnce = true;
      await page.route("**/finalize", async (route) => {
        if (cutOnce && route.request().postData()?.includes('"complete":true')) {
          cutOnce = false;
          await route.fetch(); // the server commits; its answer never reaches the page
          return route.abort("connectionfailed");
        }
        return route.continue();
      });
      await page.check("#upload-replace");
      await page.setInputFiles("#upload-files", [{ name: "cafe\u0301.txt", mimeType: "text/plain", buffer: Buffer.from("menu") }]);
      await summaryIs(/^Replacing stopped: /);
      expect(await page.isVisible("[data-upload-cancel]")).toBe(false);
      await page.click("[data-upload-finish]");
      await summaryIs(/^The bucket now holds these 1 files: 1 other file was deleted/);
      expect(await paths(u, b.id)).toEqual(["caf\u00e9.txt"]);
      expect(await bucketText(t, u.key, b.id, "caf\u00e9.txt")).toBe("menu");
    });
  }, 60_000);

  test("the box is offered at the top folder only", async () => {
    const u = await t.user();
    const b = await createBucket(t, u, { title: "No replace inside" });
    await syncFiles(t, u.key, b.id, [textFile("docs/a.md", "a")]);
    const http = new HttpBrowser(t.url);
    expect((await http.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
    expect((await http.get(`/dashboard/buckets/${b.id}/files`)).text).toContain('id="upload-replace"');
    expect((await http.get(`/dashboard/buckets/${b.id}/files?prefix=docs%2F`)).text).not.toContain('id="upload-replace"');
  });
});

describe("the Versions tab in Chromium", () => {
  test("a timeline with what changed, a version's files, and a confirmed restore", async () => {
    const u = await t.user({ email: "versions-owner@example.com" });
    const b = await createBucket(t, u, { title: "History" });
    await syncFiles(t, u.key, b.id, [textFile("a.txt", "one"), textFile("b.txt", "bee")]);
    await syncFiles(t, u.key, b.id, [textFile("a.txt", "two"), textFile("c.txt", "sea")], { deleteMissing: true });
    await withPage(u, `/dashboard/buckets/${b.id}/versions`, async (page) => {
      const newest = page.locator(".timeline > li").first();
      const text = (await newest.textContent())!.replace(/\s+/g, " ");
      expect(text).toContain("changed a.txt");
      expect(text).toContain("removed b.txt");
      expect(text).toContain("added c.txt");
      await expectAccessible(page);
      await screenshot(page, "versions");

      // The first version: its files, then restore (refused without the confirmation box).
      await submit(page, ".timeline > li:last-child h3 a");
      expect(await page.locator("#files tbody tr td:first-child").allTextContents()).toEqual(["a.txt", "b.txt"]);
      await expectAccessible(page);
      await screenshot(page, "version");
      const versionCount = async () => (await t.api("GET", `/api/v1/buckets/${b.id}/versions`, { key: u.key })).body.data.versions.length;
      const before = await versionCount();
      await page.fill("#restore-comment", "back to the start");
      await submit(page, "#restore button[type=submit]");
      expect(await page.textContent("#confirm-error")).toContain("Tick the box");
      expect(await page.inputValue("#restore-comment")).toBe("back to the start");
      expect(await versionCount()).toBe(before);
      await page.check("#restore-confirm");
      await submit(page, "#restore button[type=submit]");
      expect(await page.textContent("[role=status]")).toContain("Restored");
      const latest = (await t.api("GET", `/api/v1/buckets/${b.id}/versions`, { key: u.key })).body.data.versions[0];
      expect(latest.kind).toBe("restore");
      expect(latest.comment).toBe("back to the start");
      expect(await paths(u, b.id)).toEqual(["a.txt", "b.txt"]);
    });
  }, 60_000);

  test("another account's file and version ids are the not-found page; an archived bucket's page says so", async () => {
    const owner = await t.user({ email: "files-victim@example.com" });
    const theirs = await createBucket(t, owner, { title: "Secret" });
    await syncFiles(t, owner.key, theirs.id, [textFile("plan.txt", "secret plan")]);
    const file = await fileAt(owner, theirs.id, "plan.txt");
    const version = (await t.api("GET", `/api/v1/buckets/${theirs.id}/versions`, { key: owner.key })).body.data.versions[0];
    const intruder = await t.user({ email: "files-intruder@example.com" });
    const mine = await createBucket(t, intruder, { title: "Mine" });
    await syncFiles(t, intruder.key, mine.id, [textFile("x.txt", "x")]);
    const myFile = await fileAt(intruder, mine.id, "x.txt");
    await withPage(intruder, `/dashboard/buckets/${mine.id}/files`, async (page) => {
      for (const path of [
        `/dashboard/buckets/${theirs.id}/files`,
        `/dashboard/buckets/${theirs.id}/files/${file.id}`,
        `/dashboard/buckets/${theirs.id}/versions/${version.id}`,
        `/dashboard/buckets/${mine.id}/files/${file.id}`,
      ]) {
        const res = await page.goto(url(path));
        expect(res!.status()).toBe(404);
        expect(await page.textContent("main")).not.toContain("secret plan");
      }
      // Copying my file into their bucket by id: refused next to the bucket field, nothing written.
      await page.goto(url(`/dashboard/buckets/${mine.id}/files/${myFile.id}`));
      await page.fill("#copy-bucket", theirs.id);
      await submit(page, "#copy button[type=submit]");
      expect(await page.textContent("#copy-bucket_id-error")).toContain("No bucket of yours");
      expect(await paths(owner, theirs.id)).toEqual(["plan.txt"]);

      // The bucket is archived meanwhile (another tab): the stale rename form says so.
      await page.goto(url(`/dashboard/buckets/${mine.id}/files/${myFile.id}`));
      expect((await t.api("POST", `/api/v1/buckets/${mine.id}/archive`, { key: intruder.key })).status).toBe(200);
      await page.fill("#rename-path", "y.txt");
      await submit(page, "#rename button[type=submit]");
      expect(await page.textContent("main")).toContain("archived");
      expect(await paths(intruder, mine.id)).toEqual(["x.txt"]);
    });
  }, 60_000);
});

describe("a file's History on its page (HTTP)", () => {
  test("lists the file's versions as the API does, newest first, 20 a page, each linking to its bucket version", async () => {
    const u = await t.user();
    const b = await createBucket(t, u, { title: "File history" });
    for (let i = 1; i <= 22; i++) await syncFiles(t, u.key, b.id, [textFile("notes.txt", `draft ${i}`)], { deleteMissing: false });
    await syncFiles(t, u.key, b.id, [textFile("other.txt", "not this file")], { deleteMissing: false });
    const file = await fileAt(u, b.id, "notes.txt");
    const api = (await t.api("GET", `/api/v1/buckets/${b.id}/files/${file.id}/versions?limit=100`, { key: u.key })).body.data.versions as {
      version_id: string;
    }[];
    expect(api).toHaveLength(22);

    const http = new HttpBrowser(t.url);
    expect((await http.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
    const linked = (page: string) => [...page.matchAll(/<a href="\/dashboard\/buckets\/[^/"]+\/versions\/([^"]+)">Version \d+<\/a>/g)].map((m) => m[1]);
    const first = (await http.get(`/dashboard/buckets/${b.id}/files/${file.id}`)).text;
    expect(first).toContain('<h2 id="history-h">History</h2>');
    expect(linked(first)).toEqual(api.slice(0, 20).map((v) => v.version_id));
    const older = /<a href="([^"]+)">Older →<\/a>/.exec(first)![1]!.replaceAll("&#61;", "=").replaceAll("&amp;", "&");
    const second = (await http.get(older)).text;
    expect(linked(second)).toEqual(api.slice(20).map((v) => v.version_id));
    expect(second).toContain("← Newer");
    expect(second).not.toContain("Older →");
  }, 60_000);
});

describe("Append text and the MD5 on a file's page (HTTP)", () => {
  test("appends through append_text's service; a refusal stays next to the box with the typing kept; MD5 as the API gives it", async () => {
    const u = await t.user();
    const b = await createBucket(t, u, { title: "Append" });
    await syncFiles(t, u.key, b.id, [textFile("log.md", "line 1", "text/markdown"), png("dot.png")]);
    const log = await fileAt(u, b.id, "log.md");
    const page = `/dashboard/buckets/${b.id}/files/${log.id}`;
    const http = new HttpBrowser(t.url);
    expect((await http.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);

    const before = unescapeHtml((await http.get(page)).text);
    expect(before).toContain(`<code class="small" id="md5">${log.checksum}</code>`);
    // A binary file gets no append form (the API would refuse it as NOT_TEXT_FILE).
    expect((await http.get(`/dashboard/buckets/${b.id}/files/${(await fileAt(u, b.id, "dot.png")).id}`)).text).not.toContain('id="append-h"');

    // Browsers send CRLF line breaks; the file gets LF, as typed.
    const done = await http.submit(page, `${page}/append`, { text: "\r\nline 2 ✓\r\n" });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`${page}?done=appended#preview`);
    expect(await bucketText(t, u.key, b.id, "log.md")).toBe("line 1\nline 2 ✓\n");
    const after = await fileAt(u, b.id, "log.md");
    expect(after.version_count).toBe(2);
    expect(unescapeHtml((await http.get(page)).text)).toContain(`<code class="small" id="md5">${after.checksum}</code>`);

    // Over 64 KiB of UTF-8 in fewer than 65,536 characters: the service's FILE_TOO_LARGE, by the box.
    const long = "é".repeat(40_000);
    const refused = await http.submit(page, `${page}/append`, { text: long });
    expect(refused.status).toBe(413);
    expect(refused.text).toMatch(/<textarea id="append-text"[^>]* aria-invalid="true" aria-describedby="append-text-error">\n/);
    expect(refused.text).toContain(`${long}</textarea>`);
    expect(refused.text).toMatch(/<span class="field-error" id="append-text-error">Append at most 65536 bytes/);
    const empty = await http.submit(page, `${page}/append`, { text: "" });
    expect(empty.text).toContain('<span class="field-error" id="append-text-error">text must not be empty.</span>');
    expect((await fileAt(u, b.id, "log.md")).version_count).toBe(2);
  }, 60_000);
});

describe("ticked entries: refusals (HTTP)", () => {
  test("the same folder is refused next to the destination; an entry from another folder, a made-up action and over 1,000 files change nothing", async () => {
    const u = await t.user();
    const b = await createBucket(t, u, { title: "Entries refused" });
    const many = Array.from({ length: 1001 }, (_, i) => textFile(`bulk/f${i}.txt`, `${i}`));
    await syncFiles(t, u.key, b.id, [textFile("docs/a.md", "a"), textFile("top.txt", "t"), ...many]);
    const count = async () => (await t.api("GET", `/api/v1/buckets/${b.id}/versions`, { key: u.key })).body.data.versions.length;
    const before = await count();
    const http = new HttpBrowser(t.url);
    expect((await http.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
    const page = `/dashboard/buckets/${b.id}/files?prefix=docs%2F`;
    const post = (fields: Record<string, string>) => http.submit(page, `/dashboard/buckets/${b.id}/files/entries`, fields);

    const same = await post({ prefix: "docs/", entry: "docs/a.md", to: "docs", op: "move" });
    expect(same.status).toBe(422);
    expect(unescapeHtml(same.text)).toContain('<span class="field-error" id="entries-to-error">The selection is in that folder already');
    const elsewhere = await post({ prefix: "docs/", entry: "top.txt", to: "archive", op: "delete" });
    expect([elsewhere.status, unescapeHtml(elsewhere.text)]).toEqual([422, expect.stringContaining("top.txt is not in the folder docs/")]);
    const root0 = `/dashboard/buckets/${b.id}/files`;
    const itself = await http.submit(root0, `/dashboard/buckets/${b.id}/files/entries`, { prefix: "", entry: "docs/", to: "docs/old", op: "move" });
    expect([itself.status, unescapeHtml(itself.text)]).toEqual([422, expect.stringContaining("docs/ cannot go into a folder inside itself")]);
    const unknown = await post({ prefix: "docs/", entry: "docs/a.md", to: "archive", op: "rename" });
    expect([unknown.status, unescapeHtml(unknown.text)]).toEqual([422, expect.stringContaining("Choose Move, Copy, Delete or Lock.")]);
    const root = `/dashboard/buckets/${b.id}/files`;
    const tooMany = await http.submit(root, `/dashboard/buckets/${b.id}/files/entries`, { prefix: "", entry: "bulk/", to: "old", op: "move" });
    expect([tooMany.status, unescapeHtml(tooMany.text)]).toEqual([422, expect.stringContaining("more than 1,000 files")]);
    expect(await count()).toBe(before);
    expect(await bucketText(t, u.key, b.id, "docs/a.md")).toBe("a");
  }, 60_000);
});
