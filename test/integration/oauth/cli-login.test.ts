// `pier login` as a subprocess against a live Pier, approved over HTTP by a signed-in session:
// logging in again replaces (revokes) the previous key; a revoked key makes whoami say so.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { csrfToken, findSession } from "../../../src/features/accounts/sessions";
import { decideDevice, sessionCookie } from "../../helpers/oauth";
import { pierCommand } from "../../helpers/cli";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
let home: string;
let pier: string[];
const root = join(import.meta.dir, "../../..");

beforeAll(async () => {
  pier = await pierCommand();
  t = await startTestPier();
  home = mkdtempSync(join(tmpdir(), "pier-cli-home-"));
});
afterAll(async () => {
  await t.stop();
  rmSync(home, { recursive: true, force: true });
});

const cli = (args: string[]) =>
  Bun.spawn([...pier, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, "cfg") },
    stdout: "pipe",
    stderr: "pipe",
  });

async function loginApproved(cookie: string): Promise<string> {
  const proc = cli(["login", t.url, "--no-browser"]);
  const reader = proc.stdout.getReader();
  let out = "";
  while (!/user_code=\S+/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`login ended early: ${out} ${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  const link = /(http:\/\/\S+\/oauth\/device\?user_code=\S+)/.exec(out)![1]!;
  expect((await decideDevice(t, cookie, link)).status).toBe(200);
  reader.releaseLock();
  expect(await proc.exited).toBe(0);
  const saved = JSON.parse(readFileSync(join(home, "cfg/pier/credentials.json"), "utf8"));
  return saved.servers[t.pier.deps.urls.baseUrl].api_key;
}

describe("pier login", () => {
  test("a second login revokes the first key; whoami notices a revoked key", async () => {
    const u = await t.user();
    const cookie = sessionCookie(t, u);
    const first = await loginApproved(cookie);
    const second = await loginApproved(cookie);
    expect(second).not.toBe(first);
    expect((await t.api("GET", "/api/v1/buckets", { key: first })).status).toBe(401);
    expect((await t.api("GET", "/api/v1/buckets", { key: second })).status).toBe(200);
    const conns = await t.api("GET", "/api/v1/oauth/connections", { headers: { cookie } });
    expect(conns.body.data.connections).toHaveLength(1);

    // Revoked from the browser: the CLI says so instead of failing obscurely.
    expect(
      (
        await t.api("DELETE", `/api/v1/oauth/connections/${conns.body.data.connections[0].id}`, {
          headers: { cookie, "x-pier-csrf": csrfToken(t.pier.deps, findSession(t.pier.deps, cookie.split(";")[0]!.split("=")[1])!.id) },
        })
      ).status,
    ).toBe(200);
    const who = cli(["whoami"]);
    expect(await who.exited).toBe(1);
    expect(await new Response(who.stderr).text()).toContain("revoked or expired");
  }, 40_000);

  test("the CLI honours slow_down: after it, it waits the longer interval before polling again", async () => {
    // Before the CLI's first poll the server records a poll as just made and its clock is set back
    // 5 s, so that first poll (5 s later in real time) looks too fast and gets slow_down with a
    // 10 s interval: one slow_down without first waiting out an ordinary 5 s poll.
    const u = await t.user();
    const proc = cli(["login", t.url, "--no-browser"]);
    const reader = proc.stdout.getReader();
    let out = "";
    while (!/user_code=\S+/.test(out)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`login ended early: ${out}`);
      out += new TextDecoder().decode(value);
    }
    reader.releaseLock();
    const link = /(http:\/\/\S+\/oauth\/device\?user_code=\S+)/.exec(out)![1]!;
    const userCode = decodeURIComponent(new URL(link).searchParams.get("user_code")!).replace("-", "").toUpperCase();
    const row = () =>
      t.pier.deps.sqlite
        .query<{ interval_seconds: number; last_polled_at: string | null }, [string]>(
          "SELECT interval_seconds, last_polled_at FROM oauth_device_codes WHERE user_code = ?",
        )
        .get(userCode)!;
    const until = async (ok: () => boolean, ms: number) => {
      for (const end = Date.now() + ms; !ok(); await Bun.sleep(50)) if (Date.now() > end) throw new Error(`timed out: ${JSON.stringify(row())}`);
    };
    expect(row().interval_seconds).toBe(5);
    t.pier.deps.sqlite.run("UPDATE oauth_device_codes SET last_polled_at = ? WHERE user_code = ?", [t.clock.now().toISOString(), userCode]);
    t.clock.advance(-5_000);
    await until(() => row().interval_seconds === 10, 30_000); // the CLI's poll: slow_down
    const slowedAt = Date.now();
    t.clock.advance(5_000); // the clock is right again
    expect((await decideDevice(t, sessionCookie(t, u), link)).status).toBe(200);
    expect(await proc.exited).toBe(0);
    // The CLI waited the new 10 s interval (not the old 5 s) before the poll that got the key.
    expect(Date.now() - slowedAt).toBeGreaterThanOrEqual(9_000);
    expect(row().interval_seconds).toBe(10); // and it was not told to slow down again
  }, 60_000);

  test("bad arguments and unreachable servers fail cleanly", async () => {
    const bad = cli(["login", t.url, "--scope", "root"]);
    expect(await bad.exited).toBe(2);
    const down = cli(["login", "http://127.0.0.1:1", "--no-browser"]);
    expect(await down.exited).toBe(1);
    const downErr = await new Response(down.stderr).text();
    expect(downErr).toContain("pier login: could not reach http://127.0.0.1:1");
    expect(downErr).toContain("(SERVER_UNREACHABLE)");
    expect(downErr).not.toMatch(/\n\s+at .+:\d+/);
  });

  test("pier login --help explains the command instead of calling it an unknown option", async () => {
    const help = cli(["login", "--help"]);
    expect(await help.exited).toBe(0);
    const text = await new Response(help.stdout).text();
    expect(text).toStartWith("Usage: pier login [URL] [options]");
    expect(text).toContain("--no-browser");
    expect(text).toContain("--scope");
  });
});
