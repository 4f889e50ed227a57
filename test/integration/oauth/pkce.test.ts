// Authorization code + PKCE driven by oauth4webapi, approved on the consent page; and every
// way to misuse it: wrong verifier, redirect mismatch, replayed code, reused refresh token.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import * as oauth from "oauth4webapi";
import { users } from "../../../src/db/schema";
import { consent, discoverAndRegister, insecure, page, sessionCookie } from "../../helpers/oauth";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";

let t: TestPier;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
let u: TestUser;
let cookie: string;
const redirectUri = "http://127.0.0.1:8976/callback";

beforeAll(async () => {
  t = await startTestPier();
  ({ as, client } = await discoverAndRegister(t, {
    client_name: "PKCE app",
    redirect_uris: [redirectUri, "https://app.example/cb"],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  }));
  u = await t.user();
  cookie = sessionCookie(t, u);
});
afterAll(() => t.stop());

async function authorize(opts: { scope?: string; redirect?: string } = {}) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: opts.redirect ?? redirectUri,
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    scope: opts.scope ?? "pier:mcp",
    resource: t.pier.deps.urls.mcpUrl,
  }).toString();
  const location = await consent(t, cookie, url);
  const params = oauth.validateAuthResponse(as, client, new URL(location), state);
  return { verifier, params, location };
}

async function exchange(params: URLSearchParams, verifier: string, redirect = redirectUri) {
  return oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirect, verifier, insecure);
}

/** Whether `secret` appears anywhere in the database (every row of every table). */
function storedInDatabase(secret: string): boolean {
  const db = t.pier.deps.sqlite;
  const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all();
  return tables.some(({ name }) => JSON.stringify(db.query(`SELECT * FROM "${name}"`).all()).includes(secret));
}

async function oauthError(res: Response) {
  expect(res.status).toBe(400);
  return (await res.json()).error as string;
}

