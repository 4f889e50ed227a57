// The `pier` client as a user runs it: real subprocesses (src/main.ts bundled, helpers/cli.ts) with a temp
// HOME against a live Pier. `pier login` (device flow, approved over HTTP by a signed-in session)
// and then publish, preview, push, unpublish, whoami and logout with no --url or --key; --help on
// every command; failures that say what to do, with no stack trace unless --debug.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decideDevice, sessionCookie } from "../../helpers/oauth";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { siteFetch } from "../../helpers/sites";
import { pierCommand } from "../../helpers/cli";

let t: TestPier;
let home: string;
const root = join(import.meta.dir, "../../..");
const temps: string[] = [];
/** `pier login` of the first describe's user: what it printed, the approval page's answer and its exit code. */
let login: Promise<{ u: TestUser; out: string; approval: number; code: number }>;

beforeAll(async () => {
  t = await startTestPier({ uploadRateLimitPerMinute: 1000 });
  home = mkdtempSync(join(tmpdir(), "pier-cli-home-"));
  // The CLI waits out the device flow's poll interval (5 s) before it asks whether the login was
  // confirmed: the login starts here and the tests that need no saved login run meanwhile (the
  // login's describe comes last). It only reads and writes HOME's credentials, which the others
  // never read: they pass --url/--key or PIER_URL/PIER_API_KEY, or fail before.
  login = (async () => {
    const u = await t.user({ plan: "pro" });
    return { u, ...(await loginApproved(sessionCookie(t, u))) };
  })();
  login.catch(() => {}); // a failure is the login test's, when it awaits the login
});
afterAll(async () => {
  await t.stop();
  for (const d of [home, ...temps]) rmSync(d, { recursive: true, force: true });
});

const baseEnv = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, "cfg") });
const credentialsFile = () => join(home, "cfg/pier/credentials.json");

