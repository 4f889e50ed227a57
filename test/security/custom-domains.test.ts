// Attacks on custom domains, each reproduced against a real Pier whose DNS is a real server
// (pebble-challtestsrv) the attacker may write to, as anyone may write their own zone.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { hostAllowed } from "../../src/acme";
import { startChallTestSrv, type ChallTestSrv } from "../helpers/challtestsrv";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { publishSite, siteFetch } from "../helpers/sites";

let cts: ChallTestSrv;
let t: TestPier;
let victim: TestUser;
let attacker: TestUser;

beforeAll(async () => {
  cts = await startChallTestSrv({ defaultIPv4: "" });
  t = await startTestPier({ baseUrl: "http://pier.test", sitesDomain: "sites.pier.test", mailDomain: "mail.pier.test", dnsResolver: cts.dns });
  const direct = t.api;
  t.api = (method, path, o = {}) => direct(method, path, { ...o, headers: { host: "pier.test", ...o.headers } });
  victim = await t.user({ plan: "pro" });
  attacker = await t.user({ plan: "pro" });
});
afterAll(async () => {
  await t.stop();
  await cts.stop();
});

let n = 0;
const site = (user: TestUser, text: string) =>
  publishSite(t, {
    user,
    slug: `securesite-${Date.now().toString(36)}-${++n}`,
    files: [{ path: "index.html", bytes: new TextEncoder().encode(text), contentType: "text/html" }],
  });
const add = (u: TestUser, bucketId: string, hostname: string) =>
  t.api("POST", `/api/v1/buckets/${bucketId}/custom_domains`, { key: u.key, body: { hostname } });
const refresh = (u: TestUser, bucketId: string, id: string) => t.api("POST", `/api/v1/buckets/${bucketId}/custom_domains/${id}/refresh`, { key: u.key });
const rec = (d: any, purpose: string) => d.required_dns_records.find((r: any) => r.purpose === purpose);

test("a claim on a hostname another account verified waits, and cannot take it while the victim's record is in DNS (D319)", async () => {
  const vs = await site(victim, "victim site");
  const d = (await add(victim, vs.pub.bucketId, "www.victim-one.com")).body.data.custom_domain;
  await cts.setTxt(rec(d, "ownership").name, rec(d, "ownership").value);
  await cts.setCname("www.victim-one.com", "pier.test");
  expect((await refresh(victim, vs.pub.bucketId, d.id)).body.data.custom_domain.status).toBe("active");

  const as = await site(attacker, "attacker site");
  const r = await add(attacker, as.pub.bucketId, " WWW.VICTIM-ONE.COM. ");
  expect(r.status).toBe(201);
  const claim = r.body.data.custom_domain;
  expect(claim.status).toBe("pending_validation");
  expect(claim.failure_reason).toContain("is verified for another site");
  // Even with the attacker's own value added next to the victim's (a DNS host that lets anyone
  // add records), the victim's record still there keeps the name where it is.
  await cts.setTxt(rec(claim, "ownership").name, rec(claim, "ownership").value);
  const attempt = (await refresh(attacker, as.pub.bucketId, claim.id)).body.data.custom_domain;
  expect(rec(attempt, "ownership").found).toBe(true);
  expect(attempt.status).toBe("pending_validation");
  expect(attempt.failure_reason).toContain("is verified for another site");
  expect((await t.api("GET", `/api/v1/buckets/${vs.pub.bucketId}/custom_domains/${d.id}`, { key: victim.key })).body.data.custom_domain.status).toBe("active");
  const served = await siteFetch(t, "www.victim-one.com", "/");
  expect(await served.text()).toBe("victim site");
});

test("an owner who tidied the ownership record away is warned and keeps the name by putting it back within the grace period", async () => {
  const vs = await site(victim, "victim tidy");
  const d = (await add(victim, vs.pub.bucketId, "www.victim-tidy.com")).body.data.custom_domain;
  await cts.setTxt(rec(d, "ownership").name, rec(d, "ownership").value);
  await cts.setCname("www.victim-tidy.com", "pier.test");
  expect((await refresh(victim, vs.pub.bucketId, d.id)).body.data.custom_domain.status).toBe("active");
  await cts.clearTxt(rec(d, "ownership").name); // harmless before D319: the name stays active

  const as = await site(attacker, "attacker tidy");
  const claim = (await add(attacker, as.pub.bucketId, "www.victim-tidy.com")).body.data.custom_domain;
  await cts.setTxt(rec(claim, "ownership").name, rec(claim, "ownership").value);
  expect((await refresh(attacker, as.pub.bucketId, claim.id)).body.data.custom_domain.failure_reason).toContain("it moves to this site at ");
  const warned = (await t.api("GET", "/api/v1/notifications", { key: victim.key })).body.data.notifications[0];
  expect(warned).toMatchObject({ kind: "custom_domain_contested", data: { hostname: "www.victim-tidy.com" } });

  // The owner puts the record back: the contest ends, and no later check moves the name.
  await cts.setTxt(rec(d, "ownership").name, rec(d, "ownership").value);
  expect((await refresh(attacker, as.pub.bucketId, claim.id)).body.data.custom_domain.failure_reason).toContain("is verified for another site. It moves");
  t.clock.advance(80 * 3_600_000);
  expect((await refresh(attacker, as.pub.bucketId, claim.id)).body.data.custom_domain.status).toBe("pending_validation");
  expect(await (await siteFetch(t, "www.victim-tidy.com", "/")).text()).toBe("victim tidy");
  t.clock.advance(-80 * 3_600_000);
});