describe("authorization code + PKCE", () => {
  test("consent, exchange, use, refresh with rotation", async () => {
    const { verifier, params, location } = await authorize({ scope: "pier:mcp bucket_write" });
    expect(new URL(location).searchParams.get("iss")).toBe(t.pier.deps.urls.baseUrl);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange(params, verifier));
    expect(tokens.scope).toBe("pier:mcp bucket_write");
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.pier_api_key).toBeUndefined(); // only device logins get a durable key
    const status = await t.api("GET", "/api/v1/agent_auth/status", { key: tokens.access_token });
    expect(status.body.data.account).toMatchObject({ id: u.accountId, permission_scope: "bucket_write" });

    const next = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure),
    );
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    expect((await t.api("GET", "/api/v1/buckets", { key: next.access_token })).status).toBe(200);
    // Codes and tokens are stored as hashes only: none of them appears in the database.
    for (const secret of [params.get("code")!, tokens.access_token, tokens.refresh_token!, next.access_token, next.refresh_token!]) {
      expect(storedInDatabase(secret)).toBe(false);
    }
    expect(storedInDatabase(client.client_id)).toBe(true); // (the search does find what is stored)
  });

  test("a reused refresh token revokes the whole family", async () => {
    const { verifier, params } = await authorize();
    const first = await oauth.processAuthorizationCodeResponse(as, client, await exchange(params, verifier));
    const second = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), first.refresh_token!, insecure),
    );
    const reuse = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), first.refresh_token!, insecure);
    expect(await oauthError(reuse)).toBe("invalid_grant");
    // Every token of the family is dead now, including the newest pair.
    expect((await t.api("GET", "/api/v1/buckets", { key: second.access_token })).status).toBe(401);
    expect((await t.api("GET", "/api/v1/buckets", { key: first.access_token })).status).toBe(401);
    expect(await oauthError(await oauth.refreshTokenGrantRequest(as, client, oauth.None(), second.refresh_token!, insecure))).toBe("invalid_grant");
  });

  test("a disabled user's code exchange and refresh answer invalid_grant (D294)", async () => {
    const first = await authorize();
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange(first.params, first.verifier));
    const second = await authorize();
    const disable = (on: boolean) =>
      t.pier.deps.db
        .update(users)
        .set({ disabledAt: on ? new Date().toISOString() : null })
        .where(eq(users.id, u.userId))
        .run();
    disable(true);
    try {
      expect(await oauthError(await exchange(second.params, second.verifier))).toBe("invalid_grant");
      expect(await oauthError(await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure))).toBe("invalid_grant");
    } finally {
      disable(false);
    }
  });

  test("wrong PKCE verifier: invalid_grant, and the code is burnt", async () => {
    const { verifier, params } = await authorize();
    expect(await oauthError(await exchange(params, oauth.generateRandomCodeVerifier()))).toBe("invalid_grant");
    expect(await oauthError(await exchange(params, verifier))).toBe("invalid_grant");
  });

  test("replayed code: invalid_grant, and the tokens it gave are revoked", async () => {
    const { verifier, params } = await authorize();
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange(params, verifier));
    expect(await oauthError(await exchange(params, verifier))).toBe("invalid_grant");
    expect((await t.api("GET", "/api/v1/buckets", { key: tokens.access_token })).status).toBe(401);
  });

  test("redirect URI mismatch at the token endpoint", async () => {
    const { verifier, params } = await authorize();
    expect(await oauthError(await exchange(params, verifier, "https://app.example/cb"))).toBe("invalid_grant");
  });

  test("an OAuth 2.1 client may leave redirect_uri out of the token request; PKCE still binds the code", async () => {
    const token = (params: URLSearchParams, verifier: string) =>
      fetch(as.token_endpoint!, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", client_id: client.client_id, code: params.get("code")!, code_verifier: verifier }),
      });
    const stolen = await authorize();
    expect(await oauthError(await token(stolen.params, oauth.generateRandomCodeVerifier()))).toBe("invalid_grant");
    const { verifier, params } = await authorize();
    const res = await token(params, verifier);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect((await t.api("GET", "/api/v1/buckets", { key: body.access_token })).status).toBe(200);
  });

  test("an unregistered redirect URI is never redirected to", async () => {
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: "https://evil.example/cb",
      state: "s",
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: "S256",
    }).toString();
    const res = await page(url.href.replace(t.pier.deps.urls.baseUrl, t.url), cookie);
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(await res.text()).toContain("does not match");
  });

  test("plain PKCE or no PKCE is refused back at the client with state", async () => {
    const url = new URL(`${t.url}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: redirectUri,
      state: "xyz",
      code_challenge: "abc",
      code_challenge_method: "plain",
    }).toString();
    const res = await page(url.href, cookie);
    expect(res.status).toBe(303);
    const loc = new URL(res.headers.get("location")!);
    expect(loc.origin + loc.pathname).toBe(redirectUri);
    expect(loc.searchParams.get("error")).toBe("invalid_request");
    expect(loc.searchParams.get("state")).toBe("xyz");
  });

  test("deny sends access_denied with state; signed-out users go to sign-in first", async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(`${t.url}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: redirectUri,
      state: "st",
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    }).toString();
    const anon = await page(url.href, "");
    expect(anon.status).toBe(303);
    expect(anon.headers.get("location")).toStartWith("/signin?next=%2Foauth%2Fauthorize%3F");
    const loc = new URL(await consent(t, cookie, url, "deny"));
    expect(loc.searchParams.get("error")).toBe("access_denied");
    expect(loc.searchParams.get("state")).toBe("st");
  });

  test("the consent post needs the session's CSRF token", async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(`${t.url}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: redirectUri,
      state: "c1",
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    }).toString();
    const html = await (await page(url.href, cookie)).text();
    const fields = Object.fromEntries([...html.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    const forged = await page(`${t.url}/oauth/authorize`, cookie, { ...fields, csrf: "forged", decision: "approve" });
    expect(forged.status).toBe(403);
    expect(forged.headers.get("location")).toBeNull();
    const otherUser = await page(`${t.url}/oauth/authorize`, sessionCookie(t, await t.user()), { ...fields, decision: "approve" });
    expect(otherUser.status).toBe(403); // a CSRF token is bound to its session
  });

  test("registration validates redirect URIs and client metadata", async () => {
    const reg = (body: unknown) =>
      fetch(`${t.url}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    for (const uri of ["http://app.example/cb", "javascript:alert(1)", "https://app.example/cb#frag", "not a url"]) {
      const r = await reg({ redirect_uris: [uri] });
      expect(r.status).toBe(400);
      expect((await r.json()).error).toBe("invalid_redirect_uri");
    }
    let r = await reg({ redirect_uris: ["https://ok.example/cb"], token_endpoint_auth_method: "client_secret_basic" });
    expect((await r.json()).error).toBe("invalid_client_metadata");
    r = await reg({ redirect_uris: ["http://[::1]:3000/cb", "http://localhost/cb"], client_name: "Loopback" });
    expect(r.status).toBe(201);
    expect(await r.json()).toMatchObject({
      client_id: expect.stringMatching(/^mcp_client_/),
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
    });
  });
});

describe("connections page", () => {
  test("lists the connection and revokes it with a CSRF-protected form", async () => {
    const v = await t.user();
    const c = sessionCookie(t, v);
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: redirectUri,
      state: "s1",
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    }).toString();
    const params = oauth.validateAuthResponse(as, client, new URL(await consent(t, c, url)), "s1");
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await exchange(params, verifier));
    const listing = await (await page(`${t.url}/oauth/connections`, c)).text();
    expect(listing).toContain("PKCE app");
    const action = /action="(\/oauth\/connections\/cxn_[a-z0-9]+\/revoke)"/.exec(listing)![1]!;
    // The dashboard's Agents page lists the same connection with its own revoke button.
    const access = await (await page(`${t.url}/dashboard/account/agents`, c)).text();
    expect(access).toContain("Agent connections");
    expect(access).toContain("PKCE app");
    expect(access).toContain(`action="/dashboard/account/agents/${action.split("/")[3]}/revoke"`);
    const forged = await page(t.url + action, c, { csrf: "nope" });
    expect(forged.status).toBe(403);
    expect((await t.api("GET", "/api/v1/buckets", { key: tokens.access_token })).status).toBe(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(listing)![1]!;
    const revoked = await page(t.url + action, c, { csrf });
    expect(revoked.status).toBe(303);
    expect((await t.api("GET", "/api/v1/buckets", { key: tokens.access_token })).status).toBe(401);
    // Another user of another account cannot see or revoke it.
    const other = await t.api("GET", "/api/v1/oauth/connections", { headers: { cookie: sessionCookie(t, u) } });
    expect(other.body.data.connections.map((x: any) => x.id)).not.toContain(action.split("/")[3]);
  });
});
