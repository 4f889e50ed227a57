// Device authorization (RFC 8628) driven by a standards client library (oauth4webapi), with
// the approval done on the real page by a signed-in session.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as oauth from "oauth4webapi";
import { decideDevice, discoverAndRegister, insecure, page, sessionCookie } from "../../helpers/oauth";
import { adminSetDisabled } from "../../../src/features/accounts/admin";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
const DEVICE = "urn:ietf:params:oauth:grant-type:device_code";

beforeAll(async () => {
  t = await startTestPier();
  ({ as, client } = await discoverAndRegister(t, {
    client_name: "pier-cli test",
    grant_types: [DEVICE, "refresh_token"],
    token_endpoint_auth_method: "none",
  }));
});
afterAll(() => t.stop());

async function start(scope = "pier:mcp") {
  const res = await oauth.deviceAuthorizationRequest(as, client, oauth.None(), { scope, resource: t.pier.deps.urls.mcpUrl }, insecure);
  return oauth.processDeviceAuthorizationResponse(as, client, res);
}

async function poll(deviceCode: string) {
  const res = await oauth.deviceCodeGrantRequest(as, client, oauth.None(), deviceCode, insecure);
  return oauth.processDeviceCodeResponse(as, client, res);
}

async function pollError(deviceCode: string): Promise<oauth.ResponseBodyError> {
  try {
    await poll(deviceCode);
  } catch (e) {
    if (e instanceof oauth.ResponseBodyError) return e;
    throw e;
  }
  throw new Error("poll unexpectedly succeeded");
}

