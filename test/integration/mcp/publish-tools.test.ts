// Publishing through the hosted MCP tools with the official SDK client: files written with
// bucket_file_write, published with bucket_publish / bucket_preview, polled with
// publication_get after the runner drains, and served by the site server (Host header).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { addMember } from "../../../src/features/accounts/service";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { siteFetch } from "../../helpers/sites";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t.stop());

const drain = () => t.pier.runner.drain();
const host = (slug: string, preview = false) => `${preview ? "preview-" : ""}${slug}.${t.pier.deps.urls.sitesDomain}`;
const json = (r: any) => JSON.parse(r.content[0].text);
const err = (r: any) => (r.structuredContent as any).error;

async function connect(key: string) {
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(t.pier.deps.urls.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

async function siteBucket(client: Client, title: string, files: Record<string, string>): Promise<string> {
  const id = json(await client.callTool({ name: "bucket_create", arguments: { title } })).bucket.id;
  for (const [path, content] of Object.entries(files)) {
    const w = await client.callTool({ name: "bucket_file_write", arguments: { bucket_id: id, path, content } });
    if (w.isError) throw new Error((w.content as any)[0].text);
  }
  return id;
}

describe("publishing tools", () => {
  test("tools/list: the publishing tools tell agents to preview first and to poll", async () => {
    const client = await connect((await t.user()).key);
    const tools = (await client.listTools()).tools;
    const byName = new Map(tools.map((x) => [x.name, x]));
    for (const name of [
      "bucket_publish",
      "bucket_preview",
      "bucket_republish",
      "bucket_unpublish",
      "publication_get",
      "publication_deploys",
      "publication_rollback",
    ])
      expect(byName.has(name)).toBe(true);
    expect(byName.get("publication_rollback")!.description).toContain("files are NOT changed");
    expect(byName.get("bucket_publish")!.description).toContain("Preview first");
    expect(byName.get("bucket_publish")!.description).toContain("PUBLICATION_UPGRADE_REQUIRED");
    expect(byName.get("bucket_preview")!.description).toContain("before bucket_publish");
    expect(byName.get("publication_get")!.description).toContain("publish_state");
    const props = byName.get("bucket_publish")!.inputSchema.properties as Record<string, any>;
    for (const f of [
      "site_mode",
      "access_mode",
      "password",
      "regenerate_password",
      "expires_at",
      "publication_root_directory",
      "slug_suggestions",
      "tracking_enabled",
      "publication_analytics_enabled",
      "publication_client_events_enabled",
    ]) {
      expect(props[f]).toBeDefined();
    }
    expect((byName.get("bucket_preview")!.inputSchema.properties as any).expires_in_minutes).toMatchObject({ maximum: 43200 });
    await client.close();
  });

  test("preview, publish, serve, republish, unpublish: files written over MCP, same services as REST", async () => {
    const u = await t.user({ plan: "pro" });
    const client = await connect(u.key);
    const id = await siteBucket(client, "Agent Site", { "index.html": "<h1>agent home</h1>", "app.js": "console.log(1)" });

    // Preview first: password protected, its own preview-<slug> host, noindex.
    const pv = await client.callTool({
      name: "bucket_preview",
      arguments: { bucket_id: id, access_mode: "password", password: "let me in", expires_in_minutes: 60, slug_suggestions: ["agent-site"] },
    });
    expect(pv.isError).toBeFalsy();
    expect(json(pv).publication).toMatchObject({ kind: "preview", preview: true, publish_state: "queued", publish_pending: true, access_mode: "password" });
    expect(json(pv).publication.access_password).toBeUndefined();
    await drain();
    const preview = json(await client.callTool({ name: "publication_get", arguments: { bucket_id: id, kind: "preview" } })).publication;
    expect(preview).toMatchObject({
      publish_state: "ready",
      status: "published",
      access_password: "let me in",
      share_text: expect.stringContaining("let me in"),
    });
    expect(Date.parse(preview.expires_at) - t.clock.now().getTime()).toBeLessThanOrEqual(60 * 60_000);
    const gated = await siteFetch(t, host(preview.public_slug, true), "/");
    expect(gated.status).toBe(401);
    expect(await gated.text()).not.toContain("agent home");

    // The main site, as a SPA; the immediate answer never holds secrets.
    const r = await client.callTool({
      name: "bucket_publish",
      arguments: { bucket_id: id, site_mode: "spa", slug_suggestions: ["Agent Site"], analytics_enabled: false },
    });
    expect(r.isError).toBeFalsy();
    const queued = json(r).publication;
    expect(queued).toMatchObject({
      kind: "main",
      status: "publishing",
      publish_state: "queued",
      publish_pending: true,
      site_mode: "spa",
      public_slug: "agent-site",
      publication_analytics_enabled: false,
    });
    expect(queued.share_text).toBeUndefined();
    expect((await siteFetch(t, host("agent-site"), "/")).status).toBe(404);
    await drain();
    const ready = json(await client.callTool({ name: "publication_get", arguments: { publication_id: queued.id, include_manifest: true } })).publication;
    expect(ready).toMatchObject({
      publish_state: "ready",
      status: "published",
      publish_pending: false,
      published_files_count: 2,
      share_text: expect.stringContaining(queued.public_url),
    });
    expect(ready.manifest.map((f: any) => f.path)).toEqual(["app.js", "index.html"]);
    expect(await (await siteFetch(t, host("agent-site"), "/")).text()).toBe("<h1>agent home</h1>");
    expect(await (await siteFetch(t, host("agent-site"), "/deep/link")).text()).toBe("<h1>agent home</h1>");
    // The preview was not touched, and REST sees the same publication.
    expect((await siteFetch(t, host(preview.public_slug, true), "/")).status).toBe(401);
    const rest = await t.api("GET", `/api/v1/publications/${queued.id}?include_manifest=false`, { key: u.key });
    expect(rest.body.data.publication).toMatchObject({ id: queued.id, publish_state: "ready", site_mode: "spa" });
    expect(json(await client.callTool({ name: "publication_get", arguments: { bucket_id: id } })).publication.id).toBe(queued.id);

    // Republish re-runs the saved request and picks up file changes; settings are kept.
    await client.callTool({ name: "bucket_file_write", arguments: { bucket_id: id, path: "index.html", content: "<h1>v2</h1>" } });
    expect(await (await siteFetch(t, host("agent-site"), "/")).text()).toBe("<h1>agent home</h1>");
    const again = json(await client.callTool({ name: "bucket_republish", arguments: { bucket_id: id } }));
    expect(again).toMatchObject({ action: "republish", publication: { id: queued.id, publish_state: "queued", site_mode: "spa" } });
    await drain();
    expect(await (await siteFetch(t, host("agent-site"), "/")).text()).toBe("<h1>v2</h1>");
    expect(json(await client.callTool({ name: "publication_get", arguments: { publication_id: queued.id } })).publication).toMatchObject({
      publish_state: "ready",
      site_mode: "spa",
      publication_analytics_enabled: false,
    });

    // Unpublish: 404 at once, the bucket can then be deleted.
    const b0 = json(await client.callTool({ name: "bucket_get", arguments: { bucket_id: id } })).bucket;
    expect(err(await client.callTool({ name: "bucket_delete", arguments: { bucket_id: id, confirmation: b0.delete.confirmation } })).code).toBe(
      "UNPUBLISH_FIRST",
    );
    const un = json(await client.callTool({ name: "bucket_unpublish", arguments: { bucket_id: id } }));
    expect(un).toMatchObject({ changed: true, publication: { status: "unpublishing", publish_state: "unpublishing" } });
    expect((await siteFetch(t, host("agent-site"), "/")).status).toBe(404);
    expect((await siteFetch(t, host(preview.public_slug, true), "/")).status).toBe(404);
    await drain();
    expect(json(await client.callTool({ name: "publication_get", arguments: { publication_id: queued.id } })).publication).toMatchObject({
      status: "unpublished",
      published_files_count: 0,
    });
    expect(json(await client.callTool({ name: "bucket_unpublish", arguments: { bucket_id: id } })).changed).toBe(false);
    const b = json(await client.callTool({ name: "bucket_get", arguments: { bucket_id: id } })).bucket;
    expect(json(await client.callTool({ name: "bucket_delete", arguments: { bucket_id: id, confirmation: b.delete.confirmation } })).deleted).toBe(true);
    await client.close();
  });

  test("a failed build is retried by bucket_republish with the saved request", async () => {
    const u = await t.user({ plan: "pro" });
    const client = await connect(u.key);
    const id = await siteBucket(client, "Empty At First", { "node_modules/x.js": "never published" });
    const first = json(await client.callTool({ name: "bucket_publish", arguments: { bucket_id: id, site_mode: "spa" } })).publication;
    await drain();
    const failed = json(await client.callTool({ name: "publication_get", arguments: { publication_id: first.id } })).publication;
    expect(failed).toMatchObject({ publish_state: "failed", publish_error: expect.stringContaining("Nothing to publish") });
    await client.callTool({ name: "bucket_file_write", arguments: { bucket_id: id, path: "index.html", content: "<p>now</p>" } });
    const retried = json(await client.callTool({ name: "bucket_republish", arguments: { bucket_id: id } }));
    expect(retried).toMatchObject({ action: "retry", publication: { publish_state: "queued", site_mode: "spa" } });
    await drain();
    const ready = json(await client.callTool({ name: "publication_get", arguments: { publication_id: first.id } })).publication;
    expect(ready.publish_state).toBe("ready");
    expect(await (await siteFetch(t, host(ready.public_slug), "/")).text()).toBe("<p>now</p>");
    await client.close();
  });

  test("a failed preview is retried by bucket_republish with kind preview, then republished with its saved settings", async () => {
    const u = await t.user({ plan: "pro" });
    const client = await connect(u.key);
    const id = await siteBucket(client, "Preview Empty At First", { "node_modules/x.js": "never published" });
    const first = json(await client.callTool({ name: "bucket_preview", arguments: { bucket_id: id, expires_in_minutes: 90 } })).publication;
    await drain();
    expect(json(await client.callTool({ name: "publication_get", arguments: { publication_id: first.id } })).publication.publish_state).toBe("failed");
    // The main site was never published: the preview is the bucket's only publication.
    expect(err(await client.callTool({ name: "bucket_republish", arguments: { bucket_id: id } })).code).toBe("PUBLICATION_NOT_FOUND");
    await client.callTool({ name: "bucket_file_write", arguments: { bucket_id: id, path: "index.html", content: "<p>preview</p>" } });
    const retried = json(await client.callTool({ name: "bucket_republish", arguments: { bucket_id: id, kind: "preview" } }));
    expect(retried).toMatchObject({ action: "retry", publication: { id: first.id, kind: "preview", publish_state: "queued" } });
    await drain();
    const ready = json(await client.callTool({ name: "publication_get", arguments: { bucket_id: id, kind: "preview" } })).publication;
    expect(ready.publish_state).toBe("ready");
    expect(await (await siteFetch(t, host(ready.public_slug, true), "/")).text()).toBe("<p>preview</p>");
    const again = json(await client.callTool({ name: "bucket_republish", arguments: { bucket_id: id, kind: "preview" } }));
    expect(again).toMatchObject({ action: "republish", publication: { id: first.id, kind: "preview", publish_state: "queued" } });
    // Its saved lifetime (90 minutes), not the default 15.
    expect(Date.parse(again.publication.expires_at) - Date.now()).toBeGreaterThan(80 * 60_000);
    await client.close();
  });

  test("Free plan: a protected publish is refused with the choices as tools; a protected preview works", async () => {
    const u = await t.user();
    const client = await connect(u.key);
    const id = await siteBucket(client, "Free Site", { "index.html": "<h1>free</h1>" });
    const r = await client.callTool({ name: "bucket_publish", arguments: { bucket_id: id, access_mode: "password", password: "secret123" } });
    expect(r.isError).toBe(true);
    expect((r.content as any)[0].text).toStartWith("PUBLICATION_UPGRADE_REQUIRED:");
    const e = err(r);
    expect(e.code).toBe("PUBLICATION_UPGRADE_REQUIRED");
    expect(e.hint).toContain("preview");
    expect(e.details.requested_access_mode).toBe("password");
    expect(e.details.choices.map((c: any) => c.action)).toEqual(["preview", "upgrade", "public"]);
    expect(e.details.choices[0]).toMatchObject({ tool: "bucket_preview", arguments: { bucket_id: id, access_mode: "password" } });
    expect(e.details.choices[2]).toMatchObject({ tool: "bucket_publish", arguments: { bucket_id: id, access_mode: "public" } });
    // Nothing was published, and nothing fell back to public.
    expect(err(await client.callTool({ name: "publication_get", arguments: { bucket_id: id } })).code).toBe("PUBLICATION_NOT_FOUND");
    expect((await t.api("GET", "/api/v1/publications", { key: u.key })).body.data.publications).toEqual([]);

    const pv = await client.callTool({ name: "bucket_preview", arguments: { bucket_id: id, ...e.details.choices[0].arguments, password: "secret123" } });
    expect(pv.isError).toBeFalsy();
    await drain();
    const preview = json(await client.callTool({ name: "publication_get", arguments: { bucket_id: id, kind: "preview" } })).publication;
    expect(preview).toMatchObject({ publish_state: "ready", access_mode: "password", access_password: "secret123" });
    expect((await siteFetch(t, host(preview.public_slug, true), "/")).status).toBe(401);
    await client.close();
  });

  test("scopes: a bucket_read key reads publications but cannot publish; nothing changes", async () => {
    const u = await t.user({ plan: "pro" });
    const owner = await connect(u.key);
    const id = await siteBucket(owner, "Scoped", { "index.html": "<h1>scoped</h1>" });
    const pub = json(await owner.callTool({ name: "bucket_publish", arguments: { bucket_id: id } })).publication;
    await drain();
    await owner.close();

    const reader = await connect(t.key(u, { scope: "bucket_read" }));
    expect(json(await reader.callTool({ name: "publication_get", arguments: { publication_id: pub.id } })).publication.publish_state).toBe("ready");
    for (const call of [
      { name: "bucket_publish", arguments: { bucket_id: id, site_mode: "spa" } },
      { name: "bucket_preview", arguments: { bucket_id: id } },
      { name: "bucket_republish", arguments: { bucket_id: id } },
      { name: "bucket_unpublish", arguments: { bucket_id: id } },
    ]) {
      const r = await reader.callTool(call);
      expect(r.isError).toBe(true);
      expect(err(r)).toMatchObject({ code: "FORBIDDEN", details: { required_scope: "bucket_admin" } });
    }
    await reader.close();
    const writer = await connect(t.key(u, { scope: "bucket_write" }));
    expect(err(await writer.callTool({ name: "bucket_publish", arguments: { bucket_id: id } })).code).toBe("FORBIDDEN");
    await writer.close();
    await drain();
    const after = (await t.api("GET", `/api/v1/publications/${pub.id}?include_manifest=false`, { key: u.key })).body.data.publication;
    expect(after).toMatchObject({ status: "published", publish_state: "ready", site_mode: "static" });
    expect((t.pier.deps.sqlite.query("SELECT count(*) AS n FROM publications WHERE bucket_id = ?").get(id) as { n: number }).n).toBe(1);
    expect(await (await siteFetch(t, host(pub.public_slug), "/")).text()).toBe("<h1>scoped</h1>");
  });

  test("secrets only for account owners: an admin member sees no access_password or share_text", async () => {
    const owner = await t.user({ plan: "pro" });
    const admin = await t.user();
    addMember(t.pier.deps, owner.accountId, admin.userId, "admin");
    const o = await connect(owner.key);
    const id = await siteBucket(o, "Team Locked", { "index.html": "<h1>team</h1>" });
    const pub = json(await o.callTool({ name: "bucket_publish", arguments: { bucket_id: id, access_mode: "password" } })).publication;
    await drain();
    const mine = json(await o.callTool({ name: "publication_get", arguments: { publication_id: pub.id } })).publication;
    expect(mine.access_password).toMatch(/.{6,}/);
    expect(mine.generated_password).toBe(mine.access_password);
    await o.close();
    const a = await connect(admin.key);
    const theirs = json(await a.callTool({ name: "publication_get", arguments: { publication_id: pub.id, account_id: owner.accountId } })).publication;
    expect(theirs).toMatchObject({ publish_state: "ready", access_mode: "password", password_configured: true });
    expect(theirs.access_password).toBeUndefined();
    expect(theirs.share_text).toBeUndefined();
    await a.close();
  });

  test("bad input: documented codes, nothing published", async () => {
    const u = await t.user({ plan: "pro" });
    const client = await connect(u.key);
    const id = await siteBucket(client, "Bad Input", { "index.html": "<h1>x</h1>" });
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["bucket_publish", { bucket_id: id, site_mode: "weird" }, "VALIDATION_FAILED"],
      ["bucket_publish", { bucket_id: id, access_mode: "public", password: "secret123" }, "VALIDATION_FAILED"],
      ["bucket_publish", { bucket_id: id, expires_at: "tomorrow" }, "VALIDATION_FAILED"],
      ["bucket_publish", { bucket_id: id, expires_at: "2001-01-01T00:00:00Z" }, "VALIDATION_FAILED"],
      ["bucket_publish", { bucket_id: id, publication_root_directory: "../up" }, "VALIDATION_FAILED"],
      ["bucket_publish", { bucket_id: id, unknown_field: true }, "VALIDATION_FAILED"],
      ["bucket_publish", { bucket_id: "bkt_doesnotexist" }, "BUCKET_NOT_FOUND"],
      ["bucket_preview", { bucket_id: id, expires_in_minutes: 0 }, "VALIDATION_FAILED"],
      ["bucket_preview", { bucket_id: id, expires_in_minutes: 43201 }, "VALIDATION_FAILED"],
      ["bucket_republish", { bucket_id: id }, "PUBLICATION_NOT_FOUND"],
      ["bucket_unpublish", { bucket_id: id }, "PUBLICATION_NOT_FOUND"],
      ["publication_get", {}, "VALIDATION_FAILED"],
      ["publication_get", { bucket_id: id, publication_id: "pub_abc" }, "VALIDATION_FAILED"],
      ["publication_get", { publication_id: "pub_abc", kind: "preview" }, "VALIDATION_FAILED"],
      ["publication_get", { publication_id: "pub_doesnotexist" }, "PUBLICATION_NOT_FOUND"],
      ["publication_get", { bucket_id: id }, "PUBLICATION_NOT_FOUND"],
    ];
    for (const [name, args, code] of cases) {
      const r = await client.callTool({ name, arguments: args });
      expect([name, JSON.stringify(args), r.isError, err(r)?.code]).toEqual([name, JSON.stringify(args), true, code]);
    }
    expect((await t.api("GET", "/api/v1/publications", { key: u.key })).body.data.publications).toEqual([]);

    // Another account's bucket and publication are not found, and stay as they were.
    const other = await t.user({ plan: "pro" });
    const oc = await connect(other.key);
    const theirs = await siteBucket(oc, "Theirs", { "index.html": "<h1>theirs</h1>" });
    const tp = json(await oc.callTool({ name: "bucket_publish", arguments: { bucket_id: theirs } })).publication;
    await drain();
    await oc.close();
    expect(err(await client.callTool({ name: "bucket_unpublish", arguments: { bucket_id: theirs } })).code).toBe("BUCKET_NOT_FOUND");
    expect(err(await client.callTool({ name: "publication_get", arguments: { publication_id: tp.id } })).code).toBe("PUBLICATION_NOT_FOUND");
    expect(err(await client.callTool({ name: "publication_get", arguments: { bucket_id: theirs } })).code).toBe("BUCKET_NOT_FOUND");
    expect(await (await siteFetch(t, host(tp.public_slug), "/")).text()).toBe("<h1>theirs</h1>");
    await client.close();
  });
});

describe("deploy history over MCP", () => {
  test("publication_deploys lists builds (trigger mcp), publication_rollback switches the site and back; a read key cannot roll back", async () => {
    const u = await t.user({ plan: "pro" });
    const client = await connect(u.key);
    const id = await siteBucket(client, "Agent Rollback", { "index.html": "<h1>agent v1</h1>" });
    const first = json(await client.callTool({ name: "bucket_publish", arguments: { bucket_id: id } })).publication;
    await drain();
    await client.callTool({ name: "bucket_file_write", arguments: { bucket_id: id, path: "index.html", content: "<h1>agent v2</h1>" } });
    await client.callTool({ name: "bucket_republish", arguments: { bucket_id: id } });
    await drain();
    const slug = first.public_slug;
    expect(await (await siteFetch(t, host(slug), "/")).text()).toBe("<h1>agent v2</h1>");

    const listed = json(await client.callTool({ name: "publication_deploys", arguments: { publication_id: first.id } }));
    expect(listed.deploys.map((d: any) => [d.trigger, d.live])).toEqual([
      ["mcp", true],
      ["mcp", false],
    ]);
    const back = json(await client.callTool({ name: "publication_rollback", arguments: { publication_id: first.id } }));
    expect(back).toMatchObject({ changed: true, deploy: { id: listed.deploys[1].id, live: true }, publication: { rolled_back_from: listed.deploys[0].id } });
    expect(await (await siteFetch(t, host(slug), "/")).text()).toBe("<h1>agent v1</h1>");
    // The bucket file is still the second version.
    const read = json(await client.callTool({ name: "bucket_file_read", arguments: { bucket_id: id, path: "index.html" } }));
    expect(JSON.stringify(read)).toContain("agent v2");
    const forward = json(await client.callTool({ name: "publication_rollback", arguments: { publication_id: first.id, deploy_id: listed.deploys[0].id } }));
    expect(forward.publication.deploy_id).toBe(listed.deploys[0].id);
    expect(await (await siteFetch(t, host(slug), "/")).text()).toBe("<h1>agent v2</h1>");

    const unknown = await client.callTool({ name: "publication_rollback", arguments: { publication_id: first.id, deploy_id: "dpl_unknown" } });
    expect(err(unknown).code).toBe("DEPLOY_NOT_FOUND");
    await client.close();

    const reader = await connect(t.key(u, { scope: "bucket_read" }));
    expect(json(await reader.callTool({ name: "publication_deploys", arguments: { publication_id: first.id } })).deploys.length).toBe(2);
    const denied = await reader.callTool({ name: "publication_rollback", arguments: { publication_id: first.id, deploy_id: listed.deploys[1].id } });
    expect(err(denied).code).toBe("FORBIDDEN");
    await reader.close();
    expect(await (await siteFetch(t, host(slug), "/")).text()).toBe("<h1>agent v2</h1>");
  });
});

describe("publish rate limit", () => {
  test("PUBLISH_RATE_LIMIT_EXCEEDED: 429 with Retry-After on REST, details.retry_after over MCP; nothing queued", async () => {
    const limited = await startTestPier({ publishRateLimitPerMinute: 2 });
    try {
      const u = await limited.user({ plan: "pro" });
      const id = (await limited.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "Busy Publisher" } } })).body.data.bucket.id;
      for (let i = 0; i < 2; i++) expect((await limited.api("POST", `/api/v1/buckets/${id}/publication/preview`, { key: u.key, body: {} })).status).toBe(202);
      const jobsBefore = (limited.pier.deps.sqlite.query("SELECT count(*) AS n FROM jobs WHERE kind = 'publish.build'").get() as { n: number }).n;
      const rest = await limited.api("POST", `/api/v1/buckets/${id}/publication`, { key: u.key, body: {} });
      expect([rest.status, rest.body.error.code]).toEqual([429, "PUBLISH_RATE_LIMIT_EXCEEDED"]);
      expect(Number(rest.headers.get("retry-after"))).toBeGreaterThan(0);
      const client = new Client({ name: "test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(limited.pier.deps.urls.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${u.key}` } } }),
      );
      const r = await client.callTool({ name: "bucket_publish", arguments: { bucket_id: id } });
      expect(err(r)).toMatchObject({ code: "PUBLISH_RATE_LIMIT_EXCEEDED", details: { retry_after: expect.any(Number) } });
      await client.close();
      expect((limited.pier.deps.sqlite.query("SELECT count(*) AS n FROM jobs WHERE kind = 'publish.build'").get() as { n: number }).n).toBe(jobsBefore);
      expect((await limited.api("GET", "/api/v1/publications", { key: u.key })).body.data.publications.map((p: any) => p.kind)).toEqual(["preview"]);
    } finally {
      await limited.stop();
    }
  });
});
