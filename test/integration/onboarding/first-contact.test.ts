// The first ten minutes of a new self-hoster, server side: where `/` leads, the plan the
// instance's first user gets, what a plan refusal tells the user and the operator (and that the
// operator's command really lifts it), what the email gate says without a relay, and the
// validation messages and paging every list shares.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startupBanner } from "../../../src/cli/serve";
import { ownerPlanNote } from "../../../src/features/accounts/plan-help";
import { hashPassword, insertUserWithAccount, setPlan } from "../../../src/features/accounts/service";
import { Browser } from "../../helpers/browser";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { publishSite, siteFetch } from "../../helpers/sites";
import { pierCommand } from "../../helpers/cli";

const root = join(import.meta.dir, "../../..");
const SECRET = "test-secret-key-test-secret-key-test-secret-key";
const html = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };

async function signUp(t: TestPier, email: string) {
  const b = new Browser(t.url, html);
  const res = await b.submit("/signup", "/signup", { email, password: "a long enough password" });
  if (res.status !== 303) throw new Error(`sign-up: ${res.status} ${res.text.slice(0, 300)}`);
  return b;
}

/** Run `pier admin ...` as the operator would, against the test server's data dir. */
async function pierAdmin(t: TestPier, args: string[]) {
  const proc = Bun.spawn([...(await pierCommand()), "admin", ...args, "--data-dir", t.dataDir], {
    cwd: root,
    env: { ...process.env, PIER_SECRET_KEY: SECRET },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** "pier admin account plan --account X --plan Y" -> the arguments after "pier admin". */
function operatorArgs(hint: string): string[] {
  expect(hint).toStartWith("pier admin ");
  return hint.split(" ").slice(2);
}

describe("/ on the API host", () => {
  let t: TestPier;
  beforeAll(async () => {
    t = await startTestPier();
  });
  afterAll(() => t.stop());

  test("with no user yet, a browser is sent to sign-up and API clients get a JSON index", async () => {
    const page = await fetch(`${t.url}/`, { headers: html, redirect: "manual" });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe("/signup");
    expect(page.headers.get("vary")).toContain("accept");

    const r = await t.api("GET", "/");
    expect(r.status).toBe(200);
    const base = t.pier.deps.urls.baseUrl;
    expect(r.body.data).toMatchObject({
      name: "Pier",
      docs_url: `${base}/docs`,
      status_url: `${base}/api/v1/status`,
      signup_url: `${base}/signup`,
      setup_required: true,
    });
    // The links in the index work.
    expect((await fetch(r.body.data.status_url.replace(base, t.url))).status).toBe(200);
    // curl's default Accept is */*: JSON, not a redirect.
    const curl = await fetch(`${t.url}/`, { headers: { accept: "*/*" }, redirect: "manual" });
    expect(curl.status).toBe(200);
    expect(curl.headers.get("content-type")).toContain("application/json");
  });

  test("once someone signed up: signed-in browsers go to the dashboard, others to sign-in", async () => {
    const b = await signUp(t, "first@example.com");
    const signedIn = await b.get("/");
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe("/dashboard");

    const anonymous = await fetch(`${t.url}/`, { headers: html, redirect: "manual" });
    expect(anonymous.headers.get("location")).toBe("/signin");
    expect((await t.api("GET", "/")).body.data.setup_required).toBe(false);
  });
});

describe("the owner plan", () => {
  let t: TestPier;
  let dir: string;
  let ownerKey = "";
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "pier-plans-"));
    // Two buckets per account on Free, so the bucket limit is quick to reach.
    writeFileSync(join(dir, "plans.json"), JSON.stringify([{ id: "free", entitlements: { max_buckets: 2 } }]));
    t = await startTestPier({ secretKey: SECRET, plansFile: join(dir, "plans.json") });
  });
  afterAll(() => t.stop());

  test("the first user gets every capability; the next one the default plan", async () => {
    const owner = await signUp(t, "owner@example.com");
    const dash = await owner.get("/dashboard");
    expect(dash.text).toContain("<dt>Plan</dt><dd>Owner</dd>");
    expect(dash.text).toContain("Welcome to Pier");
    expect(dash.text).not.toContain("Welcome back");
    // Named API keys (not on Free) can be created from the dashboard right away.
    const made = await owner.submit("/dashboard/account/keys", "/dashboard/account/keys", { label: "ci", scope: "bucket_admin" });
    expect(made.status).toBe(303);
    ownerKey = /(pier_[a-z0-9]{40})/.exec((await owner.get(made.location!)).text)![1]!;

    const second = insertUserWithAccount(t.pier.deps, { email: "second@example.com", passwordHash: await hashPassword("another long password") });
    expect(second.account.plan).toBe("free");
    expect(second.user.isInstanceAdmin).toBe(false);
  });

  test("the owner publishes several sites, protected ones too, and has more than Free's buckets", async () => {
    expect(t.pier.deps.plans.get("owner").entitlements.site_renewal_days).toBe(0);
    for (const access of ["public", "public", "password", "require_email"]) {
      const b = await t.api("POST", "/api/v1/buckets", { key: ownerKey, body: { bucket: { title: `site ${access}` } } });
      expect(b.status).toBe(201);
      const r = await t.api("POST", `/api/v1/buckets/${b.body.data.bucket.id}/publication`, { key: ownerKey, body: { access_mode: access } });
      expect({ access, status: r.status }).toEqual({ access, status: 202 });
    }
  });

  test("each plan refusal says what to ask the operator, and the operator's command lifts it", async () => {
    const u: TestUser = await t.user({ email: "limited@example.com" });
    const first = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "one" } } });
    const second = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "two" } } });
    expect([first.status, second.status]).toEqual([201, 201]);

    // Every plan limit answers one way: 403 FORBIDDEN, reason plan_limit, the entitlement named.
    const full = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "three" } } });
    expect(full.status).toBe(403);
    expect(full.body.error).toMatchObject({ code: "FORBIDDEN", details: { reason: "plan_limit", entitlement: "max_buckets", suggested_plan: "pro" } });
    expect(full.body.error.details.ask_operator).toBe(`Ask the operator of this Pier instance to move account ${u.accountId} to the pro plan.`);
    expect(full.body.error.message).toContain(full.body.error.details.operator_hint);

    // Protected site on Free (PUBLICATION_UPGRADE_REQUIRED): the upgrade choice is the operator's command.
    const bucketId = first.body.data.bucket.id;
    const prot = await t.api("POST", `/api/v1/buckets/${bucketId}/publication`, { key: u.key, body: { access_mode: "password" } });
    expect(prot.status).toBe(402);
    expect(prot.body.error.code).toBe("PUBLICATION_UPGRADE_REQUIRED");
    const upgrade = prot.body.error.details.choices.find((c: { action: string }) => c.action === "upgrade");
    expect(upgrade.operator_hint).toBe(`pier admin account plan --account ${u.accountId} --plan pro`);
    expect(JSON.stringify(prot.body)).not.toContain("/dashboard/billing");

    // Named keys (a feature the plan lacks): the same code and reason.
    const key = await t.api("POST", "/api/v1/api_keys", { key: u.key, body: { label: "ci" } });
    expect(key.status).toBe(403);
    expect(key.body.error).toMatchObject({ code: "FORBIDDEN", details: { reason: "plan_limit", entitlement: "named_api_keys" } });
    expect(key.body.error.details.operator_hint).toBe(`pier admin account plan --account ${u.accountId} --plan pro`);

    // Live-site limit: Free has one live site.
    expect((await t.api("POST", `/api/v1/buckets/${bucketId}/publication`, { key: u.key, body: {} })).status).toBe(202);
    const otherId = second.body.data.bucket.id;
    const other = await t.api("POST", `/api/v1/buckets/${otherId}/publication`, { key: u.key, body: {} });
    expect(other.status).toBe(403);
    expect(other.body.error).toMatchObject({ code: "FORBIDDEN", details: { reason: "plan_limit", entitlement: "max_live_sites" } });
    expect(other.body.error.details.ask_operator).toContain("Ask the operator of this Pier instance");

    // The operator runs exactly the hint; every refusal above is lifted.
    const ran = await pierAdmin(t, operatorArgs(other.body.error.details.operator_hint));
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({ account_id: u.accountId, plan: "pro" });
    expect((await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "three" } } })).status).toBe(201);
    expect((await t.api("POST", `/api/v1/buckets/${otherId}/publication`, { key: u.key, body: {} })).status).toBe(202);
    expect((await t.api("POST", `/api/v1/buckets/${bucketId}/publication`, { key: u.key, body: { access_mode: "password" } })).status).toBe(202);
    expect((await t.api("POST", "/api/v1/api_keys", { key: u.key, body: { label: "ci" } })).status).toBe(201);
  }, 60_000);
});