/** Run the CLI to the end, draining the job runner (builds, unpublishes) while it waits. */
async function cli(
  args: string[],
  env: Record<string, string> = {},
  stdin?: string,
): Promise<{ code: number; stdout: string; stderr: string; maxRss: number }> {
  const proc = Bun.spawn([...(await pierCommand()), ...args], {
    cwd: root,
    env: { ...baseEnv(), ...env },
    stdin: stdin === undefined ? "ignore" : new Blob([stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  let exited = false;
  void proc.exited.then(() => (exited = true));
  const pump = (async () => {
    while (!exited) {
      await t.pier.runner.drain();
      await Promise.race([Bun.sleep(50), proc.exited]);
    }
  })();
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  await pump;
  return { code, stdout, stderr, maxRss: proc.resourceUsage()?.maxRSS ?? 0 };
}

/** A folder with this exact name (the site and bucket are named after it). */
function folder(name: string, files: Record<string, string | Uint8Array>): string {
  const parent = mkdtempSync(join(tmpdir(), "pier-cli-dir-"));
  temps.push(parent);
  const dir = join(parent, name);
  for (const [p, body] of Object.entries(files)) {
    mkdirSync(join(dir, p, ".."), { recursive: true });
    writeFileSync(join(dir, p), body);
  }
  return dir;
}

/** `pier login`, confirmed on the approval page as soon as it waits; no expect here (it runs before the login test). */
async function loginApproved(cookie: string): Promise<{ out: string; approval: number; code: number }> {
  const proc = Bun.spawn([...(await pierCommand()), "login", t.url, "--no-browser"], {
    cwd: root,
    env: baseEnv(),
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  let out = "";
  while (!/Waiting for you/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`login ended early: ${out} ${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  const link = /(http:\/\/\S+\/oauth\/device\?user_code=\S+)/.exec(out)![1]!;
  const approval = (await decideDevice(t, cookie, link)).status;
  if (approval !== 200) proc.kill(); // not confirmed: the CLI would poll until the code expires
  for (let r = await reader.read(); !r.done; r = await reader.read()) out += new TextDecoder().decode(r.value);
  return { out, approval, code: await proc.exited };
}

const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at .+:\d+/);

describe("help and usage", () => {
  const commands = [
    "login",
    "logout",
    "whoami",
    "publish",
    "preview",
    "push",
    "unpublish",
    "deploys",
    "rollback",
    "serve",
    "healthcheck",
    "version",
    "admin bootstrap",
    "admin user create",
    "admin user password",
    "admin user disable-2fa",
    "admin account create",
    "admin account plan",
    "admin account read-only",
    "admin key create",
    "admin invite create",
    "admin plans",
    "admin mail test",
    "admin mail disable",
    "admin mail enable",
    "admin mail outbox",
  ];

  // About 20 processes start at once: 9 s on a quiet 2-core machine, past 45 s on a loaded one.
  test("--help works on every command and admin subcommand", async () => {
    const results = await Promise.all(commands.map((c) => cli([...c.split(" "), "--help"])));
    results.forEach((r, i) => {
      expect({ command: commands[i], code: r.code }).toEqual({ command: commands[i], code: 0 });
      expect(r.stdout).toStartWith(`Usage: pier ${commands[i]}`);
    });
    const groups = await Promise.all(["admin", "admin user", "admin mail"].map((c) => cli([...c.split(" "), "--help"])));
    for (const g of groups) {
      expect(g.code).toBe(0);
      expect(g.stdout).toContain("Usage: pier admin <command>");
    }
  }, 120_000);

  test("an unknown option is named, with the command's usage, exit 2", async () => {
    const clientSide = [
      "login",
      "logout",
      "whoami",
      "publish",
      "preview",
      "push",
      "unpublish",
      "deploys",
      "rollback",
      "serve",
      "healthcheck",
      "admin user create",
    ];
    const results = await Promise.all(clientSide.map((c) => cli([...c.split(" "), "--bogus"])));
    results.forEach((r, i) => {
      expect({ command: clientSide[i], code: r.code }).toEqual({ command: clientSide[i], code: 2 });
      expect(r.stderr).toContain(`pier ${clientSide[i]}: unknown option --bogus`);
      expect(r.stderr).toContain(`Usage: pier ${clientSide[i]}`);
      noStack(r.stderr);
    });
  }, 60_000);

  test("a bad --access value names the choices", async () => {
    const r = await cli(["publish", folder("access-site", { "index.html": "x" }), "--access", "secret"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--access must be one of public, password, require_email");
  });
});

describe("deploy history", () => {
  test("pier deploys lists the folder's builds; pier rollback serves the one before, then the newest again; bad ids are refused", async () => {
    const u = await t.user({ plan: "pro" });
    const env = { PIER_URL: t.url, PIER_API_KEY: u.key };
    const site = folder("history-site", { "index.html": "<h1>one</h1>" });
    const first = await cli(["publish", site], env);
    expect(first.code).toBe(0);
    writeFileSync(join(site, "index.html"), "<h1>two</h1>");
    expect((await cli(["publish", site], env)).code).toBe(0);
    const url = new URL(first.stdout.trim());
    const served = async () => (await siteFetch(t, url.host, "/")).text();
    expect(await served()).toBe("<h1>two</h1>");

    const listed = await cli(["deploys", site], env);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trim().split("\n");
    expect(lines.length).toBe(2);
    expect(lines[0]).toMatch(/^dpl_\S+ .* cli +live$/);
    expect(lines[1]).toMatch(/^dpl_\S+ .* 1 file .* cli$/);
    expect(listed.stderr).toContain('2 deploys of "history-site"');
    const [newest, oldest] = lines.map((l) => l.split(" ")[0]!);

    const back = await cli(["rollback", "--dir", site], env);
    expect(back.code).toBe(0);
    expect(back.stdout.trim()).toBe(first.stdout.trim());
    expect(back.stderr).toContain(`Rolled back "history-site" to deploy ${oldest}`);
    expect(back.stderr).toContain("files are unchanged");
    expect(await served()).toBe("<h1>one</h1>");
    const relisted = await cli(["deploys", site], env);
    expect(relisted.stdout).toContain(`${newest}`);
    expect(relisted.stderr).toContain(`the live deploy is ${oldest}`);

    const forward = await cli(["rollback", newest!, "--dir", site], env);
    expect(forward.code).toBe(0);
    expect(await served()).toBe("<h1>two</h1>");

    const [unknown, malformed] = await Promise.all([
      cli(["rollback", "dpl_nosuchdeploy", "--dir", site], env),
      cli(["rollback", "../etc", "--dir", site], env),
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("DEPLOY_NOT_FOUND");
    noStack(unknown.stderr);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain("is not a deploy id");
    expect(await served()).toBe("<h1>two</h1>");
  }, 60_000);
});

describe("failures say what to do, without a stack trace", () => {
  test("pier publish reports the site rules and each skipped line with its number; the site follows the rest", async () => {
    const u = await t.user();
    const site = folder("rules-site", { "index.html": "<h1>home</h1>", _redirects: "/old/:id /new/:id 301\n/bad /x 418\n" });
    const r = await cli(["publish", site], { PIER_URL: t.url, PIER_API_KEY: u.key });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("Site rules: 1 redirect rule, 0 header blocks.");
    expect(r.stderr).toMatch(/warning: _redirects line 2: Unknown status "418"/);
    const moved = await siteFetch(t, new URL(r.stdout.trim()).host, "/old/7");
    expect(moved.status).toBe(301);
    expect(moved.headers.get("location")).toBe("/new/7");
  });

  test("an unreachable server, a bad key, a missing folder; --debug adds the stack", async () => {
    const site = folder("failing-site", { "index.html": "x" });
    // Four independent commands, run at once (the unreachable ones wait out their retries).
    const [down, debug, badKey, missing] = await Promise.all([
      cli(["publish", site, "--url", "http://127.0.0.1:1", "--key", "pier_nope"]),
      cli(["publish", site, "--url", "http://127.0.0.1:1", "--key", "pier_nope", "--debug"]),
      cli(["publish", site, "--url", t.url, "--key", "pier_not_a_real_key"]),
      cli(["push", join(site, "nope"), "--url", t.url, "--key", "k"]),
    ]);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain("could not reach http://127.0.0.1:1");
    expect(down.stderr).toContain("(SERVER_UNREACHABLE)");
    expect(down.stderr).toContain("Is the server running");
    noStack(down.stderr);
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/\n\s+at .+/);

    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toContain("(UNAUTHORIZED)");
    expect(badKey.stderr).toContain(`pier login ${t.url}`);
    noStack(badKey.stderr);

    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("is not a folder (NOT_A_FOLDER)");
    noStack(missing.stderr);
  }, 60_000);
});

describe("folders and transport", () => {
  test("a large file is hashed and uploaded from disk, never held whole in memory", async () => {
    const u = await t.user({ plan: "pro" });
    const site = folder("large-file-site", { "index.html": "<h1>big</h1>" });
    // 256 MiB of zeros (sparse: no disk is spent); a CLI that reads it whole holds 256 MiB at once.
    const big = join(site, "video.bin");
    writeFileSync(big, "");
    truncateSync(big, 256 * 1024 ** 2);
    // Beside it, the same command on a one-file folder: the CLI's own footprint (each process has its own).
    const [small, r] = await Promise.all([
      cli(["publish", folder("small-site", { "index.html": "x" })], { PIER_URL: t.url, PIER_API_KEY: u.key }),
      cli(["publish", site], { PIER_URL: t.url, PIER_API_KEY: u.key }),
    ]);
    expect(small.code).toBe(0);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("Uploaded 2 files (256.0 MB).");
    expect(r.maxRss - small.maxRss).toBeLessThan(100 * 1024 ** 2);
  }, 120_000);
});

describe("symbolic links", () => {
  test("links in a published folder are not followed, and the CLI names the ones it skipped", async () => {
    const u = await t.user({ plan: "pro" });
    const outside = folder("outside", { "secret.txt": "not for the site" });
    const site = folder("links-site", { "index.html": "<h1>links</h1>" });
    symlinkSync("/etc/passwd", join(site, "passwd.txt"));
    symlinkSync(outside, join(site, "shared"));
    const r = await cli(["publish", site], { PIER_URL: t.url, PIER_API_KEY: u.key });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("Skipped 2 symbolic links (links are not followed): passwd.txt, shared");
    const host = new URL(r.stdout.trim()).host;
    expect((await siteFetch(t, host, "/passwd.txt")).status).toBe(404);
    expect((await siteFetch(t, host, "/shared/secret.txt")).status).toBe(404);
  }, 60_000);
});

describe("keys over plain HTTP", () => {
  test("a command sending the key over plain http to another machine warns; to this machine it does not", async () => {
    const site = folder("clear-text-site", { "index.html": "x" });
    // A name that never resolves: the warning comes before the key is sent, whatever happens next.
    const [remote, env, local] = await Promise.all([
      cli(["publish", site, "--url", "http://pier.invalid", "--key", "pier_nope"]),
      cli(["deploys", site], { PIER_URL: "http://pier.invalid", PIER_API_KEY: "pier_nope" }),
      cli(["publish", site, "--url", t.url, "--key", "pier_nope"]),
    ]);
    expect(remote.code).toBe(1);
    expect(remote.stderr).toContain("Warning: http://pier.invalid does not use HTTPS; the key travels in clear text.");
    expect(env.stderr).toContain("does not use HTTPS");
    expect(local.code).toBe(1);
    expect(local.stderr).not.toContain("does not use HTTPS");
  }, 60_000);
});

describe("pier admin mail test", () => {
  test("sends to the SMTP port of the Pier running on the data dir, not the default 2525", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pier-cli-serve-"));
    temps.push(dataDir);
    const env = { ...baseEnv(), PIER_SECRET_KEY: "test-secret-key-test-secret-key-test-secret-key" };
    // One process, as the test servers run (--workers 1): serving workers (HTTP and HTTPS; SMTP stays
    // with the primary) would add a process per core before the banner. test/e2e/binary.test.ts runs them.
    const flags = ["--http-port", "0", "--smtp-port", "0", "--host", "127.0.0.1", "--log-level", "error", "--workers", "1"];
    const serve = Bun.spawn([...(await pierCommand()), "serve", "--data-dir", dataDir, ...flags], {
      cwd: root,
      env,
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const reader = serve.stdout.getReader();
      let banner = "";
      while (!/SMTP +127\.0\.0\.1:\d+/.test(banner)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`serve ended: ${banner}${await new Response(serve.stderr).text()}`);
        banner += new TextDecoder().decode(value);
      }
      const smtpPort = Number(/SMTP +127\.0\.0\.1:(\d+)/.exec(banner)![1]);
      const httpPort = Number(/HTTP +127\.0\.0\.1:(\d+)/.exec(banner)![1]);
      expect(smtpPort).not.toBe(2525);
      const admin = async (args: string[]) => {
        const p = Bun.spawn([...(await pierCommand()), "admin", ...args, "--data-dir", dataDir], {
          cwd: root,
          env,
          stdout: "pipe",
          stderr: "pipe",
        });
        const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
        return { stdout, stderr, code };
      };
      const boot = await admin(["bootstrap", "--email", "owner@example.com", "--password", "a long enough password"]);
      expect(boot.code).toBe(0);
      const key = boot.stdout.trim();
      const created = await fetch(`http://127.0.0.1:${httpPort}/api/v1/buckets`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ bucket: { title: "Inbox", inbound_email: { enabled: true } } }),
      });
      const bucket = ((await created.json()) as any).data.bucket;
      const sent = await admin(["mail", "test", bucket.inbound_email.address]);
      expect(sent.code).toBe(0);
      expect(sent.stderr).toContain(`via 127.0.0.1:${smtpPort}`);
      const state = await fetch(`http://127.0.0.1:${httpPort}/api/v1/buckets/${bucket.id}/inbound_email`, { headers: { authorization: `Bearer ${key}` } });
      expect(((await state.json()) as any).data.received_count).toBe(1);
    } finally {
      serve.kill("SIGTERM");
      await serve.exited;
    }
    // A stopped server leaves no port record behind to mislead the next mail test.
    expect(existsSync(join(dataDir, "running.json"))).toBe(false);
  }, 60_000);
});

describe("pier login, then every client command without flags", () => {
  test("publish, preview, whoami, push, unpublish and logout use the saved login", async () => {
    const { u, out, approval, code } = await login;
    expect(approval).toBe(200);
    expect(code).toBe(0);
    // The terminal and the approval page agree: compare the ID the page shows, or type it at the bare address.
    expect(out).toMatch(/Connection ID: [A-Z]{4}-[A-Z]{4}/);
    expect(out).toContain("The page shows a Connection ID at the top right: confirm only if it is the same as this one.");
    expect(out).toContain(`go to ${t.pier.deps.urls.baseUrl}/oauth/device and enter the Connection ID there`);
    expect(out).not.toMatch(/never type/i);
    expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);

    // A folder named "mysite": the site name needs 9 characters, and the CLI says so.
    const site = folder("mysite", { "index.html": "<h1>mine</h1>", "css/a.css": "body{}" });
    const pub = await cli(["publish", site]);
    expect(pub.code).toBe(0);
    const url = pub.stdout.trim();
    expect(url).toContain("mysite-site.");
    expect(pub.stderr).toContain('The site is named "mysite-site": site names need at least 9 characters, so "mysite" was lengthened.');
    expect(pub.stderr).toContain("--slug");
    // One unit style in the progress and the summary.
    expect(pub.stderr).toMatch(/Uploading 2 of 2 files: \d+ B of \d+ B/);
    expect(pub.stderr).not.toMatch(/\d+\/\d+ KB|bytes/);
    const host = new URL(url).hostname;
    expect(await (await siteFetch(t, host, "/")).text()).toBe("<h1>mine</h1>");
    // The next publish of the same site does not repeat the explanation.
    writeFileSync(join(site, "index.html"), "<h1>mine v2</h1>");
    const again = await cli(["publish", site]);
    expect(again.code).toBe(0);
    expect(again.stderr).not.toContain("The site is named");

    const preview = await cli(["preview", site]);
    expect(preview.code).toBe(0);
    const previewHost = new URL(preview.stdout.trim()).hostname;
    expect(previewHost).toStartWith("preview-mysite-site.");
    expect((await siteFetch(t, previewHost, "/")).status).toBe(200);

    const who = await cli(["whoami"]);
    expect(who.code).toBe(0);
    expect(who.stdout).toContain(u.accountId);

    // push: files into a bucket, nothing published; missing files stay unless --delete-missing.
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);
    const assets = folder("team-assets", { "logo.png": png, "notes/readme.md": "# notes", ".env": "SECRET=1" });
    const pushed = await cli(["push", assets]);
    expect(pushed.code).toBe(0);
    const bucketId = pushed.stdout.trim();
    expect(bucketId).toMatch(/^bkt_/);
    expect(pushed.stderr).toContain('Created the bucket "team-assets"');
    expect(pushed.stderr).toContain("Nothing was published.");
    const paths = async () => (await t.api("GET", `/api/v1/buckets/${bucketId}/files`, { key: u.key })).body.data.files.map((f: any) => f.path).sort();
    expect(await paths()).toEqual(["logo.png", "notes/readme.md"]);
    const logo = await fetch(`${t.url}/api/v1/buckets/${bucketId}/files/by_path?path=logo.png`, { headers: { authorization: `Bearer ${u.key}` } });
    expect(new Uint8Array(await logo.arrayBuffer())).toEqual(png);
    const pubs = (await t.api("GET", "/api/v1/publications?include_manifest=false", { key: u.key })).body.data.publications;
    expect(pubs.filter((p: any) => p.bucket_id === bucketId)).toEqual([]);
    rmSync(join(assets, "notes"), { recursive: true });
    writeFileSync(join(assets, "extra.txt"), "more");
    const kept = await cli(["push", assets]);
    expect(kept.code).toBe(0);
    expect(kept.stdout.trim()).toBe(bucketId);
    expect(kept.stderr).toContain("1 to upload");
    expect(await paths()).toEqual(["extra.txt", "logo.png", "notes/readme.md"]);
    const synced = await cli(["push", assets, "--delete-missing"]);
    expect(synced.code).toBe(0);
    expect(synced.stderr).toContain("1 deleted");
    expect(await paths()).toEqual(["extra.txt", "logo.png"]);

    // unpublish --preview ends the preview only; unpublish takes the site down.
    const endPreview = await cli(["unpublish", site, "--preview"]);
    expect(endPreview.code).toBe(0);
    expect(endPreview.stdout.trim()).toBe(preview.stdout.trim());
    t.clock.advance(5_000);
    expect((await t.primaryFetch(previewHost, "/")).status).toBe(410); // the test's clock: the primary's answer
    expect((await siteFetch(t, host, "/")).status).toBe(200);
    const down = await cli(["unpublish", site]);
    expect(down.code).toBe(0);
    expect(down.stdout.trim()).toBe(url);
    expect(down.stderr).toContain('Unpublished "mysite"');
    expect((await siteFetch(t, host, "/")).status).toBe(404);
    const twice = await cli(["unpublish", site]);
    expect(twice.code).toBe(0);
    expect(twice.stderr).toContain("is not published; nothing to do");
    const saved = JSON.parse(readFileSync(credentialsFile(), "utf8"));
    const key = saved.servers[saved.default].api_key;

    const bye = await cli(["logout"]);
    expect(bye.code).toBe(0);
    expect((await t.api("GET", "/api/v1/buckets", { key })).status).toBe(401);
    expect(existsSync(credentialsFile())).toBe(false);
    const after = await cli(["publish", site]);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain("(NOT_LOGGED_IN)");
    expect(after.stderr).toContain("pier login");
    noStack(after.stderr);
  }, 90_000);

  test("flags and PIER_URL / PIER_API_KEY still override the saved login; --key warns, --key-stdin keeps the key out of argv", async () => {
    const u = await t.user({ plan: "pro" });
    const site = folder("override-site", { "index.html": "env" });
    const r = await cli(["publish", site], { PIER_URL: t.url, PIER_API_KEY: u.key });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain("--key");
    // No saved login here: the key can only have come from standard input.
    const piped = await cli(["deploys", site, "--url", t.url, "--key-stdin"], {}, `${u.key}\n`);
    expect([piped.code, piped.stderr]).toEqual([0, expect.not.stringContaining("Warning")]);
    const flags = await cli(["unpublish", site, "--url", t.url, "--key", u.key]);
    expect(flags.code).toBe(0);
    expect(flags.stdout.trim()).toBe(r.stdout.trim());
    expect(flags.stderr).toContain("Warning: --key puts the key in the process list and shell history; set PIER_API_KEY, pipe it to --key-stdin");
  }, 30_000);

  test("the credentials file of earlier versions is read once and migrated", async () => {
    const u = await t.user();
    const xdg = mkdtempSync(join(tmpdir(), "pier-xdg-"));
    temps.push(xdg);
    mkdirSync(join(xdg, "pier"));
    writeFileSync(join(xdg, "pier/credentials.json"), JSON.stringify({ base_url: t.url, api_key: u.key }));
    const who = await cli(["whoami"], { XDG_CONFIG_HOME: xdg });
    expect(who.code).toBe(0);
    expect(who.stdout).toContain(u.accountId);
    const file = join(xdg, "pier/credentials.json");
    const migrated = JSON.parse(readFileSync(file, "utf8"));
    expect(migrated).toMatchObject({ version: 1, default: t.url, servers: { [t.url]: { api_key: u.key } } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});