test("a pending claim cannot be verified with the records made for someone else's claim (the ownership token is per domain)", async () => {
  const vs = await site(victim, "victim two");
  const as = await site(attacker, "attacker two");
  // The attacker claims first, then the real owner adds the name and creates its records.
  const ad = (await add(attacker, as.pub.bucketId, "www.victim-two.com")).body.data.custom_domain;
  const vd = (await add(victim, vs.pub.bucketId, "www.victim-two.com")).body.data.custom_domain;
  await cts.setTxt(rec(vd, "ownership").name, rec(vd, "ownership").value);
  await cts.setCname("www.victim-two.com", "pier.test");

  const attempt = await refresh(attacker, as.pub.bucketId, ad.id);
  expect(attempt.body.data.custom_domain.status).toBe("pending_validation");
  expect(rec(attempt.body.data.custom_domain, "ownership").found).toBe(false);
  expect((await refresh(victim, vs.pub.bucketId, vd.id)).body.data.custom_domain.status).toBe("active");
  expect(await (await siteFetch(t, "www.victim-two.com", "/")).text()).toBe("victim two");
  // Even with the victim's records in place, the attacker's claim never takes the name.
  expect((await refresh(attacker, as.pub.bucketId, ad.id)).body.data.custom_domain.status).toBe("pending_validation");
});

test("a Host header naming a domain that is added but not verified serves nothing", async () => {
  const as = await site(attacker, "attacker three");
  await add(attacker, as.pub.bucketId, "www.not-yet-verified.com");
  const r = await siteFetch(t, "www.not-yet-verified.com", "/");
  expect(r.status).toBe(404);
  expect(await r.text()).not.toContain("attacker three");
});

test("Pier's own names cannot be taken as custom domains (another user's slug host, the API host, the mail host)", async () => {
  const vs = await site(victim, "victim four");
  const as = await site(attacker, "attacker four");
  for (const hostname of [vs.host, "pier.test", "mail.pier.test", "sites.pier.test"]) {
    const r = await add(attacker, as.pub.bucketId, hostname);
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("CUSTOM_DOMAIN_RESERVED");
  }
  expect(await (await siteFetch(t, vs.host, "/")).text()).toBe("victim four");
});

test("another account cannot read, refresh or remove a domain, nor learn its ownership token", async () => {
  const vs = await site(victim, "victim five");
  const as = await site(attacker, "attacker five");
  const d = (await add(victim, vs.pub.bucketId, "www.victim-five.com")).body.data.custom_domain;
  const paths = [
    ["GET", `/api/v1/buckets/${vs.pub.bucketId}/custom_domains`],
    ["GET", `/api/v1/buckets/${vs.pub.bucketId}/custom_domains/${d.id}`],
    ["POST", `/api/v1/buckets/${vs.pub.bucketId}/custom_domains/${d.id}/refresh`],
    ["DELETE", `/api/v1/buckets/${vs.pub.bucketId}/custom_domains/${d.id}`],
  ] as const;
  for (const [method, path] of paths) {
    const r = await t.api(method, path, { key: attacker.key });
    expect(r.status).toBe(404);
    expect(r.text).not.toContain(rec(d, "ownership").value);
  }
  // Through the attacker's own bucket the id is simply unknown.
  const viaOwn = await t.api("DELETE", `/api/v1/buckets/${as.pub.bucketId}/custom_domains/${d.id}`, { key: attacker.key });
  expect(viaOwn.body.error.code).toBe("CUSTOM_DOMAIN_NOT_FOUND");
  expect((await t.api("GET", `/api/v1/buckets/${vs.pub.bucketId}/custom_domains/${d.id}`, { key: victim.key })).status).toBe(200);
});

test("once its site is unpublished, a verified custom domain is no longer a name Pier orders certificates for", async () => {
  const vs = await site(victim, "soon unpublished");
  const d = (await add(victim, vs.pub.bucketId, "www.unpublished-cert.com")).body.data.custom_domain;
  await cts.setTxt(rec(d, "ownership").name, rec(d, "ownership").value);
  await cts.setCname("www.unpublished-cert.com", "pier.test");
  expect((await refresh(victim, vs.pub.bucketId, d.id)).body.data.custom_domain.status).toBe("active");
  expect(hostAllowed("www.unpublished-cert.com", t.pier.deps)).toBe(true);

  expect((await t.api("DELETE", `/api/v1/buckets/${vs.pub.bucketId}/publication`, { key: victim.key })).status).toBe(202);
  await t.pier.runner.drain();
  // Anyone can send this Host header or SNI name; with nothing served there, no order may start.
  expect((await siteFetch(t, "www.unpublished-cert.com", "/")).status).toBe(404);
  expect(hostAllowed("www.unpublished-cert.com", t.pier.deps)).toBe(false);
});
