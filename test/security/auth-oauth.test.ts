// Attacks on the OAuth endpoints (docs/security.md, "Accounts, sessions, OAuth and gates"): the
// authorize endpoint as an open redirect, deceptive client names, and property-based runs of
// attacker-chosen parameters against authorize, token, register and device_authorization.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { eq } from "drizzle-orm";
import { oauthClients } from "../../src/db/schema";
import { consent, page, sessionCookie } from "../helpers/oauth";
import { startTestPier, type TestPier } from "../helpers/pier";

let t: TestPier;
let clientId: string;
const evil = "https://evil.example/cb";

beforeAll(async () => {
  t = await startTestPier();
  // Anyone may register a client, with any https redirect URI.
  const reg = await t.api("POST", "/oauth/register", {
    body: { client_name: "Totally legit", redirect_uris: [evil], grant_types: ["authorization_code", "refresh_token"], token_endpoint_auth_method: "none" },
  });
  expect(reg.status).toBe(201);
  clientId = reg.body.client_id;
});
afterAll(() => t.stop());

const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const authorizeUrl = (params: Record<string, string>) => `${t.url}/oauth/authorize?${new URLSearchParams(params)}`;

describe("the authorize endpoint is no open redirect", () => {
  test("before sign-in, an invalid request shows the error on Pier's page instead of redirecting to the client", async () => {
    const invalid: Record<string, string>[] = [
      { client_id: clientId, redirect_uri: evil, response_type: "token", state: "s" },
      { client_id: clientId, redirect_uri: evil, response_type: "code", code_challenge_method: "plain", code_challenge: "x" },
      { client_id: clientId, redirect_uri: evil, response_type: "code", code_challenge_method: "S256", code_challenge: challenge, scope: "nope" },
    ];
    for (const params of invalid) {
      const res = await page(authorizeUrl(params), "");
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(await res.text()).toContain("Cannot authorize");
    }
  });

  test("a signed-in user who never approved the client also stays on Pier", async () => {
    const u = await t.user();
    const res = await page(authorizeUrl({ client_id: clientId, redirect_uri: evil, response_type: "token" }), sessionCookie(t, u));
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
  });

  test("after the user approved the client, errors go back to it as the RFC says", async () => {
    const u = await t.user();
    const cookie = sessionCookie(t, u);
    const ok = await consent(
      t,
      cookie,
      authorizeUrl({ client_id: clientId, redirect_uri: evil, response_type: "code", code_challenge_method: "S256", code_challenge: challenge, state: "a" }),
    );
    expect(ok).toStartWith(`${evil}?code=`);
    const res = await page(authorizeUrl({ client_id: clientId, redirect_uri: evil, response_type: "token", state: "b" }), cookie);
    expect(res.status).toBe(303);
    const loc = new URL(res.headers.get("location")!);
    expect(loc.origin + loc.pathname).toBe(evil);
    expect(loc.searchParams.get("error")).toBe("unsupported_response_type");
  });
});

describe("deceptive client names are refused at registration", () => {
  const register = (client_name: string) =>
    t.api("POST", "/oauth/register", {
      body: { client_name, redirect_uris: ["https://app.example/cb"], token_endpoint_auth_method: "none" },
    });

  test("right-to-left override, zero-width, control and invisible characters", async () => {
    for (const name of ["Pier CLI \u202Egnp.exe", "Pi\u200Ber", "Pier\nApprove now", "Pier\u2066 CLI\u2069", "\u3164", "Pier\u0000", "Pier\u00AD CLI"]) {
      const r = await register(name);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_client_metadata");
      expect(r.body.reason).toBe("deceptive_characters");
    }
  });

  test("ordinary names in any script still register", async () => {
    for (const name of ["Claude Desktop", "Café — Ünïcode", "日本語クライアント", "عميل", "Rocket 🚀"]) {
      const r = await register(name);
      expect(r.status).toBe(201);
      expect(r.body.client_name).toBe(name);
    }
  });
});

