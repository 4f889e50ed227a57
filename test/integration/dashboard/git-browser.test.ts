// The bucket's Git page in real Chromium against a real git server: a wrong URL refused next to
// the field with the typed values kept, a repository connected with its token (import), the
// state shown, a conflict resolved by choosing sides, then disconnect — and what the API reports.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { launchChromium } from "../../helpers/chromium";
import { expectAccessible, screenshot, signIn, submit } from "../../helpers/dashboard";
import { startGitServer, workClone, type GitServer, type WorkClone } from "../../helpers/git-server";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
let server: GitServer;
let browser: Browser;
let other: WorkClone | undefined;
const cred = { user: "deploy", password: "page-token-123" };
beforeAll(async () => {
  server = startGitServer({ credential: cred });
  t = await startTestPier({ gitAllowHttp: "on", gitAllowPrivateNetwork: "on" });
  browser = await launchChromium();
});
afterAll(async () => {
  other?.cleanup();
  await browser?.close();
  await t?.stop();
  await server?.stop();
});

test("connect with a token, see the state, resolve a conflict, disconnect", async () => {
  const u = await t.user({ plan: "pro" });
  const url = server.createRepo("page");
  other = await workClone(url.replace("http://", `http://${cred.user}:${cred.password}@`));
  other.write("index.html", "<h1>from git</h1>\n");
  await other.commitAndPush("first");
  const bucketId = await newBucket(t, u.key, "Git page");
  const page = await (await browser.newContext()).newPage();
  await signIn(page, t, u, `/dashboard/buckets/${bucketId}`);
  await submit(page, 'nav.tabs a:text("Git")');
  expect(new URL(page.url()).pathname).toBe(`/dashboard/buckets/${bucketId}/git`);
  await expectAccessible(page);

  // A credential inside the URL is refused next to the field; the typed values stay.
  await page.fill("#repository_url", url.replace("http://", "http://a:b@"));
  await page.fill("#branch", "main");
  await page.fill("#username", cred.user);
  await submit(page, "form[action$='/git/connect'] button[type=submit]");
  expect(await page.textContent("#url-error")).toContain("credential");
  expect(await page.inputValue("#username")).toBe(cred.user);

  await page.fill("#repository_url", url);
  await page.fill("#password", cred.password);
  await page.check("input[name=direction][value=import]");
  await submit(page, "form[action$='/git/connect'] button[type=submit]");
  expect(await page.textContent("body")).toContain("Connected");
  expect(await page.content()).not.toContain(cred.password);
  await t.pier.runner.drain();
  await page.reload();
  expect(await page.textContent("#git-state")).toBe("in sync");
  await screenshot(page, "git-connected");
  await expectAccessible(page);
  const api = await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync`, { key: u.key });
  expect(api.body.data.github_sync).toMatchObject({ state: "in_sync", repository_url: url, credential_saved: true });

  // Both sides change index.html: a conflict, resolved on the page by keeping the repository's.
  await directUpload(t, u.key, bucketId, textFile("index.html", "<h1>from bucket</h1>\n"));
  other.write("index.html", "<h1>from git, again</h1>\n");
  await other.commitAndPush("second");
  await submit(page, "form[action$='/git/sync'] button[type=submit]");
  await t.pier.runner.drain();
  await page.reload();
  expect(await page.textContent("#conflicts-h")).toBe("Conflicts");
  await screenshot(page, "git-conflict");
  await expectAccessible(page);
  await page.check("input[name=side_0][value=repository]");
  await submit(page, "form[action$='/git/resolve'] button[type=submit]");
  expect(await page.textContent("body")).toContain("Choices saved");
  await t.pier.runner.drain();
  await page.reload();
  expect(await page.textContent("#git-state")).toBe("in sync");
  const file = await t.api("GET", `/api/v1/buckets/${bucketId}/files/by_path?path=index.html`, { key: u.key });
  expect(await (await fetch(new URL(file.headers.get("location")!, t.url))).text()).toBe("<h1>from git, again</h1>\n");

  // Phone width: no sideways scrolling.
  await page.setViewportSize({ width: 375, height: 740 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
  await page.setViewportSize({ width: 1280, height: 900 });

  // Disconnecting deletes the saved token: its box must be ticked first (D297).
  await page.check("form[action$='/git/disconnect'] input[name=confirm]");
  await submit(page, "form[action$='/git/disconnect'] button[type=submit]");
  expect(await page.textContent("body")).toContain("Disconnected");
  expect((await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync`, { key: u.key })).body.data.github_sync).toBeNull();
  expect((await t.api("GET", `/api/v1/buckets/${bucketId}/files`, { key: u.key })).body.data.files.length).toBe(1);
});

test("another account's bucket gives the not-found page", async () => {
  const owner = await t.user({ plan: "pro" });
  const stranger = await t.user({ plan: "pro" });
  const bucketId = await newBucket(t, owner.key, "not yours");
  const page = await (await browser.newContext()).newPage();
  await signIn(page, t, stranger, `/dashboard/buckets/${bucketId}/git`);
  expect(page.url()).toContain(`/dashboard/buckets/${bucketId}/git`);
  expect(await page.textContent("body")).not.toContain("not yours");
  expect(await page.locator("#repository_url").count()).toBe(0);
});
