// `pier login` as a subprocess against a live Pier, approved over HTTP by a signed-in session:
// logging in again replaces (revokes) the previous key; a revoked key makes whoami say so.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { csrfToken, findSession } from "../../src/features/accounts/sessions";
import { decideDevice, sessionCookie } from "../helpers/oauth";
import { startTestPier, type TestPier } from "../helpers/pier";

let t: TestPier;
let home: string;
const root = join(import.meta.dir, "../..");

beforeAll(async () => {
  t = await startTestPier();
  home = mkdtempSync(join(tmpdir(), "pier-cli-home-"));
});
afterAll(async () => {
  await t.stop();
  rmSync(home, { recursive: true, force: true });
});

const cli = (args: string[]) =>
  Bun.spawn([process.execPath, join(root, "src/main.ts"), ...args], {
    cwd: root, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, XDG_CONFIG_HOME: join(home, "cfg") }, stdout: "pipe", stderr: "pipe",
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
    expect((await t.api("DELETE", `/api/v1/oauth/connections/${conns.body.data.connections[0].id}`, {
      headers: { cookie, "x-pier-csrf": csrfToken(t.pier.deps, findSession(t.pier.deps, cookie.split("=")[1])!.id) },
    })).status).toBe(200);
    const who = cli(["whoami"]);
    expect(await who.exited).toBe(1);
    expect(await new Response(who.stderr).text()).toContain("revoked or expired");
  }, 40_000);

  test("bad arguments and unreachable servers fail cleanly", async () => {
    const bad = cli(["login", t.url, "--scope", "root"]);
    expect(await bad.exited).toBe(2);
    const down = cli(["login", "http://127.0.0.1:1", "--no-browser"]);
    expect(await down.exited).toBe(1);
    expect(await new Response(down.stderr).text()).toContain("pier login:");
  });
});