describe("device flow", () => {
  test("metadata advertises the device endpoint, S256 and public clients", () => {
    expect(as.device_authorization_endpoint).toBe(`${t.pier.deps.urls.baseUrl}/oauth/device_authorization`);
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);
    expect(as.token_endpoint_auth_methods_supported).toEqual(["none"]);
    expect(client.client_id).toMatch(/^mcp_client_[a-z0-9]+$/);
  });

  test("approve in the browser: tokens plus a durable pier_api_key that works on REST", async () => {
    const u = await t.user();
    const d = await start();
    expect(d.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(d.verification_uri).toBe(`${t.pier.deps.urls.baseUrl}/oauth/device`);
    expect(d.verification_uri_complete).toContain(encodeURIComponent(d.user_code));
    expect(d.interval).toBe(5);
    expect(d.expires_in).toBe(600);

    expect((await pollError(d.device_code)).error).toBe("authorization_pending");

    const cookie = sessionCookie(t, u);
    const shown = await page(d.verification_uri_complete!.replace(t.pier.deps.urls.baseUrl, t.url), cookie);
    const html = await shown.text();
    expect(html).toContain('id="connection-id"');
    expect(html).toContain(d.user_code);
    expect(html).toContain("Confirm Connection");
    expect(html).toContain("Deny");

    const approved = await decideDevice(t, cookie, d.verification_uri_complete!);
    expect(approved.status).toBe(200);
    expect(await approved.text()).toContain("Connection confirmed");

    t.clock.advance(5000);
    const tokens = await poll(d.device_code);
    expect(tokens.token_type).toBe("bearer");
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe("pier:mcp bucket_admin");
    expect(tokens.refresh_token).toMatch(/^pier_rt_/);
    const key = tokens.pier_api_key as string;
    expect(key).toMatch(/^pier_/);

    for (const bearer of [key, tokens.access_token]) {
      const r = await t.api("GET", "/api/v1/agent_auth/status", { key: bearer });
      expect(r.status).toBe(200);
      expect(r.body.data.account.id).toBe(u.accountId);
    }
    // Device code, tokens and key are stored as hashes only: none appears in any table.
    const db = t.pier.deps.sqlite;
    const everything = db
      .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all()
      .map(({ name }) => JSON.stringify(db.query(`SELECT * FROM "${name}"`).all()))
      .join("\n");
    for (const secret of [d.device_code, tokens.access_token, tokens.refresh_token!, key]) expect(everything.includes(secret)).toBe(false);
    expect(everything.includes(client.client_id)).toBe(true);

    // Neither reaches another account's bucket: not found by id, refused by account_id, unchanged.
    const other = await t.user();
    const theirs = (await t.api("POST", "/api/v1/buckets", { key: other.key, body: { bucket: { title: "Theirs" } } })).body.data.bucket.id;
    for (const bearer of [key, tokens.access_token]) {
      const get = await t.api("GET", `/api/v1/buckets/${theirs}`, { key: bearer });
      expect([get.status, get.body.error.code]).toEqual([404, "BUCKET_NOT_FOUND"]);
      const patch = await t.api("PATCH", `/api/v1/buckets/${theirs}`, { key: bearer, body: { bucket: { title: "pwned" } } });
      expect([patch.status, patch.body.error.code]).toEqual([404, "BUCKET_NOT_FOUND"]);
      const switched = await t.api("PATCH", `/api/v1/buckets/${theirs}`, { key: bearer, body: { bucket: { title: "pwned" }, account_id: other.accountId } });
      expect([switched.status, switched.body.error.code]).toEqual([403, "FORBIDDEN"]);
    }
    expect((await t.api("GET", `/api/v1/buckets/${theirs}`, { key: other.key })).body.data.bucket.title).toBe("Theirs");

    // The device code works once.
    t.clock.advance(5000);
    expect((await pollError(d.device_code)).error).toBe("invalid_grant");

    // The connection is listed and revocable; then token and key fail with 401.
    const list = await t.api("GET", "/api/v1/oauth/connections", { headers: { cookie } });
    expect(list.status).toBe(200);
    const conn = list.body.data.connections.find((c: any) => c.client_id === client.client_id);
    expect(conn).toMatchObject({ client_name: "pier-cli test", permission_scope: "bucket_admin", flow: "device_code" });
    expect(conn.last_used_at).not.toBeNull();
    const csrf = (await (await page(`${t.url}/oauth/connections`, cookie)).text()).match(/name="csrf" value="([^"]+)"/)![1]!;
    const revoked = await t.api("DELETE", `/api/v1/oauth/connections/${conn.id}`, { headers: { cookie, "x-pier-csrf": csrf } });
    expect(revoked.status).toBe(200);
    for (const bearer of [key, tokens.access_token]) {
      const r = await t.api("GET", "/api/v1/buckets", { key: bearer });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe("UNAUTHORIZED");
    }
    const refreshed = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure);
    expect(refreshed.status).toBe(400);
    expect((await refreshed.json()).error).toBe("invalid_grant");
  });

  test("a requested permission scope narrows the connection and its key", async () => {
    const u = await t.user();
    const d = await start("pier:mcp bucket_read");
    await decideDevice(t, sessionCookie(t, u), d.verification_uri_complete!);
    const tokens = await poll(d.device_code);
    expect(tokens.scope).toBe("pier:mcp bucket_read");
    const created = await t.api("POST", "/api/v1/buckets", { key: tokens.pier_api_key as string, body: { bucket: { title: "nope" } } });
    expect(created.status).toBe(403);
    const viaToken = await t.api("POST", "/api/v1/buckets", { key: tokens.access_token, body: { bucket: { title: "nope" } } });
    expect(viaToken.status).toBe(403);
    expect((await t.api("GET", "/api/v1/buckets", { key: tokens.access_token })).status).toBe(200);
  });

  test("revoking the device login's pier_api_key under API keys ends its connection: tokens and refresh too", async () => {
    const u = await t.user();
    const d = await start();
    await decideDevice(t, sessionCookie(t, u), d.verification_uri_complete!);
    const tokens = await poll(d.device_code);
    const keys = (await t.api("GET", "/api/v1/api_keys", { key: u.key })).body.data.api_keys as any[];
    const agentKey = keys.find((k) => (tokens.pier_api_key as string).startsWith(k.prefix) && k.kind === "agent");
    expect(agentKey).toBeDefined();
    expect((await t.api("DELETE", `/api/v1/api_keys/${agentKey.id}`, { key: u.key })).status).toBe(200);

    // The user revoked what the agent was given: the same connection's tokens must not live on.
    for (const bearer of [tokens.pier_api_key as string, tokens.access_token]) {
      expect((await t.api("GET", "/api/v1/buckets", { key: bearer })).status).toBe(401);
    }
    const refreshed = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure);
    expect(refreshed.status).toBe(400);
    expect((await refreshed.json()).error).toBe("invalid_grant");
    const list = await t.api("GET", "/api/v1/oauth/connections", { headers: { cookie: sessionCookie(t, u) } });
    expect(list.body.data.connections.filter((c: any) => c.client_id === client.client_id)).toEqual([]);
  });

  test("a disabled user's connection gets no tokens: the poll and a refresh answer invalid_grant until they are enabled (D294)", async () => {
    const u = await t.user();
    // As `pier admin users disable` does.
    const disable = (on: boolean) => adminSetDisabled(t.pier.deps, u.email, on);
    const d = await start();
    await decideDevice(t, sessionCookie(t, u), d.verification_uri_complete!);
    disable(true);
    expect((await pollError(d.device_code)).error).toBe("invalid_grant");
    disable(false);
    t.clock.advance(5000);
    const tokens = await poll(d.device_code);
    disable(true);
    const refused = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure);
    expect([refused.status, (await refused.json()).error]).toEqual([400, "invalid_grant"]);
    disable(false);
    // Refused, not spent: the same refresh token works once the user is enabled again.
    const next = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure),
    );
    expect((await t.api("GET", "/api/v1/buckets", { key: next.access_token })).status).toBe(200);
  });

  test("deny: the poll answers access_denied and nothing is granted", async () => {
    const u = await t.user();
    const d = await start();
    const res = await decideDevice(t, sessionCookie(t, u), d.verification_uri_complete!, "deny");
    expect(await res.text()).toContain("Connection denied");
    expect((await pollError(d.device_code)).error).toBe("access_denied");
  });

  test("polling faster than the interval gets slow_down with a larger interval", async () => {
    const d = await start();
    expect((await pollError(d.device_code)).error).toBe("authorization_pending");
    const fast = await pollError(d.device_code);
    expect(fast.error).toBe("slow_down");
    expect(fast.cause.interval).toBe(10);
    t.clock.advance(6000);
    const again = await pollError(d.device_code); // the interval was 10 s: slower still
    expect(again.error).toBe("slow_down");
    expect(again.cause.interval).toBe(15);
    t.clock.advance(15_000);
    expect((await pollError(d.device_code)).error).toBe("authorization_pending");
  });

  test("an expired device code answers expired_token and can no longer be approved", async () => {
    const u = await t.user();
    const d = await start();
    t.clock.advance(601_000);
    expect((await pollError(d.device_code)).error).toBe("expired_token");
    const shown = await page(d.verification_uri_complete!.replace(t.pier.deps.urls.baseUrl, t.url), sessionCookie(t, u));
    expect(shown.status).toBe(404);
    expect(await shown.text()).toContain("unknown, expired or already used");
  });

  test("the approval page needs a signed-in session and a CSRF token", async () => {
    const d = await start();
    const anon = await page(d.verification_uri_complete!.replace(t.pier.deps.urls.baseUrl, t.url), "");
    expect(anon.status).toBe(303);
    expect(anon.headers.get("location")).toBe(`/signin?next=${encodeURIComponent(`/oauth/device?user_code=${encodeURIComponent(d.user_code)}`)}`);
    const u = await t.user();
    const forged = await page(`${t.url}/oauth/device`, sessionCookie(t, u), { user_code: d.user_code, action: "approve", csrf: "forged" });
    expect(forged.status).toBe(403);
    expect((await pollError(d.device_code)).error).toBe("authorization_pending");
  });

  test("guessing user codes is limited per user", async () => {
    const u = await t.user();
    const cookie = sessionCookie(t, u);
    const d = await start();
    const entry = await (await page(`${t.url}/oauth/device`, cookie)).text();
    const csrf = entry.match(/name="csrf" value="([^"]+)"/)![1]!;
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await page(`${t.url}/oauth/device`, cookie, { csrf, action: "lookup", user_code: "BBBB-BBBB" })).status);
    expect(statuses.slice(0, 10).every((s) => s === 404)).toBe(true);
    expect(statuses[10]).toBe(429);
    // Even the right code is refused while the limit holds: nothing is approved.
    const right = await page(`${t.url}/oauth/device`, cookie, { csrf, action: "approve", user_code: d.user_code });
    expect(right.status).toBe(429);
    expect((await pollError(d.device_code)).error).toBe("authorization_pending");
  });

  test("the capabilities manifest names the flows, and its endpoints are the live ones", async () => {
    const r = await t.api("GET", "/api/v1/agent_auth/capabilities");
    expect(r.status).toBe(200);
    const c = r.body.data;
    expect(c.preferred_flow).toBe("device_authorization");
    expect(c.flows.device_authorization.device_authorization_endpoint).toBe(as.device_authorization_endpoint);
    expect(c.flows.device_authorization.token_endpoint).toBe(as.token_endpoint);
    expect(c.flows.authorization_code.code_challenge_methods).toEqual(["S256"]);
    expect(c.flows.email_code).toMatchObject({ available: true, delivery: "admin_outbox" });
    expect(c.scopes.default_permission_scope).toBe("bucket_admin");
    expect(c.mcp.url).toBe(t.pier.deps.urls.mcpUrl);
    expect(c.mcp.tools).toContainEqual({ name: "bucket_file_write", scope: "bucket_write" });
    const prm = await (await fetch(c.mcp.protected_resource_metadata)).json();
    expect(prm.resource).toBe(c.mcp.url);
  });

  test("bad requests: unknown client, unknown scope, wrong resource, unsupported grant", async () => {
    const base = t.url;
    const form = (body: Record<string, string>, path = "/oauth/device_authorization") =>
      fetch(base + path, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(body) });
    let r = await form({ client_id: "mcp_client_nope" });
    expect(r.status).toBe(401);
    expect((await r.json()).error).toBe("invalid_client");
    r = await form({ client_id: client.client_id, scope: "everything" });
    expect((await r.json()).error).toBe("invalid_scope");
    r = await form({ client_id: client.client_id, resource: "https://evil.example/mcp" });
    expect((await r.json()).error).toBe("invalid_target");
    r = await form({ client_id: client.client_id, grant_type: "password" }, "/oauth/token");
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ error: "unsupported_grant_type" });
    // JSON bodies work as the spec shows them.
    r = await fetch(base + "/oauth/device_authorization", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: client.client_id, scope: "pier:mcp", resource: t.pier.deps.urls.mcpUrl }),
    });
    expect(r.status).toBe(200);
    expect((await r.json()).user_code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/);
    r = await fetch(base + "/oauth/token", { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    expect((await r.json()).error).toBe("invalid_request");
  });
});
