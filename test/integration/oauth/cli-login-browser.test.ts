// The whole local flow as a person does it: `pier login` (a real subprocess) prints a link and a
// Connection ID and waits; headless Chromium opens the link, signs in through /signin, sees the
// same ID at the top right and clicks Confirm Connection; the CLI saves the key (0600) without printing it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser } from "playwright-core";
import { launchChromium } from "../../helpers/chromium";
import { compareVersions, updateNotice } from "../../../src/cli/client/http";
import { createSession } from "../../../src/features/accounts/sessions";
import { pierCommand } from "../../helpers/cli";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
let browser: Browser;
let home: string;
let pier: string[];
const root = join(import.meta.dir, "../../..");

beforeAll(async () => {
  pier = await pierCommand();
  t = await startTestPier();
  home = mkdtempSync(join(tmpdir(), "pier-cli-home-"));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t.stop();
  rmSync(home, { recursive: true, force: true });
});

function cli(args: string[]) {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, "config") };
  return Bun.spawn([...pier, ...args], { cwd: root, env, stdout: "pipe", stderr: "pipe" });
}

async function readUntil(stream: ReadableStream<Uint8Array>, pattern: RegExp, timeoutMs = 15_000): Promise<{ text: string; rest: Promise<string> }> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(text)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; got: ${text}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before ${pattern}; got: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  const rest = (async () => {
    let more = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return more;
      more += decoder.decode(value, { stream: true });
    }
  })();
  return { text, rest };
}

describe("pier login with a browser", () => {
  test("sign in and Confirm Connection in Chromium while the CLI waits; whoami; logout revokes", async () => {
    const u = await t.user();
    const proc = cli(["login", t.url, "--no-browser"]);
    const { text, rest } = await readUntil(proc.stdout, /Connection ID: ([A-Z]{4}-[A-Z]{4})/);
    const link = /(http:\/\/\S+\/oauth\/device\?user_code=\S+)/.exec(text)![1]!;
    const connectionId = /Connection ID: ([A-Z]{4}-[A-Z]{4})/.exec(text)![1]!;

    // Not signed in yet: the link leads through the real sign-in form and back to the approval.
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(link);
    expect(new URL(page.url()).pathname).toBe("/signin");
    await page.getByLabel("Email").fill(u.email);
    await page.getByLabel("Password").fill(u.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/oauth/device");
    const badge = page.locator("#connection-id");
    expect(await badge.innerText()).toContain(connectionId);
    const box = (await badge.boundingBox())!;
    const width = page.viewportSize()!.width;
    expect(box.x + box.width).toBeGreaterThan(width * 0.8); // top right
    expect(box.y).toBeLessThan(80);
    await page.getByRole("button", { name: "Confirm Connection" }).click();
    await page.getByText("Connection confirmed").waitFor();
    await context.close();

    const code = await proc.exited;
    const stdout = text + (await rest);
    const stderr = await new Response(proc.stderr).text();
    expect(code).toBe(0);
    expect(stdout).toContain("Logged in to");

    const file = join(home, "config/pier/credentials.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(readFileSync(file, "utf8"));
    const base = t.pier.deps.urls.baseUrl;
    const key = saved.servers[base].api_key as string;
    expect(key).toMatch(/^pier_/);
    expect(stdout + stderr).not.toContain(key);
    expect((await t.api("GET", "/api/v1/agent_auth/status", { key })).body.data.account.id).toBe(u.accountId);

    const who = cli(["whoami"]);
    expect(await who.exited).toBe(0);
    const whoOut = await new Response(who.stdout).text();
    expect(whoOut).toContain(u.accountId);
    expect(whoOut).toContain("bucket_admin");
    expect(whoOut).not.toContain(key);

    const out = cli(["logout"]);
    expect(await out.exited).toBe(0);
    expect((await t.api("GET", "/api/v1/buckets", { key })).status).toBe(401);
    const after = cli(["whoami"]);
    expect(await after.exited).toBe(1);
  }, 40_000);

  test("Deny in the browser: the CLI stops and saves nothing", async () => {
    const u = await t.user();
    const proc = cli(["login", t.url, "--no-browser"]);
    const { text } = await readUntil(proc.stdout, /Connection ID: ([A-Z]{4}-[A-Z]{4})/);
    const link = /(http:\/\/\S+\/oauth\/device\?user_code=\S+)/.exec(text)![1]!;
    const { token } = createSession(t.pier.deps, u.userId, { remember: false });
    const context = await browser.newContext();
    await context.addCookies([{ name: "pier_session", value: token, url: t.pier.deps.urls.baseUrl }]);
    const page = await context.newPage();
    await page.goto(link);
    await page.getByRole("button", { name: "Deny" }).click();
    await page.getByText("Connection denied").waitFor();
    await context.close();
    expect(await proc.exited).toBe(1);
    expect(await new Response(proc.stderr).text()).toContain("denied");
    expect(existsSync(join(home, "config/pier/credentials.json"))).toBe(false);
  }, 40_000);
});

describe("client version check", () => {
  test("says when the server advertises a newer CLI", () => {
    expect(compareVersions("0.1.0", "0.2.0")).toBe(-1);
    expect(compareVersions("1.10.0", "1.9.9")).toBe(1);
    expect(updateNotice({ client_version: "999.0.0" })).toContain("newer Pier CLI");
    expect(updateNotice({ client_version: "0.0.1" })).toBeNull();
  });
});
