// The hosted MCP server through the official SDK client: discovery from the 401, dynamic
// registration, authorization code + PKCE approved on the consent page, then tool calls.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import pkg from "../../../package.json";
import { ConfigError, loadConfig } from "../../../src/config";
import { addMember, setReadOnly } from "../../../src/features/accounts/service";
import { MemoryOAuthProvider } from "../../helpers/mcp";
import { consent, sessionCookie } from "../../helpers/oauth";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
let mcpUrl: URL;
beforeAll(async () => {
  t = await startTestPier();
  mcpUrl = new URL(t.pier.deps.urls.mcpUrl);
});
afterAll(() => t.stop());

/** Connect the SDK client by URL alone, approving the consent page as `u`. */
async function connectWithOAuth(u: TestUser, provider = new MemoryOAuthProvider()) {
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await expect(new Client({ name: "test", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrl).toBeDefined();
  const location = new URL(await consent(t, sessionCookie(t, u), provider.authorizationUrl!));
  expect(location.origin + location.pathname).toBe(provider.redirectUrl);
  expect(location.searchParams.get("state")).toBe(provider.authorizationUrl!.searchParams.get("state"));
  await first.finishAuth(location.searchParams.get("code")!);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  return { client, provider };
}

async function connectWithKey(key: string) {
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

const json = (r: any) => JSON.parse(r.content[0].text);

describe("hosted MCP", () => {
  test("an SDK client connects by URL: OAuth discovery, registration, PKCE consent, tools", async () => {
    const u = await t.user();
    const { client, provider } = await connectWithOAuth(u);
    expect(provider.info!.client_id).toMatch(/^mcp_client_/);
    expect(provider.saved!.access_token).toMatch(/^pier_at_/);
    expect(client.getServerVersion()).toMatchObject({ name: "pier", version: pkg.version });

    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual([
      "analytics_get",
      "bucket_archive",
      "bucket_create",
      "bucket_delete",
      "bucket_file_list",
      "bucket_file_read",
      "bucket_file_write",
      "bucket_get",
      "bucket_list",
      "bucket_preview",
      "bucket_publish",
      "bucket_republish",
      "bucket_unarchive",
      "bucket_unpublish",
      "bucket_update",
      "custom_domain_add",
      "custom_domain_get",
      "custom_domain_list",
      "custom_domain_refresh",
      "custom_domain_remove",
      "form_submission_get",
      "form_submission_list",
      "form_submission_reply",
      "inbound_email_get",
      "pier_status",
      "publication_deploys",
      "publication_get",
      "publication_rollback",
    ]);
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe("object");
    }

    const status = await client.callTool({ name: "pier_status", arguments: {} });
    expect(json(status).mcp.server_version).toBe(pkg.version);
    expect(json(status).account.id).toBe(u.accountId);

    const created = await client.callTool({ name: "bucket_create", arguments: { title: "Notes", tag_paths: ["website"] } });
    expect(created.isError).toBeFalsy();
    const id = json(created).bucket.id;
    expect(id).toMatch(/^bkt_/);
    const updated = await client.callTool({ name: "bucket_update", arguments: { bucket_id: id, title: "Renamed" } });
    expect(json(updated).bucket.title).toBe("Renamed");
    // Same service as REST: the REST API sees the change.
    const rest = await t.api("GET", `/api/v1/buckets/${id}`, { key: u.key });
    expect(rest.body.data.bucket.title).toBe("Renamed");
    const listed = await client.callTool({ name: "bucket_list", arguments: {} });
    expect(json(listed).buckets.map((b: any) => b.id)).toEqual([id]);
    expect(json(listed).pagination).toMatchObject({ total_count: 1, has_more: false, next_offset: null });
    // Paged like REST: two more buckets, pages of two, newest first, the same order as REST.
    for (const title of ["Second", "Third"]) await client.callTool({ name: "bucket_create", arguments: { title } });
    const first = json(await client.callTool({ name: "bucket_list", arguments: { limit: 2 } }));
    expect(first.buckets.map((b: any) => b.title)).toEqual(["Third", "Second"]);
    expect(first.pagination).toMatchObject({ limit: 2, total_count: 3, has_more: true, next_offset: 2 });
    const second = json(await client.callTool({ name: "bucket_list", arguments: { limit: 2, offset: first.pagination.next_offset } }));
    expect(second.buckets.map((b: any) => b.id)).toEqual([id]);
    expect(second.pagination.has_more).toBe(false);
    expect(json(await client.callTool({ name: "bucket_list", arguments: { tag: "website" } })).buckets.map((b: any) => b.id)).toEqual([id]);
    expect((await client.callTool({ name: "bucket_list", arguments: { limit: 0 } })).isError).toBe(true);
    // An offset past what SQLite takes is refused as bad input, not answered with an internal error.
    const farOff = await client.callTool({ name: "bucket_list", arguments: { offset: 1e20 } });
    expect(farOff.isError).toBe(true);
    expect((farOff.structuredContent as any).error.code).toBe("VALIDATION_FAILED");
    const got = await client.callTool({ name: "bucket_get", arguments: { bucket_id: id } });
    expect(json(got).bucket).toMatchObject({ id, delete: { allowed: true }, github_sync_setup: { settings_url: expect.any(String) } });

    // Lifecycle: archive makes it read-only, unarchive restores, delete needs the phrase.
    expect(json(await client.callTool({ name: "bucket_archive", arguments: { bucket_id: id } }))).toMatchObject({ changed: true, bucket: { archived: true } });
    const frozen = await client.callTool({ name: "bucket_update", arguments: { bucket_id: id, title: "nope" } });
    expect((frozen.structuredContent as any).error.code).toBe("BUCKET_ARCHIVED");
    expect(json(await client.callTool({ name: "bucket_unarchive", arguments: { bucket_id: id } }))).toMatchObject({
      changed: true,
      bucket: { archived: false },
    });
    const wrong = await client.callTool({ name: "bucket_delete", arguments: { bucket_id: id, confirmation: "yes" } });
    expect((wrong.structuredContent as any).error.code).toBe("CONFIRMATION_MISMATCH");
    const gone = await client.callTool({ name: "bucket_delete", arguments: { bucket_id: id, confirmation: json(got).bucket.delete.confirmation } });
    expect(json(gone)).toMatchObject({ deleted: true, bucket: { id } });
    expect((await t.api("GET", `/api/v1/buckets/${id}`, { key: u.key })).status).toBe(404);
    await client.close();
  });

  test("an expired access token is refreshed by the SDK client on its own", async () => {
    const u = await t.user();
    const { client, provider } = await connectWithOAuth(u);
    const before = provider.saved!.access_token;
    t.clock.advance(3601_000);
    const status = await client.callTool({ name: "pier_status", arguments: {} });
    expect(json(status).account.id).toBe(u.accountId);
    expect(provider.saved!.access_token).not.toBe(before);
    expect((await t.api("GET", "/api/v1/buckets", { key: before })).status).toBe(401);
    await client.close();
  });

  test("a 401 without a token points at the protected resource metadata, whose resource is the MCP URL", async () => {
    const res = await fetch(mcpUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{}",
    });
    expect(res.status).toBe(401);
    const header = res.headers.get("www-authenticate")!;
    const metaUrl = /resource_metadata="([^"]+)"/.exec(header)![1]!;
    expect(metaUrl).toBe(`${t.pier.deps.urls.baseUrl}/.well-known/oauth-protected-resource/mcp`);
    const meta = await (await fetch(metaUrl)).json();
    expect(meta.resource).toBe(mcpUrl.href);
    expect(meta.authorization_servers).toEqual([t.pier.deps.urls.baseUrl]);
    const bad = await fetch(mcpUrl, { method: "POST", headers: { authorization: "Bearer pier_at_nope", "content-type": "application/json" }, body: "{}" });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect((await fetch(mcpUrl)).status).toBe(405);
    expect((await fetch(mcpUrl, { method: "DELETE" })).status).toBe(405);
  });

  test("API keys work too, and scopes are enforced as on REST", async () => {
    const u = await t.user();
    const readKey = t.key(u, { scope: "bucket_read" });
    const client = await connectWithKey(readKey);
    const denied = await client.callTool({ name: "bucket_create", arguments: { title: "x" } });
    expect(denied.isError).toBe(true);
    expect((denied.content as any)[0].text).toStartWith("FORBIDDEN:");
    expect((denied.structuredContent as any).error.code).toBe("FORBIDDEN");
    expect((await t.api("GET", "/api/v1/buckets", { key: u.key })).body.data.buckets).toEqual([]);
    const a = (await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "A" } } })).body.data.bucket.id;
    const b = (await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "B" } } })).body.data.bucket.id;
    const upd = await client.callTool({ name: "bucket_update", arguments: { bucket_id: a, title: "changed" } });
    expect((upd.structuredContent as any).error.code).toBe("FORBIDDEN");
    await client.close();

    // A key limited to selected buckets sees exactly those, as on REST.
    const selected = await connectWithKey(t.key(u, { scope: "bucket_admin", bucketAccess: "selected", bucketPermissions: { [a]: "write" } }));
    expect(json(await selected.callTool({ name: "bucket_list", arguments: {} })).buckets.map((x: any) => x.id)).toEqual([a]);
    const hidden = await selected.callTool({ name: "bucket_get", arguments: { bucket_id: b } });
    expect((hidden.structuredContent as any).error.code).toBe("BUCKET_NOT_FOUND");
    const tooLittle = await selected.callTool({ name: "bucket_update", arguments: { bucket_id: a, title: "changed" } });
    expect((tooLittle.structuredContent as any).error.code).toBe("FORBIDDEN");
    expect((await t.api("GET", `/api/v1/buckets/${a}`, { key: u.key })).body.data.bucket.title).toBe("A");
    await selected.close();
  });

  test("another account's bucket is not found, and nothing changes", async () => {
    const owner = await t.user();
    const other = await t.user();
    const mine = await t.api("POST", "/api/v1/buckets", { key: owner.key, body: { bucket: { title: "Private" } } });
    const id = mine.body.data.bucket.id;
    const { client } = await connectWithOAuth(other);
    for (const call of [
      { name: "bucket_get", arguments: { bucket_id: id } },
      { name: "bucket_update", arguments: { bucket_id: id, title: "pwned" } },
    ]) {
      const r = await client.callTool(call);
      expect(r.isError).toBe(true);
      expect((r.structuredContent as any).error.code).toBe("BUCKET_NOT_FOUND");
    }
    expect((await t.api("GET", `/api/v1/buckets/${id}`, { key: owner.key })).body.data.bucket.title).toBe("Private");
    await client.close();
  });

  test("unknown tools, bad and oversized arguments, malformed JSON-RPC", async () => {
    const u = await t.user();
    const client = await connectWithKey(u.key);
    await expect(client.callTool({ name: "bucket_explode", arguments: {} })).rejects.toThrow(/Unknown tool/);
    const bad = await client.callTool({ name: "bucket_create", arguments: { title: 42 } });
    expect(bad.isError).toBe(true);
    expect((bad.structuredContent as any).error.code).toBe("VALIDATION_FAILED");
    const long = await client.callTool({ name: "bucket_create", arguments: { title: "x".repeat(201) } });
    expect((long.structuredContent as any).error.code).toBe("VALIDATION_FAILED");
    await expect(client.callTool({ name: "bucket_create", arguments: { title: "big", description: "y".repeat(1_200_000) } })).rejects.toThrow();
    expect((await t.api("GET", "/api/v1/buckets", { key: u.key })).body.data.buckets).toEqual([]);
    await client.close();

    const post = (body: string) =>
      fetch(mcpUrl, {
        method: "POST",
        body,
        headers: { authorization: `Bearer ${u.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      });
    const parse = await post("{not json");
    expect(parse.status).toBe(400);
    expect((await parse.json()).error.code).toBe(-32700);
    const notRpc = await post(JSON.stringify({ hello: "world" }));
    expect(notRpc.status).toBe(400);
    expect((await notRpc.json()).error.code).toBeLessThan(0);
    const huge = await post(
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bucket_create", arguments: { title: "z".repeat(1_100_000) } } }),
    );
    expect(huge.status).toBe(413);
  });

  test("a 1 MiB argument with 500,000 invalid elements is refused without walking them all, even from a read key", async () => {
    const u = await t.user();
    const readKey = t.key(u, { scope: "bucket_read" });
    // tag_paths wants at most 50 strings: every 0 is an error of its own. Listing all of them
    // took about 0.7 s of the event loop per call (and ~100 MiB), before the scope was checked.
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "bucket_create", arguments: { title: "x", tag_paths: Array(500_000).fill(0) } },
    });
    expect(body.length).toBeLessThan(1024 * 1024);
    const call = () =>
      fetch(mcpUrl, {
        method: "POST",
        body,
        headers: { authorization: `Bearer ${readKey}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      });
    const inFlight = [call(), call(), call()];
    await Bun.sleep(1);
    const t0 = performance.now();
    expect((await fetch(`${t.url}/api/v1/status`)).status).toBe(200);
    const waited = performance.now() - t0;
    for (const res of await Promise.all(inFlight)) {
      const r = (await res.json()) as any;
      expect(r.result.structuredContent.error.code).toBe("VALIDATION_FAILED");
      expect(r.result.structuredContent.error.details.fields.length).toBeLessThanOrEqual(20);
    }
    // Three such calls held everyone else for ~2 s; 1 s leaves room for a busy CI machine.
    expect(waited).toBeLessThan(1000);
  });
});