describe("--owner-plan and data dirs from before the owner plan", () => {
  test("--owner-plan picks the first user's plan", async () => {
    const t = await startTestPier({ ownerPlan: "pro" });
    try {
      await signUp(t, "boss@example.com");
      const dash = await new Browser(t.url, html).get("/"); // signed out: sign-in, and a user exists
      expect(dash.location).toBe("/signin");
      const { plan } = t.pier.deps.sqlite.query<{ plan: string }, []>("SELECT plan FROM accounts").get()!;
      expect(plan).toBe("pro");
    } finally {
      await t.stop();
    }
  });

  test("an admin left on the default plan is not moved silently: the banner names the command", async () => {
    const t = await startTestPier();
    try {
      // As an older Pier created it: the first user on the default plan.
      const { account } = insertUserWithAccount(t.pier.deps, {
        email: "old@example.com",
        passwordHash: await hashPassword("an old long password"),
        plan: "free",
      });
      const note = ownerPlanNote(t.pier.deps)!;
      expect(note).toContain(`pier admin account plan --account ${account.id} --plan owner`);
      expect(startupBanner(t.pier)).toContain(`note: ${note}`);
      setPlan(t.pier.deps, account.id, "owner");
      expect(ownerPlanNote(t.pier.deps)).toBeNull();
      expect(startupBanner(t.pier)).not.toContain("note:");
    } finally {
      await t.stop();
    }
  });

  test("the banner of a fresh instance says what to open first", async () => {
    const t = await startTestPier();
    try {
      expect(startupBanner(t.pier)).toContain(`open ${t.pier.deps.urls.baseUrl}/ and sign up`);
      await signUp(t, "someone@example.com");
      expect(startupBanner(t.pier)).not.toContain("sign up");
    } finally {
      await t.stop();
    }
  });
});