describe("deceptive client names registered before the rule", () => {
  test("are shown cleaned on the consent page, the device page and the connections list", async () => {
    // A client from before registration refused such names: written directly, as it sits in old data.
    const spoof = "Pier CLI \u202Egnp.exe\u200B";
    const reg = await t.api("POST", "/oauth/register", {
      body: {
        client_name: "placeholder",
        redirect_uris: ["https://old.example/cb"],
        grant_types: ["authorization_code", "urn:ietf:params:oauth:grant-type:device_code"],
        token_endpoint_auth_method: "none",
      },
    });
    t.pier.deps.db.update(oauthClients).set({ clientName: spoof }).where(eq(oauthClients.id, reg.body.client_id)).run();
    const u = await t.user();
    const cookie = sessionCookie(t, u);
    const clean = "Pier CLI gnp.exe";

    const consentHtml = await (
      await page(
        authorizeUrl({
          client_id: reg.body.client_id,
          redirect_uri: "https://old.example/cb",
          response_type: "code",
          code_challenge_method: "S256",
          code_challenge: challenge,
          state: "s",
        }),
        cookie,
      )
    ).text();
    expect(consentHtml).toContain(clean);
    expect(consentHtml).not.toMatch(/[\u202E\u200B]/);

    const device = (await (
      await fetch(`${t.url}/oauth/device_authorization`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ client_id: reg.body.client_id }).toString(),
      })
    ).json()) as { user_code: string };
    const deviceHtml = await (await page(`${t.url}/oauth/device?user_code=${device.user_code}`, cookie)).text();
    expect(deviceHtml).toContain(clean);
    expect(deviceHtml).not.toMatch(/[\u202E\u200B]/);

    await consent(
      t,
      cookie,
      authorizeUrl({
        client_id: reg.body.client_id,
        redirect_uri: "https://old.example/cb",
        response_type: "code",
        code_challenge_method: "S256",
        code_challenge: challenge,
        state: "s",
      }),
    );
    const listed = await (await page(`${t.url}/oauth/connections`, cookie)).text();
    expect(listed).toContain(clean);
    expect(listed).not.toMatch(/[\u202E\u200B]/);
  });
});

// Property-based: whatever an attacker sends, the OAuth endpoints answer with a 4xx in their own
// format (never a 500), and nothing ever redirects to a URI the client did not register.
const junk = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.constantFrom("", " ", "%00", "\u202E", "https://evil.example/x", "//evil.example", "javascript:alert(1)"),
);

describe("OAuth parameters chosen by an attacker (property-based)", () => {
  test("authorize: never a 500, never a redirect outside the registered URI or Pier's sign-in", async () => {
    const u = await t.user();
    const cookie = sessionCookie(t, u);
    await consent(
      t,
      cookie,
      authorizeUrl({ client_id: clientId, redirect_uri: evil, response_type: "code", code_challenge_method: "S256", code_challenge: challenge }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            client_id: fc.oneof(fc.constant(clientId), junk),
            redirect_uri: fc.oneof(fc.constant(evil), fc.constant(`${evil}/x`), junk),
            response_type: fc.oneof(fc.constant("code"), junk),
            code_challenge: fc.oneof(fc.constant(challenge), junk),
            code_challenge_method: fc.oneof(fc.constant("S256"), junk),
            scope: junk,
            state: junk,
            resource: junk,
          },
          { requiredKeys: [] },
        ),
        fc.boolean(),
        async (params, signedIn) => {
          const res = await page(authorizeUrl(params as Record<string, string>), signedIn ? cookie : "");
          expect(res.status).toBeLessThan(500);
          const location = res.headers.get("location");
          if (location !== null) {
            const ok = location.startsWith("/signin?next=") || (signedIn && (location === evil || location.startsWith(`${evil}?`)));
            expect({ location, ok }).toEqual({ location, ok: true });
          }
          await res.body?.cancel();
        },
      ),
      { numRuns: 150 },
    );
  });

  test("token, register and device_authorization: never a 500, always an RFC error object", async () => {
    const body = fc.dictionary(
      fc.oneof(
        fc.constantFrom(
          "grant_type",
          "client_id",
          "code",
          "code_verifier",
          "redirect_uri",
          "refresh_token",
          "device_code",
          "scope",
          "resource",
          "client_name",
          "redirect_uris",
          "grant_types",
          "token_endpoint_auth_method",
          "response_types",
        ),
        fc.string({ maxLength: 12 }),
      ),
      fc.oneof(junk, fc.array(junk, { maxLength: 3 }), fc.integer(), fc.constant(null), fc.dictionary(fc.string({ maxLength: 5 }), junk, { maxKeys: 2 })),
      { maxKeys: 8 },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("/oauth/token", "/oauth/register", "/oauth/device_authorization", "/oauth/revoke"),
        body,
        fc.boolean(),
        async (path, fields, asJson) => {
          const init = asJson
            ? { headers: { "content-type": "application/json" }, body: JSON.stringify(fields) }
            : {
                headers: { "content-type": "application/x-www-form-urlencoded" },
                body: new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)])).toString(),
              };
          const res = await fetch(`${t.url}${path}`, { method: "POST", redirect: "manual", ...init });
          expect(res.status).toBeLessThan(500);
          const answer = (await res.json()) as Record<string, unknown>;
          if (res.status >= 400) expect(typeof answer.error).toBe("string");
          expect(res.headers.get("location")).toBeNull();
        },
      ),
      { numRuns: 200 },
    );
  });
});