describe("file tools", () => {
  test("write, list and read text files; binary refused; scopes and foreign buckets as on REST", async () => {
    const u = await t.user();
    const id = (await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "Site" } } })).body.data.bucket.id;
    const client = await connectWithKey(u.key);
    const html = "<!doctype html><h1>Hello ✓</h1>\n";
    const w = await client.callTool({ name: "bucket_file_write", arguments: { bucket_id: id, path: "index.html", content: html } });
    expect(w.isError).toBeFalsy();
    expect(json(w)).toMatchObject({ changed: true, file: { path: "index.html", content_type: expect.stringContaining("text/html") } });
    await client.callTool({ name: "bucket_file_write", arguments: { bucket_id: id, path: "docs/notes.md", content: "# Notes" } });

    const list = json(await client.callTool({ name: "bucket_file_list", arguments: { bucket_id: id } }));
    expect(list.files.map((f: any) => f.path)).toEqual(["docs/notes.md", "index.html"]);
    expect(json(await client.callTool({ name: "bucket_file_list", arguments: { bucket_id: id, q: "docs/" } })).files).toHaveLength(1);
    const read = json(await client.callTool({ name: "bucket_file_read", arguments: { bucket_id: id, path: "index.html" } }));
    expect(read).toMatchObject({ encoding: "utf-8", content: html, file: { lock: null } });
    // A lock taken over REST shows in the MCP read, as in GET /files/:id.
    const locked = await t.api("POST", `/api/v1/buckets/${id}/files/lock`, { key: u.key, body: { paths: ["index.html"], message: "editing the hero" } });
    expect(locked.status).toBe(200);
    const readLocked = json(await client.callTool({ name: "bucket_file_read", arguments: { bucket_id: id, path: "index.html" } }));
    expect(readLocked.file.lock).toMatchObject({ message: "editing the hero", held_by_you: true });
    await t.api("DELETE", `/api/v1/buckets/${id}/files/${readLocked.file.id}/lock`, { key: u.key });
    // The REST API sees the same file.
    const rest = await t.api("GET", `/api/v1/buckets/${id}/files`, { key: u.key });
    expect(rest.body.data.files.find((f: any) => f.path === "index.html").byte_size).toBe(new TextEncoder().encode(html).byteLength);

    const png = await client.callTool({ name: "bucket_file_write", arguments: { bucket_id: id, path: "logo.png", content: "not really a png" } });
    expect((png.structuredContent as any).error.code).toBe("NOT_TEXT_FILE");
    expect((png.content as any)[0].text).toContain("pier push");
    const escape = await client.callTool({ name: "bucket_file_write", arguments: { bucket_id: id, path: "../etc/passwd", content: "x" } });
    expect(escape.isError).toBe(true);
    const missing = await client.callTool({ name: "bucket_file_read", arguments: { bucket_id: id, path: "nope.txt" } });
    expect((missing.structuredContent as any).error.code).toBe("FILE_NOT_FOUND");
    await client.close();

    const reader = await connectWithKey(t.key(u, { scope: "bucket_read" }));
    const denied = await reader.callTool({ name: "bucket_file_write", arguments: { bucket_id: id, path: "index.html", content: "changed" } });
    expect((denied.structuredContent as any).error.code).toBe("FORBIDDEN");
    expect(json(await reader.callTool({ name: "bucket_file_read", arguments: { bucket_id: id, path: "index.html" } })).content).toBe(html);
    await reader.close();

    const stranger = await connectWithKey((await t.user()).key);
    const pwned = `pwned ${crypto.randomUUID()}`;
    for (const call of [
      { name: "bucket_file_list", arguments: { bucket_id: id } },
      { name: "bucket_file_read", arguments: { bucket_id: id, path: "index.html" } },
      { name: "bucket_file_write", arguments: { bucket_id: id, path: "index.html", content: pwned } },
    ])
      expect(((await stranger.callTool(call)).structuredContent as any).error.code).toBe("BUCKET_NOT_FOUND");
    await stranger.close();
    // A refused write stores nothing (it would sit on disk a day before the collector may take it).
    expect(await t.pier.deps.blobs.has(new Bun.CryptoHasher("sha256").update(pwned).digest("hex"))).toBe(false);
    expect((await t.api("GET", "/api/v1/buckets/" + id + "/files", { key: u.key })).body.data.files).toHaveLength(2);
  });
});

