// `pier admin` as operators run it: a subprocess against the data dir of a running Pier, whose
// printed keys and codes are then used against that server over HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { countUsers } from "../../../src/features/accounts/service";
import { Browser } from "../../helpers/browser";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { pierCommand } from "../../helpers/cli";

const root = join(import.meta.dir, "../../..");
const SECRET = "test-secret-key-test-secret-key-test-secret-key";
let t: TestPier;

async function pier(args: string[], opts: { env?: Record<string, string>; stdin?: string } = {}) {
  const proc = Bun.spawn([...(await pierCommand()), "admin", ...args, "--data-dir", t.dataDir], {
    cwd: root,
    env: { ...process.env, PIER_SECRET_KEY: SECRET, PIER_ADMIN_PASSWORD: "", ...opts.env },
    stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code, lines: stdout.split("\n").filter(Boolean) };
}

beforeAll(async () => {
  t = await startTestPier({ secretKey: SECRET });
});
afterAll(() => t.stop());

describe("pier admin bootstrap", () => {
  test("creates user and account, prints only a new owner bucket_admin key, and is idempotent", async () => {
    const first = await pier(["bootstrap", "--email", "ops@example.com", "--password", "bootstrap password"]);
    expect(first.code).toBe(0);
    expect(first.lines).toHaveLength(1);
    expect(first.stdout).toMatch(/^pier_[a-z0-9]{40}\n$/);
    expect(first.stderr).toContain("created user ops@example.com");
    expect(first.stderr).toContain("Warning: --password puts the password in the process list");
    const key1 = first.lines[0]!;
    const status = await t.api("GET", "/api/v1/agent_auth/status", { key: key1 });
    expect(status.status).toBe(200);
    expect(status.body.data.account).toMatchObject({ permission_scope: "bucket_admin", read_only: false });
    expect((await t.api("POST", "/api/v1/buckets", { key: key1, body: { bucket: { title: "from bootstrap" } } })).status).toBe(201);
    const usersBefore = countUsers(t.pier.deps);

    const again = await pier(["bootstrap", "--email", "ops@example.com", "--password", "bootstrap password"]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("found user ops@example.com");
    const key2 = again.lines[0]!;
    expect(key2).not.toBe(key1);
    expect(countUsers(t.pier.deps)).toBe(usersBefore);
    const s2 = await t.api("GET", "/api/v1/agent_auth/status", { key: key2 });
    expect(s2.body.data.account.id).toBe(status.body.data.account.id);
    // Both keys work; the bucket made with the first is visible to the second.
    const list = await t.api("GET", "/api/v1/buckets", { key: key2 });
    expect(list.body.data.buckets.map((b: { title: string }) => b.title)).toContain("from bootstrap");
    // The first user of the instance is instance admin and can sign in in a browser.
    const b = new Browser(t.url);
    expect((await b.submit("/signin", "/signin", { email: "ops@example.com", password: "bootstrap password" })).status).toBe(303);
    expect((await b.get("/dashboard")).text).toContain("instance admin");
  });

  test("takes the password from PIER_ADMIN_PASSWORD or standard input, and applies --plan", async () => {
    // Two users, two commands: they run at once.
    const [env, stdin] = await Promise.all([
      pier(["bootstrap", "--email", "env@example.com", "--plan", "pro"], { env: { PIER_ADMIN_PASSWORD: "password from env" } }),
      pier(["bootstrap", "--email", "stdin@example.com", "--password-stdin"], { stdin: "password from stdin\n" }),
    ]);
    expect(env.code).toBe(0);
    const named = await t.api("POST", "/api/v1/api_keys", { key: env.lines[0]!, body: { label: "pro feature" } });
    expect(named.status).toBe(201);
    expect(stdin.code).toBe(0);
    expect([env.stderr, stdin.stderr].some((e) => e.includes("--password puts"))).toBe(false);
    for (const [email, password] of [
      ["env@example.com", "password from env"],
      ["stdin@example.com", "password from stdin"],
    ]) {
      expect((await new Browser(t.url).submit("/signin", "/signin", { email: email!, password: password! })).status).toBe(303);
    }
  });

  test("bad input exits non-zero with a message, prints nothing on stdout and creates nothing", async () => {
    const before = countUsers(t.pier.deps);
    const [noPassword, badPlan, weak, unknown, both] = await Promise.all([
      pier(["bootstrap", "--email", "nopw@example.com"]),
      pier(["bootstrap", "--email", "plan@example.com", "--password", "long password 1", "--plan", "gold"]),
      pier(["bootstrap", "--email", "weak@example.com", "--password", "short"]),
      pier(["bootstrap", "--email", "x@example.com", "--pasword", "typo typo typo"]),
      pier(["bootstrap", "--email", "both@example.com", "--password", "long password 1", "--password-stdin"], { stdin: "long password 2\n" }),
    ]);
    expect(noPassword.code).toBe(2);
    expect(noPassword.stderr).toContain("PIER_ADMIN_PASSWORD");
    expect(badPlan.code).toBe(1);
    expect(badPlan.stderr).toContain('Unknown plan "gold"');
    expect(weak.code).toBe(1);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown option --pasword");
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("not both");
    for (const r of [noPassword, badPlan, weak, unknown, both]) expect(r.stdout).toBe("");
    expect(countUsers(t.pier.deps)).toBe(before);
  });
});

describe("pier admin users, accounts, keys, plans and invites", () => {
  test("user create, account create, key create with a scope; the key has exactly that scope", async () => {
    const u = await pier(["user", "create", "--email", "dev@example.com", "--password", "developer password"]);
    expect(u.code).toBe(0);
    const created = JSON.parse(u.stdout);
    expect(created).toMatchObject({ email: "dev@example.com", instance_admin: false, plan: "free" });
    const acc = await pier(["account", "create", "--name", "Team", "--owner", "dev@example.com", "--plan", "pro"]);
    expect(acc.code).toBe(0);
    const team = JSON.parse(acc.stdout);
    expect(team).toMatchObject({ name: "Team", plan: "pro" });
    const k = await pier(["key", "create", "--email", "dev@example.com", "--account", team.account_id, "--scope", "bucket_read", "--label", "reader"]);
    expect(k.code).toBe(0);
    expect(k.lines).toHaveLength(1);
    const key = k.lines[0]!;
    const s = await t.api("GET", "/api/v1/agent_auth/status", { key });
    expect(s.body.data.account).toMatchObject({ id: team.account_id, permission_scope: "bucket_read" });
    expect((await t.api("GET", "/api/v1/buckets", { key })).status).toBe(200);
    expect((await t.api("POST", "/api/v1/buckets", { key, body: { bucket: { title: "x" } } })).status).toBe(403);
    // Without --account the key is for the user's own first account.
    const [own, stranger] = await Promise.all([
      pier(["key", "create", "--email", "dev@example.com"]),
      pier(["key", "create", "--email", "ops@example.com", "--account", team.account_id]),
    ]);
    const s2 = await t.api("GET", "/api/v1/agent_auth/status", { key: own.lines[0]! });
    expect(s2.body.data.account.id).toBe(created.account_id);
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toContain("not a member");
  });

  test("account plan switches entitlements for the running server", async () => {
    const u = await t.user();
    expect((await t.api("POST", "/api/v1/api_keys", { key: u.key, body: { label: "x" } })).status).toBe(403);
    const r = await pier(["account", "plan", "--account", u.accountId, "--plan", "pro"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ account_id: u.accountId, plan: "pro" });
    expect((await t.api("POST", "/api/v1/api_keys", { key: u.key, body: { label: "x" } })).status).toBe(201);
    const [bad, missing] = await Promise.all([
      pier(["account", "plan", "--account", u.accountId, "--plan", "gold"]),
      pier(["account", "plan", "--account", "acc_doesnotexist", "--plan", "pro"]),
    ]);
    expect(bad.code).toBe(1);
    expect(missing.code).toBe(1);
  });

  test("account read-only: mutations get 403 ACCOUNT_READ_ONLY with read_only true, reads work, --off restores", async () => {
    const u = await t.user();
    const on = await pier(["account", "read-only", "--account", u.accountId, "--reason", "abuse report"]);
    expect(on.code).toBe(0);
    expect(JSON.parse(on.stdout)).toEqual({ account_id: u.accountId, read_only: true, reason: "abuse report" });
    const write = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "blocked" } } });
    expect(write.status).toBe(403);
    expect(write.body.error.code).toBe("ACCOUNT_READ_ONLY");
    expect(write.body.error.details.read_only).toBe(true);
    const read = await t.api("GET", "/api/v1/buckets", { key: u.key });
    expect(read.status).toBe(200);
    expect(read.body.data.buckets).toEqual([]);
    const status = await t.api("GET", "/api/v1/agent_auth/status", { key: u.key });
    expect(status.body.data.account.read_only).toBe(true);
    const off = await pier(["account", "read-only", "--account", u.accountId, "--off"]);
    expect(off.code).toBe(0);
    expect((await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "allowed" } } })).status).toBe(201);
  });

  test("invite create prints a code that lets one person sign up in invite mode", async () => {
    const inv = await pier(["invite", "create", "--email", "guest@example.com"]);
    expect(inv.code).toBe(0);
    expect(inv.lines).toHaveLength(1);
    expect(inv.stderr).toContain("/signup?invite=");
    const b = new Browser(t.url);
    const res = await b.submit(`/signup?invite=${inv.lines[0]}`, "/signup", { email: "guest@example.com", password: "guest password", invite: inv.lines[0]! });
    expect(res.status).toBe(303);
    const reuse = await new Browser(t.url).submit("/signup", "/signup", { email: "guest2@example.com", password: "guest password", invite: inv.lines[0]! });
    expect(reuse.status).toBe(403);
  });

  test("plans prints the catalogue; user password resets the password and ends sessions", async () => {
    // The catalogue comes while the user signs in.
    const plansRun = pier(["plans"]);
    const u = await t.user();
    const b = new Browser(t.url);
    await b.submit("/signin", "/signin", { email: u.email, password: u.password });
    const plans = await plansRun;
    expect(plans.code).toBe(0);
    const list = JSON.parse(plans.stdout);
    expect(list.map((p: { id: string }) => p.id)).toEqual(["free", "pro", "owner"]);
    expect(list[0]).toMatchObject({ default: true, entitlements: { named_api_keys: false, max_live_sites: 1 } });

    expect((await b.get("/dashboard")).status).toBe(200);
    const r = await pier(["user", "password", "--email", u.email, "--password-stdin"], { stdin: "a brand new password" });
    expect(r.code).toBe(0);
    expect((await b.get("/dashboard")).status).toBe(303);
    expect((await new Browser(t.url).submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(401);
    expect((await new Browser(t.url).submit("/signin", "/signin", { email: u.email, password: "a brand new password" })).status).toBe(303);
  });

  test("mail outbox shows the messages kept without an SMTP relay: an operator reads an agent's login code", async () => {
    const empty = await pier(["mail", "outbox"]);
    expect([empty.code, empty.stdout]).toEqual([0, ""]);
    expect(empty.stderr).toContain("outbox is empty");

    const u = await t.user();
    expect((await t.api("POST", "/api/v1/agent_auth/request_code", { body: { email: u.email } })).status).toBe(200);
    let lines: string[] = [];
    for (let i = 0; i < 50 && !lines.length; i++, await Bun.sleep(20)) lines = (await pier(["mail", "outbox", "--limit", "1"])).lines;
    expect(lines).toHaveLength(1);
    const msg = JSON.parse(lines[0]!);
    expect(msg).toMatchObject({ kind: "agent-login-code", to: u.email, subject: expect.any(String), created_at: expect.any(String) });
    const code = /\b(\d{8})\b/.exec(msg.text)![1]!;
    const verified = await t.api("POST", "/api/v1/agent_auth/verify_code", { body: { email: u.email, code, label: "from the outbox" } });
    expect(verified.status).toBe(200);
    expect(verified.body.data.api_key).toMatch(/^pier_/);

    const badLimits = await Promise.all(["0", "501", "ten"].map((limit) => pier(["mail", "outbox", "--limit", limit])));
    for (const r of badLimits) expect(r.code).toBe(2);
  });

  test("help and unknown commands", async () => {
    const [help, unknown] = await Promise.all([pier(["--help"]), pier(["frobnicate"])]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("bootstrap --email E");
    expect(unknown.code).toBe(2);
  });
});