describe("the email gate without a mail relay", () => {
  let t: TestPier;
  beforeAll(async () => {
    t = await startTestPier();
  });
  afterAll(() => t.stop());

  test("the owner is warned at publish time and when reading the publication; the banner names the outbox", async () => {
    const u = await t.user({ plan: "pro" });
    const b = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "members" } } });
    const r = await t.api("POST", `/api/v1/buckets/${b.body.data.bucket.id}/publication`, { key: u.key, body: { access_mode: "require_email" } });
    expect(r.status).toBe(202);
    const warnings = r.body.data.publication.warnings;
    expect(warnings).toEqual([expect.objectContaining({ code: "EMAIL_CODES_IN_OUTBOX", operator_hint: "pier admin mail outbox" })]);
    expect(warnings[0].message).toContain("recipient_links"); // what the owner can do without the operator
    const read = await t.api("GET", `/api/v1/publications/${r.body.data.publication.id}`, { key: u.key });
    expect(read.body.data.publication.warnings[0].code).toBe("EMAIL_CODES_IN_OUTBOX");
    // Public sites have nothing to warn about.
    const pub = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "open" } } });
    const open = await t.api("POST", `/api/v1/buckets/${pub.body.data.bucket.id}/publication`, { key: u.key, body: {} });
    expect(open.body.data.publication.warnings).toEqual([]);

    expect(startupBanner(t.pier)).toMatch(/^  Outbound mail +no relay: .*pier admin mail outbox/m);
  });

  test("the visitor is told to ask the site owner, never that a mail was sent", async () => {
    const site = await publishSite(t, { access: "require_email", files: [{ path: "index.html", bytes: "<h1>members</h1>" }] });
    const gate = await (await siteFetch(t, site.host, "/")).text();
    expect(gate).toContain("ask the site owner for your code");
    expect(gate).toContain("or for a personal link to the site, which needs no code");
    expect(gate).not.toContain("We will send you");
    const asked = await siteFetch(t, site.host, "/_pier/gate/email", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email: "v@example.com", next: "/" }).toString(),
    });
    expect(asked.status).toBe(200);
    const text = await asked.text();
    expect(text).toContain("Ask the site owner for your code");
    expect(text).toContain("or for a personal link to the site");
    expect(text).not.toContain("We sent");
    expect(text).not.toContain("Check your email");
  });

  test("with a relay configured, no warning and the page says the code is mailed", async () => {
    const relayed = await startTestPier({ smtpRelayUrl: "smtp://127.0.0.1:9" });
    try {
      const site = await publishSite(relayed, { access: "require_email", files: [{ path: "index.html", bytes: "<h1>m</h1>" }] });
      expect(await (await siteFetch(relayed, site.host, "/")).text()).toContain("We will send you a one-time code.");
      const u = await relayed.user({ plan: "pro" });
      const b = await relayed.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "m" } } });
      const r = await relayed.api("POST", `/api/v1/buckets/${b.body.data.bucket.id}/publication`, { key: u.key, body: { access_mode: "require_email" } });
      expect(r.body.data.publication.warnings).toEqual([]);
      expect(startupBanner(relayed.pier)).toMatch(/^  Outbound mail +relay smtp:\/\/127\.0\.0\.1:9 \(STARTTLS if the relay offers it\)$/m);
    } finally {
      await relayed.stop();
    }
  });
});