describe("one presenter per resource", () => {
  /** The answer's structure: keys and value types, without ids, times or counts. */
  const shapeOf = (v: unknown): unknown =>
    v === null
      ? null
      : Array.isArray(v)
        ? v.map(shapeOf)
        : typeof v === "object"
          ? Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, shapeOf(x)]))
          : typeof v;

  test("REST and MCP answer archive, unarchive, delete and a text write with the same shapes", async () => {
    const u = await t.user({ plan: "pro" });
    const client = await connectWithKey(u.key);
    const newBucket = async () =>
      (await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "same shape" } } })).body.data.bucket.id as string;
    const [viaRest, viaMcp] = [await newBucket(), await newBucket()];
    const tool = async (name: string, args: Record<string, unknown>) => json(await client.callTool({ name, arguments: args }));

    for (const action of ["archive", "unarchive"]) {
      const rest = await t.api("POST", `/api/v1/buckets/${viaRest}/${action}`, { key: u.key, body: {} });
      const mcp = await tool(`bucket_${action}`, { bucket_id: viaMcp });
      expect(rest.body.data.changed).toBe(true);
      expect(shapeOf(mcp)).toEqual(shapeOf(rest.body.data));
    }

    const appended = await t.api("POST", `/api/v1/buckets/${viaRest}/files/append_text`, { key: u.key, body: { path: "notes.md", text: "hi", create: true } });
    const written = await tool("bucket_file_write", { bucket_id: viaMcp, path: "notes.md", content: "hi" });
    expect(appended.status).toBe(200);
    const { changed, ...writeAnswer } = written;
    expect(changed).toBe(true);
    expect(shapeOf(writeAnswer)).toEqual(shapeOf(appended.body.data));

    const restDelete = await t.api("DELETE", `/api/v1/buckets/${viaRest}`, { key: u.key, body: { confirmation: `delete ${viaRest}` } });
    const mcpDelete = await tool("bucket_delete", { bucket_id: viaMcp, confirmation: `delete ${viaMcp}` });
    expect(restDelete.body.data.deleted).toBe(true);
    expect(shapeOf(mcpDelete)).toEqual(shapeOf(restDelete.body.data));
    await client.close();
  });
});

