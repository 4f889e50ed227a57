// A new self-hoster's first ten minutes, as the README tells them: the built binary on a fresh
// data dir; open `/` in a browser and sign up the first user; `pier login` approved in that
// browser; `pier publish` a folder (no index page, a README in a subfolder) with no flags; see
// the site and its Auto-Index; give the bucket an address; deliver a message over SMTP; publish
// the folder again; the message is still in the bucket and nowhere on the site. Last, git sync
// (isomorphic-git inside the executable) imports a repository from a git server on loopback.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nodemailer from "nodemailer";
import { type Browser, type BrowserContext } from "playwright-core";
import { launchChromium } from "../helpers/chromium";
import { git, startGitServer } from "../helpers/git-server";
import { credentialsPath, loadCredentials } from "../../src/cli/client/credentials";
import { buildBinary, collectOutput, startBinary, type RunningBinary } from "../helpers/binary";

let work: string;
let bin: string;
let pier: RunningBinary;
let browser: Browser;
let context: BrowserContext;
const email = "owner@example.com";
const password = "correct horse battery staple";

const env = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: join(work, "home"), XDG_CONFIG_HOME: join(work, "home/.config") });

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "pier-newcomer-"));
  mkdirSync(join(work, "home"));
  bin = await buildBinary();
  // --git-allow-http, --git-allow-private-network: the git server of the last step is plain HTTP on loopback.
  pier = await startBinary(bin, {
    dataDir: join(work, "data"),
    cwd: work,
    env: env(),
    smtp: true,
    args: ["--git-allow-http", "on", "--git-allow-private-network", "on"],
  });
  browser = await launchChromium();
  context = await browser.newContext();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  if (pier) expect(await pier.stop()).toBe(0);
  rmSync(work, { recursive: true, force: true });
});