describe("validation messages and paging", () => {
  let t: TestPier;
  let u: TestUser;
  beforeAll(async () => {
    t = await startTestPier();
    u = await t.user({ plan: "pro" });
  });
  afterAll(() => t.stop());

  test("a bad enum value names the allowed values", async () => {
    const b = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "x" } } });
    const r = await t.api("POST", `/api/v1/buckets/${b.body.data.bucket.id}/publication`, { key: u.key, body: { access_mode: "secret" } });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("VALIDATION_FAILED");
    expect(r.body.error.message).toContain("should be one of: 'public', 'password', 'require_email'");
    expect(r.body.error.message).not.toContain("'string'");
    expect(r.body.error.details.fields).toEqual([expect.objectContaining({ path: "/access_mode", allowed: ["public", "password", "require_email"] })]);
    const q = await t.api("GET", "/api/v1/buckets?archived=maybe", { key: u.key });
    expect(q.status).toBe(422);
    expect(q.body.error.message).toContain("'archived' should be one of: 'true', 'false'");
  });

  test("buckets and publications page with limit/offset and answer pagination", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const b = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: `b${i}` } } });
      ids.push(b.body.data.bucket.id);
      await t.api("POST", `/api/v1/buckets/${b.body.data.bucket.id}/publication/preview`, { key: u.key, body: {} });
    }
    const total = (await t.api("GET", "/api/v1/buckets", { key: u.key })).body.data.pagination.total_count;
    expect(total).toBeGreaterThanOrEqual(6);
    const seen: string[] = [];
    for (let offset: number | null = 0; offset !== null; ) {
      const page = await t.api("GET", `/api/v1/buckets?limit=2&offset=${offset}`, { key: u.key });
      expect(page.status).toBe(200);
      expect(page.body.data.buckets.length).toBeLessThanOrEqual(2);
      expect(page.body.data.pagination).toMatchObject({ limit: 2, offset, total_count: total });
      seen.push(...page.body.data.buckets.map((b: { id: string }) => b.id));
      offset = page.body.data.pagination.next_offset;
    }
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
    for (const id of ids) expect(seen).toContain(id);

    const pubs = await t.api("GET", "/api/v1/publications?limit=3&include_manifest=false", { key: u.key });
    expect(pubs.status).toBe(200);
    expect(pubs.body.data.publications).toHaveLength(3);
    expect(pubs.body.data.pagination).toMatchObject({ limit: 3, offset: 0, total_count: 5, has_more: true, next_offset: 3 });
    const rest = await t.api("GET", "/api/v1/publications?limit=3&offset=3", { key: u.key });
    expect(rest.body.data.publications).toHaveLength(2);
    expect(rest.body.data.pagination).toMatchObject({ has_more: false, next_offset: null });
  });

  test("a key limited to selected buckets pages over those buckets only", async () => {
    const mine = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "selected" } } });
    const key = t.key(u, { scope: "bucket_read", bucketAccess: "selected", bucketPermissions: { [mine.body.data.bucket.id]: "read" } });
    const r = await t.api("GET", "/api/v1/buckets", { key });
    expect(r.body.data.buckets.map((b: { id: string }) => b.id)).toEqual([mine.body.data.bucket.id]);
    expect(r.body.data.pagination.total_count).toBe(1);
  });

  test("every list refuses limit/offset that are not whole numbers in range (422 naming the field, never 500)", async () => {
    const b = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "lists" } } });
    const id = b.body.data.bucket.id;
    const lists = [
      "/api/v1/buckets",
      "/api/v1/publications",
      `/api/v1/buckets/${id}/files`,
      `/api/v1/buckets/${id}/versions`,
      `/api/v1/buckets/${id}/inbound_email/messages`,
    ];
    const bad: Array<[string, string]> = [
      ["offset", "1e20"],
      ["offset", "1.5"],
      ["offset", "-1"],
      ["limit", "0"],
      ["limit", "1.5"],
      ["limit", "abc"],
      ["limit", "100000"],
    ];
    for (const path of lists) {
      for (const [field, value] of bad) {
        const r = await t.api("GET", `${path}?${field}=${value}`, { key: u.key });
        expect({ path, field, value, status: r.status }).toEqual({ path, field, value, status: 422 });
        expect(r.body.error.code).toBe("VALIDATION_FAILED");
        expect(r.body.error.details.fields[0].path).toBe(`/${field}`);
        expect(r.body.error.message).toContain(`'${field}' should be a whole number from`);
      }
    }
    for (const path of ["/api/v1/notifications", "/api/v1/agent_auth/activity"]) {
      const r = await t.api("GET", `${path}?limit=2.5`, { key: u.key });
      expect(r.status).toBe(422);
      expect(r.body.error.details.fields[0].path).toBe("/limit");
    }
  });
});