describe("account selection", () => {
  test("account_id switches to another account the user belongs to, capped by the role there", async () => {
    const a = await t.user();
    const b = await t.user();
    addMember(t.pier.deps, b.accountId, a.userId, "member");
    const theirs = (await t.api("POST", "/api/v1/buckets", { key: b.key, body: { bucket: { title: "Team bucket" } } })).body.data.bucket.id;
    const client = await connectWithKey(a.key);
    const tools = (await client.listTools()).tools;
    expect(tools.every((x) => (x.inputSchema.properties as any).account_id)).toBe(true);
    expect(json(await client.callTool({ name: "bucket_list", arguments: {} })).buckets).toEqual([]);
    const team = json(await client.callTool({ name: "bucket_list", arguments: { account_id: b.accountId } }));
    expect(team.buckets.map((x: any) => x.id)).toEqual([theirs]);
    const status = json(await client.callTool({ name: "pier_status", arguments: { account_id: b.accountId } }));
    expect(status.account).toMatchObject({ id: b.accountId, permission_scope: "bucket_write" });
    const create = await client.callTool({ name: "bucket_create", arguments: { account_id: b.accountId, title: "nope" } });
    expect((create.structuredContent as any).error.code).toBe("FORBIDDEN");
    const stranger = await client.callTool({ name: "bucket_list", arguments: { account_id: (await t.user()).accountId } });
    expect((stranger.structuredContent as any).error.code).toBe("FORBIDDEN");
    await client.close();
  });
});

