// Browser-side helpers for OAuth tests: a signed-in session cookie, and the device approval and
// consent pages driven by real HTTP form posts (what a browser does, minus the rendering).
import * as oauth from "oauth4webapi";
import { createSession } from "../../src/features/accounts/sessions";
import { sudoCookie } from "../../src/features/accounts/sudo";
import type { TestPier, TestUser } from "./pier";

/** oauth4webapi talks plain http (the test server) only when told to. */
export const insecure = { [oauth.allowInsecureRequests]: true };

/** Discover the test server as an authorization server and register a public client, as a real client does. */
export async function discoverAndRegister(t: TestPier, metadata: Parameters<typeof oauth.dynamicClientRegistrationRequest>[1]) {
  const issuer = new URL(t.pier.deps.urls.baseUrl);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: "oauth2", ...insecure }));
  const client = await oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, metadata, insecure));
  return { as, client };
}

/** The cookies of a browser that has just signed in with the password (so it is in sudo mode). */
export function sessionCookie(t: TestPier, u: TestUser): string {
  const { token, session } = createSession(t.pier.deps, u.userId, { remember: false });
  const sudo = sudoCookie(t.pier.deps, session.id).split(";")[0]!;
  return `pier_session=${token}; ${sudo}`;
}

export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    out[m[1]!] = m[2]!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));
  }
  return out;
}

export async function page(url: string, cookie: string, form?: Record<string, string>): Promise<Response> {
  return fetch(url, {
    method: form ? "POST" : "GET",
    redirect: "manual",
    headers: { cookie, ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
    body: form ? new URLSearchParams(form) : undefined,
  });
}

/** Open verification_uri_complete as the signed-in user and press Confirm Connection (or Deny). */
export async function decideDevice(t: TestPier, cookie: string, verificationUriComplete: string, action: "approve" | "deny" = "approve"): Promise<Response> {
  const url = verificationUriComplete.replace(t.pier.deps.urls.baseUrl, t.url);
  const shown = await page(url, cookie);
  const html = await shown.text();
  if (shown.status !== 200) throw new Error(`device page answered ${shown.status}: ${html.slice(0, 300)}`);
  return page(`${t.url}/oauth/device`, cookie, { ...hiddenFields(html), action });
}

/** Follow an authorization URL as the signed-in user and press Allow; returns the redirect Location. */
export async function consent(t: TestPier, cookie: string, authorizationUrl: string | URL, decision: "approve" | "deny" = "approve"): Promise<string> {
  const url = String(authorizationUrl).replace(t.pier.deps.urls.baseUrl, t.url);
  const shown = await page(url, cookie);
  const html = await shown.text();
  if (shown.status !== 200) throw new Error(`consent page answered ${shown.status}: ${html.slice(0, 300)} ${shown.headers.get("location") ?? ""}`);
  const res = await page(`${t.url}/oauth/authorize`, cookie, { ...hiddenFields(html), decision });
  if (res.status !== 303) throw new Error(`consent post answered ${res.status}`);
  return res.headers.get("location")!;
}
