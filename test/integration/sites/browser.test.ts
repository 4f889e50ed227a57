// Real Chromium (Debian's, driven by playwright-core) against the in-process server: an SPA deep
// link renders through the index fallback, and a password gate is passed by typing the password.
// Sites are opened at http://<slug>.localhost:<port>/, which Chromium resolves to loopback.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Browser } from "playwright-core";
import { launchChromium } from "../../helpers/chromium";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";
import { directUpload, textFile } from "../../helpers/uploads";

let t: TestPier;
let browser: Browser;

beforeAll(async () => {
  t = await startTestPier();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

const siteUrl = (host: string, path = "/") => `http://${host}:${t.pier.httpPort}${path}`;

describe("sites in Chromium", () => {
  test("an SPA deep link loads the app, which routes by location", async () => {
    const app = `<!doctype html><html><head><title>SPA</title><script src="/app.js" defer></script></head><body><div id="out">loading</div></body></html>`;
    const js = `document.getElementById("out").textContent = "route:" + location.pathname;`;
    const s = await publishSite(t, {
      siteMode: "spa",
      files: [
        { path: "index.html", bytes: app },
        { path: "app.js", bytes: js },
      ],
    });
    const page = await browser.newPage();
    try {
      const res = await page.goto(siteUrl(s.host, "/projects/42/edit"));
      expect(res!.status()).toBe(200);
      await page.waitForFunction(() => document.getElementById("out")?.textContent?.startsWith("route:"));
      expect(await page.textContent("#out")).toBe("route:/projects/42/edit");
    } finally {
      await page.close();
    }
  }, 30_000);

  test("a password-gated page: wrong password, right password, host-only cookie", async () => {
    const s = await publishSite(t, {
      access: "password",
      password: "hunter22",
      files: [
        { path: "index.html", bytes: "<h1 id=h>Welcome in</h1>" },
        { path: "deep/page.html", bytes: "<h1 id=h>Deep page</h1>" },
      ],
    });
    const other = await publishSite(t, { access: "password", password: "hunter22", files: [{ path: "index.html", bytes: "<h1 id=h>Other</h1>" }] });
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    try {
      const first = await page.goto(siteUrl(s.host, "/deep/page.html"));
      expect(first!.status()).toBe(401);
      await page.fill("#password", "wrong-one");
      await page.click("button[type=submit]");
      await page.waitForSelector(".error");
      expect(page.url()).not.toContain("hunter22");
      await page.fill("#password", "hunter22");
      // The gate sends the visitor back to /deep/page.html, which clean URLs move to /deep/page.
      await Promise.all([page.waitForURL(siteUrl(s.host, "/deep/page")), page.click("button[type=submit]")]);
      expect(await page.textContent("#h")).toBe("Deep page");
      expect(page.url()).not.toContain("hunter22");

      const cookies = await ctx.cookies();
      expect(cookies).toHaveLength(1);
      expect(cookies[0]).toMatchObject({ name: "pier_site_access", domain: s.host, path: "/", httpOnly: true, sameSite: "Lax" });
      // The browser does not send it to another site: that one still shows its gate.
      const o = await page.goto(siteUrl(other.host));
      expect(o!.status()).toBe(401);
      expect(await page.textContent("h1")).toContain("password protected");
    } finally {
      await ctx.close();
    }
  }, 30_000);
});

describe("sites in Chromium, published through the API", () => {
  test("a real publish: SPA deep link, then the same site password-gated after an access change", async () => {
    const u = await t.user({ plan: "pro" });
    const key = u.key;
    const id = (await t.api("POST", "/api/v1/buckets", { key, body: { bucket: { title: "Browser Published App" } } })).body.data.bucket.id;
    const app = `<!doctype html><html><head><title>App</title><script src="/app.js" defer></script></head><body><div id="out">loading</div></body></html>`;
    const js = `document.getElementById("out").textContent = "route:" + location.pathname;`;
    for (const [path, text, type] of [
      ["index.html", app, "text/html; charset=utf-8"],
      ["app.js", js, "text/javascript; charset=utf-8"],
    ]) {
      expect((await directUpload(t, key, id, textFile(path!, text!, type))).status).toBeLessThan(300);
    }
    const r = await t.api("POST", `/api/v1/buckets/${id}/publication`, { key, body: { site_mode: "spa" } });
    expect(r.status).toBe(202);
    await t.pier.runner.drain();
    const pub = (await t.api("GET", `/api/v1/publications/${r.body.data.publication.id}?include_manifest=false`, { key })).body.data.publication;
    expect(pub.publish_state).toBe("ready");
    const host = new URL(pub.public_url).hostname;
    const page = await browser.newPage();
    try {
      const res = await page.goto(siteUrl(host, "/settings/profile"));
      expect(res!.status()).toBe(200);
      await page.waitForFunction(() => document.getElementById("out")?.textContent?.startsWith("route:"));
      expect(await page.textContent("#out")).toBe("route:/settings/profile");
    } finally {
      await page.close();
    }

    // Republished with a password: the same deep link now shows the gate until it is passed.
    expect((await t.api("POST", `/api/v1/buckets/${id}/publication`, { key, body: { access_mode: "password", password: "browser-pass" } })).status).toBe(202);
    await t.pier.runner.drain();
    const ctx = await browser.newContext();
    const gated = await ctx.newPage();
    try {
      const first = await gated.goto(siteUrl(host, "/settings/profile"));
      expect(first!.status()).toBe(401);
      expect(await gated.content()).not.toContain("app.js");
      await gated.fill("#password", "browser-pass");
      await Promise.all([gated.waitForURL(siteUrl(host, "/settings/profile")), gated.click("button[type=submit]")]);
      await gated.waitForFunction(() => document.getElementById("out")?.textContent?.startsWith("route:"));
      expect(await gated.textContent("#out")).toBe("route:/settings/profile");
    } finally {
      await ctx.close();
    }
  }, 30_000);
});