describe("read-only accounts", () => {
  test("reads keep working over MCP, writes answer ACCOUNT_READ_ONLY", async () => {
    const u = await t.user();
    const id = (await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "Frozen" } } })).body.data.bucket.id;
    setReadOnly(t.pier.deps, u.accountId, true, "billing");
    const client = await connectWithKey(u.key);
    expect(json(await client.callTool({ name: "bucket_list", arguments: {} })).buckets).toHaveLength(1);
    const w = await client.callTool({ name: "bucket_update", arguments: { bucket_id: id, title: "x" } });
    expect((w.structuredContent as any).error).toMatchObject({ code: "ACCOUNT_READ_ONLY", details: { read_only: true } });
    await client.close();
  });
});

describe("behind a reverse proxy", () => {
  test("mcp-resource-url sets the advertised resource and the 401's metadata pointer", async () => {
    const p = await startTestPier({ mcpResourceUrl: "https://tunnel.example.net/pier/mcp" });
    try {
      const res = await fetch(`${p.url}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain('resource_metadata="https://tunnel.example.net/.well-known/oauth-protected-resource/pier/mcp"');
      for (const path of [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource/pier/mcp",
      ]) {
        const meta = await (await fetch(p.url + path)).json();
        expect(meta.resource).toBe("https://tunnel.example.net/pier/mcp");
      }
      const status = await p.api("GET", "/api/v1/status");
      expect(status.body.data.urls.mcp_url).toBe("https://tunnel.example.net/pier/mcp");
    } finally {
      await p.stop();
    }
  });
});

describe("browser-based MCP clients", () => {
  test("CORS preflight and headers on the MCP and OAuth endpoints (no cookies involved)", async () => {
    for (const path of ["/mcp", "/oauth/token", "/oauth/register", "/.well-known/oauth-protected-resource/mcp"]) {
      const pre = await fetch(`${t.url}${path}`, {
        method: "OPTIONS",
        headers: {
          origin: "http://inspector.localhost:6274",
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, content-type",
        },
      });
      expect(pre.status).toBe(204);
      expect(pre.headers.get("access-control-allow-origin")).toBe("*");
      expect(pre.headers.get("access-control-allow-headers")).toContain("authorization");
      expect(pre.headers.get("access-control-allow-credentials")).toBeNull();
    }
    const res = await fetch(mcpUrl, { method: "POST", headers: { origin: "http://inspector.localhost:6274", "content-type": "application/json" }, body: "{}" });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-expose-headers")).toContain("www-authenticate");
  });
});

describe("the account's request budget", () => {
  test("each tool call of a JSON-RPC batch pays, on the account it acts in, as a REST request does", async () => {
    const small = await startTestPier({ rateLimitPerMinute: 5 });
    try {
      const post = (key: string, messages: unknown[]) =>
        fetch(`${small.url}/mcp`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify(messages),
        });
      const calls = (n: number, args: Record<string, unknown> = {}) =>
        Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "tools/call", params: { name: "bucket_list", arguments: args } }));
      const codes = async (res: Response) => {
        expect(res.status).toBe(200);
        return ((await res.json()) as any[]).sort((x, y) => x.id - y.id).map((r) => (r.result.isError ? r.result.structuredContent.error.code : "ok"));
      };
      const restStatus = async (key: string) => (await small.api("GET", "/api/v1/buckets", { key })).status;

      // Ten calls in one POST on a budget of five a minute: the POST's own unit paid for the
      // first, four more fit, the rest are refused; and REST is refused too.
      const a = await small.user();
      expect(await codes(await post(a.key, calls(10)))).toEqual([...Array(5).fill("ok"), ...Array(5).fill("RATE_LIMIT_EXCEEDED")]);
      expect(await restStatus(a.key)).toBe(429);

      // Calls acting in another account draw on that account's budget: the caller paid one unit
      // for the POST, the team account five for the calls.
      const caller = await small.user();
      const team = await small.user();
      addMember(small.pier.deps, team.accountId, caller.userId, "member");
      expect(await codes(await post(caller.key, calls(6, { account_id: team.accountId })))).toEqual([...Array(5).fill("ok"), "RATE_LIMIT_EXCEEDED"]);
      expect(await restStatus(team.key)).toBe(429);
      expect(await restStatus(caller.key)).toBe(200);
    } finally {
      await small.stop();
    }
  });
});

describe("one POST's answers", () => {
  test("a batch's tool calls share one answer budget: a kilobyte of calls cannot build hundreds of megabytes", async () => {
    // 100 reads of a 512 KiB file in one batch answered 249 MB (text and structuredContent each
    // hold the content, the text JSON-escaped twice), took ~700 MB of memory and held the event
    // loop 2 s; as 100 REST reads they would have been streamed one at a time.
    const u = await t.user({ plan: "pro" });
    const id = await newBucket(t, u.key, "Batch Reads");
    expect((await directUpload(t, u.key, id, textFile("big.txt", "x".repeat(512 * 1024)))).status).toBe(201);
    const calls = Array.from({ length: 20 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: { name: "bucket_file_read", arguments: { bucket_id: id, path: "big.txt" } },
    }));
    const res = await fetch(mcpUrl, {
      method: "POST",
      headers: { authorization: `Bearer ${u.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify(calls),
    });
    const text = await res.text();
    expect(text.length).toBeLessThan(12_000_000);
    const answers = (JSON.parse(text) as any[]).sort((x, y) => x.id - y.id);
    const codes = answers.map((r) => (r.result.isError ? r.result.structuredContent.error.code : "ok"));
    expect(codes[0]).toBe("ok");
    expect(codes.filter((c) => c === "MCP_ANSWER_TOO_LARGE").length).toBeGreaterThan(10);
    // The refusal says what to do.
    expect(answers.find((r) => r.result.isError).result.structuredContent.error.message).toContain("another request");
  });
});

describe("configuration", () => {
  test("mcp-resource-url must be an absolute http(s) URL", () => {
    expect(loadConfig({ PIER_MCP_RESOURCE_URL: "https://x.example/mcp/" }).mcpResourceUrl).toBe("https://x.example/mcp");
    expect(loadConfig({}).mcpResourceUrl).toBeNull();
    for (const bad of ["ftp://x.example/mcp", "/mcp", "https://x.example/mcp?a=1"]) {
      expect(() => loadConfig({ PIER_MCP_RESOURCE_URL: bad })).toThrow(ConfigError);
    }
  });
});