/** Run a `pier` client command to its end (nothing to type: no stdin). */
async function cli(args: string[]) {
  const proc = Bun.spawn([bin, ...args], { cwd: work, env: env(), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr };
}

/** What the owner's saved credential can see over the API (the key is read from the CLI's own store). */
async function api(method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(pier.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe("a newcomer's first ten minutes with the built binary", () => {
  const base = () => `http://localhost:${pier.port}`;
  let siteUrl = "";
  let key = "";
  let bucketId = "";

  test("/ leads to sign-up on an empty instance; the first user signs up", async () => {
    expect(pier.output()).toContain(`First step         open ${base()}/ and sign up`);
    const page = await context.newPage();
    await page.goto(`${base()}/`);
    expect(new URL(page.url()).pathname).toBe("/signup");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForURL((u) => u.pathname !== "/signup");
    expect(await page.content()).not.toContain("Welcome back");
    // Signed in now: `/` leads to the dashboard, not to sign-up again.
    await page.goto(`${base()}/`);
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    await page.close();
  }, 60_000);

  test("pier login, approved in the browser, then whoami with no flags", async () => {
    const proc = Bun.spawn([bin, "login", base(), "--no-browser"], { cwd: work, env: env(), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const output = collectOutput(proc);
    const deadline = Date.now() + 20_000;
    let link: string | undefined;
    while (!(link = /(http:\/\/\S+\/oauth\/device\?user_code=\S+)/.exec(output())?.[1])) {
      if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`pier login printed no link:\n${output()}`);
      await Bun.sleep(50);
    }
    const page = await context.newPage();
    await page.goto(link);
    await page.getByRole("button", { name: "Confirm Connection" }).click();
    await page.getByText("Connection confirmed").waitFor();
    await page.close();
    expect(await proc.exited).toBe(0);
    expect(output()).toContain("Logged in to");

    const who = await cli(["whoami"]);
    expect(who.code).toBe(0);
    expect(who.stdout).toMatch(/account .+ \(acc_\w+\), scope bucket_admin, active/);
    key = readSavedKey();
  }, 60_000);

  test("pier publish with no flags: the site and its Auto-Index, the README rendered", async () => {
    mkdirSync(join(work, "newcomer-site/docs"), { recursive: true });
    writeFileSync(join(work, "newcomer-site/docs/README.md"), "# Hello from the docs\n\nFirst page.\n");
    writeFileSync(join(work, "newcomer-site/notes.txt"), "plain notes\n");
    const r = await cli(["publish", join(work, "newcomer-site")]);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(r.code).toBe(0);
    siteUrl = /(http:\/\/[a-z0-9-]+\.localhost:\d+\/)/.exec(r.stdout)![1]!;

    const page = await context.newPage();
    await page.goto(siteUrl);
    await page.getByRole("link", { name: "docs" }).first().click();
    await page.waitForURL((u) => u.pathname.startsWith("/docs"));
    expect(await page.getByRole("heading", { name: "Hello from the docs" }).isVisible()).toBe(true);
    await page.close();

    const buckets = await api("GET", "/api/v1/buckets", key);
    bucketId = buckets.body.data.buckets.find((b: { title: string }) => b.title === "newcomer-site").id;
    expect(bucketId).toMatch(/^bkt_/);
  }, 90_000);

  test("the bucket gets an address, a message arrives over SMTP, a second publish keeps it private", async () => {
    const on = await api("PATCH", `/api/v1/buckets/${bucketId}`, key, { bucket: { inbound_email: { enabled: true } } });
    expect(on.status).toBe(200);
    const address = (await api("GET", `/api/v1/buckets/${bucketId}/inbound_email`, key)).body.data.address as string;
    expect(address).toContain("@");

    const transport = nodemailer.createTransport({ host: "127.0.0.1", port: pier.smtpPort, secure: false, ignoreTLS: true });
    await transport.sendMail({ from: "friend@example.org", to: address, subject: "Private hello", text: "Only for the owner." });

    const messages = async () =>
      (await api("GET", `/api/v1/buckets/${bucketId}/inbound_email/messages`, key)).body.data.messages as Array<{ subject: string; path?: string }>;
    const deadline = Date.now() + 30_000;
    while ((await messages()).length === 0 && Date.now() < deadline) await Bun.sleep(100);
    expect((await messages()).map((m) => m.subject)).toEqual(["Private hello"]);

    const again = await cli(["publish", join(work, "newcomer-site")]);
    expect(again.code).toBe(0);
    expect(again.stdout + again.stderr).not.toContain("_email");

    // Still in the bucket, for the API...
    expect((await messages()).map((m) => m.subject)).toEqual(["Private hello"]);
    // ...and nowhere on the site: not listed, not served.
    const index = await fetch(pier.url + "/", { headers: { host: new URL(siteUrl).host } });
    expect(await index.text()).not.toContain("_email");
    const mailDir = await fetch(pier.url + "/_email/", { headers: { host: new URL(siteUrl).host } });
    expect(mailDir.status).toBe(404);

    // The operator's own check, from the same executable: nodemailer, which Pier loads only when
    // it sends a message, is built in.
    const check = await cli(["admin", "mail", "test", address, "--data-dir", join(work, "data")]);
    expect(check.code).toBe(0);
    expect(check.stderr).toContain(`test message sent to ${address}`);
    const until = Date.now() + 30_000;
    while ((await messages()).length < 2 && Date.now() < until) await Bun.sleep(100);
    expect((await messages()).some((m) => m.subject.startsWith("Pier test message "))).toBe(true);
  }, 90_000);

  test("git sync runs inside the binary: a public repository is imported into a new bucket", async () => {
    const server = startGitServer();
    try {
      const url = server.createRepo("site");
      const repo = mkdtempSync(join(work, "repo-"));
      await git(repo, "init", "--quiet", "--initial-branch=main");
      writeFileSync(join(repo, "index.html"), "<h1>from git</h1>\n");
      await git(repo, "add", "-A");
      await git(repo, "commit", "--quiet", "-m", "first");
      await git(repo, "push", "--quiet", join(server.root, "site.git"), "HEAD:main");

      const created = await api("POST", "/api/v1/buckets", key, { bucket: { title: "From git" } });
      expect(created.status).toBe(201);
      const bucketId = created.body.data.bucket.id as string;
      const connect = await api("POST", `/api/v1/buckets/${bucketId}/github_sync`, key, { direction: "import", repository_url: url, branch: "main" });
      expect(connect.status).toBe(202);
      // The binary's own job worker runs the import.
      let sync: { state: string; last_commit: string | null } = { state: "", last_commit: null };
      for (const until = Date.now() + 60_000; Date.now() < until; await Bun.sleep(200)) {
        sync = (await api("GET", `/api/v1/buckets/${bucketId}/github_sync`, key)).body.data.github_sync;
        if (sync.state !== "pending" && sync.state !== "syncing") break;
      }
      expect(sync.state).toBe("in_sync");
      expect(sync.last_commit).toBe(await git(join(server.root, "site.git"), "rev-parse", "main"));
      const files = await api("GET", `/api/v1/buckets/${bucketId}/files`, key);
      expect(files.body.data.files.map((f: { path: string }) => f.path)).toEqual(["index.html"]);
    } finally {
      await server.stop();
    }
  }, 90_000);
});

/** The key `pier login` saved for the default server, read as the CLI reads it. */
function readSavedKey(): string {
  const env = { HOME: join(work, "home"), XDG_CONFIG_HOME: join(work, "home/.config") };
  expect(statSync(credentialsPath(env)).mode & 0o777).toBe(0o600);
  const store = loadCredentials(env);
  const saved = store.servers[store.default!]!;
  expect(saved.api_key).toMatch(/^pier_/);
  return saved.api_key;
}
