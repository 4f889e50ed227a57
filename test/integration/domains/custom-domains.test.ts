// Custom domains over real HTTP and real DNS: pebble-challtestsrv is Pier's --dns-resolver and
// the tests create the records a user would create at their DNS provider. The full path: publish,
// add a domain, see its records pending, create them, refresh, active, the site served on the
// domain; replace; delete; limits; bad input; another account; the re-check job with the clock.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { recheckDueDomains } from "../../../src/features/domains";
import { startChallTestSrv, type ChallTestSrv } from "../../helpers/challtestsrv";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { publishSite, siteFetch } from "../../helpers/sites";

let cts: ChallTestSrv;
let t: TestPier;
let pro: TestUser;

beforeAll(async () => {
  // No default A answers: a name has an address only once a test creates one.
  cts = await startChallTestSrv({ defaultIPv4: "" });
  const plansFile = join(mkdtempSync(join(tmpdir(), "pier-plans-")), "plans.json");
  writeFileSync(plansFile, JSON.stringify([{ id: "onedomain", extends: "pro", entitlements: { max_custom_domains: 1 } }]));
  t = await startTestPier({ baseUrl: "http://pier.test", sitesDomain: "sites.pier.test", mailDomain: "mail.pier.test", dnsResolver: cts.dns, plansFile });
  // With a base URL set, 127.0.0.1 would be a (custom) site host: API calls name the API host.
  const direct = t.api;
  t.api = (method, path, o = {}) => direct(method, path, { ...o, headers: { host: "pier.test", ...o.headers } });
  pro = await t.user({ plan: "pro" });
});
afterAll(async () => {
  await t.stop();
  await cts.stop();
});

let n = 0;
const page = (text: string) => [{ path: "index.html", bytes: new TextEncoder().encode(`<h1>${text}</h1>`), contentType: "text/html; charset=utf-8" }];
async function site(user: TestUser = pro, text = "hello from a custom domain") {
  return publishSite(t, { user, files: page(text), slug: `domainsite-${Date.now().toString(36)}-${++n}` });
}
const add = (key: string, bucketId: string, hostname: string) => t.api("POST", `/api/v1/buckets/${bucketId}/custom_domains`, { key, body: { hostname } });
const refresh = (key: string, bucketId: string, id: string) => t.api("POST", `/api/v1/buckets/${bucketId}/custom_domains/${id}/refresh`, { key });
const record = (d: any, purpose: string) => d.required_dns_records.find((r: any) => r.purpose === purpose);
/** Create the records the answer asks for, as the user would at their DNS provider. */
async function createRecords(d: any) {
  await cts.setTxt(record(d, "ownership").name, record(d, "ownership").value);
  if (record(d, "traffic").type === "CNAME" && !d.apex) await cts.setCname(record(d, "traffic").name, record(d, "traffic").value);
}
const body = (r: Response) => r.text();

describe("custom domains: the full path", () => {
  test("publish, add, records pending, create them, refresh, active; the site is served on the domain and the slug keeps working", async () => {
    const s = await site();
    const bucketId = s.pub.bucketId;

    const created = await add(pro.key, bucketId, "  WWW.Example-Shop.COM. ");
    expect(created.status).toBe(201);
    const d = created.body.data.custom_domain;
    expect(d.id).toMatch(/^pcd_/);
    expect(d.hostname).toBe("www.example-shop.com");
    expect(d.status).toBe("pending_validation");
    expect(d.ssl_status).toBe("pending_validation");
    expect(d.public_url).toBeNull();
    expect(d.apex).toBe(false);
    expect(record(d, "ownership")).toMatchObject({ type: "TXT", name: "_pier-challenge.www.example-shop.com", found: false });
    expect(record(d, "ownership").value).toMatch(/^pier-domain-verification=[a-z0-9]{32}$/);
    expect(record(d, "traffic")).toMatchObject({ type: "CNAME", name: "www.example-shop.com", value: "pier.test", found: false });
    expect(created.body.data.publication.public_url).toBe(`http://${s.host}/`);
    expect(created.body.data.limits).toEqual({ active_count: 1, max_custom_domains: 20 });

    // Not serving while pending: the Host is unknown to the site server.
    expect((await siteFetch(t, "www.example-shop.com", "/")).status).toBe(404);

    let r = await refresh(pro.key, bucketId, d.id);
    expect(r.status).toBe(200);
    expect(r.body.data.custom_domain.status).toBe("pending_validation");
    expect(r.body.data.custom_domain.required_dns_records.map((x: any) => x.found)).toEqual([false, false]);

    // Ownership only: the answer says which record is still missing.
    await cts.setTxt(record(d, "ownership").name, record(d, "ownership").value);
    r = await refresh(pro.key, bucketId, d.id);
    expect(record(r.body.data.custom_domain, "ownership").found).toBe(true);
    expect(record(r.body.data.custom_domain, "traffic").found).toBe(false);
    expect(r.body.data.custom_domain.status).toBe("pending_validation");

    await cts.setCname("www.example-shop.com", "pier.test");
    r = await refresh(pro.key, bucketId, d.id);
    const active = r.body.data.custom_domain;
    expect(active.status).toBe("active");
    // Automatic HTTPS is off here: Pier manages no certificate for the name.
    expect(active.ssl_status).toBe("not_managed");
    expect(active.public_url).toBe("http://www.example-shop.com/");
    expect(record(active, "traffic")).toMatchObject({ found: true, seen: ["pier.test"] });

    const onDomain = await siteFetch(t, "www.example-shop.com", "/");
    expect(onDomain.status).toBe(200);
    expect(await body(onDomain)).toContain("hello from a custom domain");
    const onSlug = await siteFetch(t, s.host, "/");
    expect(onSlug.status).toBe(200);

    const pub = await t.api("GET", `/api/v1/publications/${s.pub.id}`, { key: pro.key });
    expect(pub.body.data.publication.public_url).toBe("http://www.example-shop.com/");
    const bucket = await t.api("GET", `/api/v1/buckets/${bucketId}`, { key: pro.key });
    expect(bucket.body.data.bucket.website.public_url).toBe("http://www.example-shop.com/");
    const list = await t.api("GET", `/api/v1/buckets/${bucketId}/custom_domains`, { key: pro.key });
    expect(list.body.data.custom_domains.map((x: any) => x.hostname)).toEqual(["www.example-shop.com"]);
    expect(list.body.data.publication.public_url).toBe("http://www.example-shop.com/");
    const one = await t.api("GET", `/api/v1/buckets/${bucketId}/custom_domains/${d.id}`, { key: pro.key });
    expect(one.body.data.custom_domain.status).toBe("active");

    // Adding the same hostname again is idempotent.
    const again = await add(pro.key, bucketId, "www.example-shop.com");
    expect(again.status).toBe(200);
    expect(again.body.data.custom_domain.id).toBe(d.id);
  });

  test("replace: the old domain serves until the new one is active, then stops; delete stops serving at once", async () => {
    const s = await site(pro, "replace me");
    const firstAdd = await add(pro.key, s.pub.bucketId, "old.replace-test.com");
    const first = firstAdd.body.data.custom_domain;
    await createRecords(first);
    expect((await refresh(pro.key, s.pub.bucketId, first.id)).body.data.custom_domain.status).toBe("active");

    const second = await add(pro.key, s.pub.bucketId, "new.replace-test.com");
    expect(second.status).toBe(201);
    const next = second.body.data.custom_domain;
    expect(next.status).toBe("pending_validation");
    // The replacement takes the active one's place: no second unit of capacity.
    expect(second.body.data.limits.active_count).toBe(firstAdd.body.data.limits.active_count);
    expect((await siteFetch(t, "old.replace-test.com", "/")).status).toBe(200);
    expect((await siteFetch(t, "new.replace-test.com", "/")).status).toBe(404);

    await createRecords(next);
    expect((await refresh(pro.key, s.pub.bucketId, next.id)).body.data.custom_domain.status).toBe("active");
    expect((await siteFetch(t, "new.replace-test.com", "/")).status).toBe(200);
    expect((await siteFetch(t, "old.replace-test.com", "/")).status).toBe(404);
    const list = await t.api("GET", `/api/v1/buckets/${s.pub.bucketId}/custom_domains`, { key: pro.key });
    expect(list.body.data.custom_domains.map((x: any) => x.hostname)).toEqual(["new.replace-test.com"]);
    expect((await t.api("GET", `/api/v1/buckets/${s.pub.bucketId}/custom_domains/${first.id}`, { key: pro.key })).body.error.code).toBe(
      "CUSTOM_DOMAIN_NOT_FOUND",
    );

    const del = await t.api("DELETE", `/api/v1/buckets/${s.pub.bucketId}/custom_domains/${next.id}`, { key: pro.key });
    expect(del.status).toBe(200);
    expect(del.body.data.removed).toBe(true);
    // At once: the site server's cached lookup was dropped with the deletion.
    expect((await siteFetch(t, "new.replace-test.com", "/")).status).toBe(404);
    expect((await siteFetch(t, s.host, "/")).status).toBe(200);
    const pub = await t.api("GET", `/api/v1/publications/${s.pub.id}`, { key: pro.key });
    expect(pub.body.data.publication.public_url).toBe(`http://${s.host}/`);
    expect((await t.api("GET", `/api/v1/buckets/${s.pub.bucketId}/custom_domains/${next.id}`, { key: pro.key })).status).toBe(404);
  });

  test("a new hostname while the first is still pending replaces the pending one", async () => {
    const s = await site();
    const typo = (await add(pro.key, s.pub.bucketId, "wwww.typo-test.com")).body.data.custom_domain;
    const fixed = await add(pro.key, s.pub.bucketId, "www.typo-test.com");
    expect(fixed.status).toBe(201);
    const list = await t.api("GET", `/api/v1/buckets/${s.pub.bucketId}/custom_domains`, { key: pro.key });
    expect(list.body.data.custom_domains.map((x: any) => x.hostname)).toEqual(["www.typo-test.com"]);
    expect((await t.api("GET", `/api/v1/buckets/${s.pub.bucketId}/custom_domains/${typo.id}`, { key: pro.key })).status).toBe(404);
  });

  test("apex hostname: ALIAS/flattening or A/AAAA; addresses must equal the Pier host's", async () => {
    const s = await site();
    const created = await add(pro.key, s.pub.bucketId, "apex-test.org");
    expect(created.status).toBe(201);
    const d = created.body.data.custom_domain;
    expect(d.apex).toBe(true);
    expect(record(d, "traffic")).toMatchObject({
      apex: true,
      supported_types: ["ALIAS", "ANAME", "CNAME flattening", "A", "AAAA"],
      value: "pier.test",
      found: false,
    });
    await cts.addA("pier.test", ["127.0.0.1"]);
    await cts.setTxt(record(d, "ownership").name, record(d, "ownership").value);
    // An address somewhere else is seen, and said not to be Pier's.
    await cts.addA("apex-test.org", ["192.0.2.7"]);
    let r = await refresh(pro.key, s.pub.bucketId, d.id);
    expect(record(r.body.data.custom_domain, "traffic")).toMatchObject({ found: false, seen: ["192.0.2.7"], address_values: ["127.0.0.1"] });
    expect(r.body.data.custom_domain.status).toBe("pending_validation");
    await cts.clearA("apex-test.org");
    await cts.addA("apex-test.org", ["127.0.0.1"]);
    r = await refresh(pro.key, s.pub.bucketId, d.id);
    expect(record(r.body.data.custom_domain, "traffic").found).toBe(true);
    expect(r.body.data.custom_domain.status).toBe("active");
    expect((await siteFetch(t, "apex-test.org", "/")).status).toBe(200);
  });

  test("a resolver failure is reported on the record, not as a 500", async () => {
    const s = await site();
    const d = (await add(pro.key, s.pub.bucketId, "www.servfail-test.com")).body.data.custom_domain;
    await cts.setServfail("_pier-challenge.www.servfail-test.com");
    const r = await refresh(pro.key, s.pub.bucketId, d.id);
    expect(r.status).toBe(200);
    expect(record(r.body.data.custom_domain, "ownership")).toMatchObject({ found: false });
    expect(record(r.body.data.custom_domain, "ownership").lookup_error).toContain("ESERVFAIL");
    await cts.clearServfail("_pier-challenge.www.servfail-test.com");
  });

  test("IDN: stored as punycode, shown both ways", async () => {
    const s = await site();
    const r = await add(pro.key, s.pub.bucketId, "WWW.Bücher-Test.de");
    expect(r.status).toBe(201);
    expect(r.body.data.custom_domain.hostname).toBe("www.xn--bcher-test-9db.de");
    expect(r.body.data.custom_domain.hostname_unicode).toBe("www.bücher-test.de");
    expect(record(r.body.data.custom_domain, "ownership").name).toBe("_pier-challenge.www.xn--bcher-test-9db.de");
  });
});

describe("custom domains: with the site's lifecycle", () => {
  test("unpublishing stops serving the domain; deleting the bucket frees the hostname for someone else", async () => {
    const owner = await t.user({ plan: "pro" });
    const s = await site(owner, "lifecycle");
    const d = (await add(owner.key, s.pub.bucketId, "www.lifecycle-test.com")).body.data.custom_domain;
    await createRecords(d);
    expect((await refresh(owner.key, s.pub.bucketId, d.id)).body.data.custom_domain.status).toBe("active");
    expect((await siteFetch(t, "www.lifecycle-test.com", "/")).status).toBe(200);

    expect((await t.api("DELETE", `/api/v1/buckets/${s.pub.bucketId}/publication`, { key: owner.key })).status).toBe(202);
    expect((await siteFetch(t, "www.lifecycle-test.com", "/")).status).toBe(404);
    await t.pier.runner.drain();
    const del = await t.api("DELETE", `/api/v1/buckets/${s.pub.bucketId}`, { key: owner.key, body: { confirmation: `delete ${s.pub.bucketId}` } });
    expect(del.status).toBe(200);

    const next = await t.user({ plan: "pro" });
    const ns = await site(next, "new owner");
    const taken = await add(next.key, ns.pub.bucketId, "www.lifecycle-test.com");
    expect(taken.status).toBe(201);
  });
});

describe("custom domains: the visibility lock", () => {
  test("while the bucket's visibility is locked a domain is neither added nor removed (the site's addresses stay); refresh still works", async () => {
    const s = await site(pro, "frozen addresses");
    const bucketId = s.pub.bucketId;
    const d = (await add(pro.key, bucketId, "www.frozen-test.com")).body.data.custom_domain;
    await createRecords(d);
    expect((await refresh(pro.key, bucketId, d.id)).body.data.custom_domain.status).toBe("active");
    expect((await t.api("POST", `/api/v1/buckets/${bucketId}/visibility_change_lock`, { key: pro.key, body: { reason: "launch" } })).status).toBe(200);

    // Removing the domain takes the site off its public address; adding one moves public_url.
    const removed = await t.api("DELETE", `/api/v1/buckets/${bucketId}/custom_domains/${d.id}`, { key: pro.key });
    expect([removed.status, removed.body.error?.code]).toEqual([423, "VISIBILITY_LOCKED"]);
    const added = await add(pro.key, bucketId, "www.frozen-other-test.com");
    expect([added.status, added.body.error?.code]).toEqual([423, "VISIBILITY_LOCKED"]);
    expect((await siteFetch(t, "www.frozen-test.com", "/")).status).toBe(200);
    const list = (await t.api("GET", `/api/v1/buckets/${bucketId}/custom_domains`, { key: pro.key })).body.data;
    expect(list.custom_domains.map((x: any) => x.hostname)).toEqual(["www.frozen-test.com"]);
    // Checking what was added before the lock changes nothing by itself.
    expect((await refresh(pro.key, bucketId, d.id)).status).toBe(200);
  });
});

describe("custom domains: refusals", () => {
  test("every bad hostname gets its code and reason, and nothing is written", async () => {
    const s = await site();
    const cases: Array<[string, string, string]> = [
      ["192.168.1.10", "CUSTOM_DOMAIN_INVALID", "ip_literal"],
      ["[::1]", "CUSTOM_DOMAIN_INVALID", "ip_literal"],
      ["2001:db8::1", "CUSTOM_DOMAIN_INVALID", "ip_literal"],
      [`${"a".repeat(64)}.example.com`, "CUSTOM_DOMAIN_INVALID", "label_too_long"],
      [`${Array.from({ length: 5 }, () => "b".repeat(60)).join(".")}.com`, "CUSTOM_DOMAIN_INVALID", "too_long"],
      ["my_site.example.com", "CUSTOM_DOMAIN_INVALID", "underscore"],
      ["*.example.com", "CUSTOM_DOMAIN_INVALID", "wildcard"],
      ["https://www.example.com/", "CUSTOM_DOMAIN_INVALID", "invalid_characters"],
      ["-bad.example.com", "CUSTOM_DOMAIN_INVALID", "invalid_characters"],
      ["", "CUSTOM_DOMAIN_INVALID", "invalid_characters"],
      ["intranet", "CUSTOM_DOMAIN_INVALID", "single_label"],
      ["co.uk", "CUSTOM_DOMAIN_INVALID", "public_suffix"],
      ["sites.pier.test", "CUSTOM_DOMAIN_RESERVED", "sites_domain"],
      ["Blog.Sites.Pier.Test.", "CUSTOM_DOMAIN_RESERVED", "sites_domain"],
      ["pier.test", "CUSTOM_DOMAIN_RESERVED", "api_host"],
      ["mail.pier.test", "CUSTOM_DOMAIN_RESERVED", "mail_host"],
    ];
    for (const [hostname, code, reason] of cases) {
      const r = await add(pro.key, s.pub.bucketId, hostname);
      expect({ hostname, status: r.status, code: r.body.error?.code, reason: r.body.error?.details?.reason }).toEqual({
        hostname,
        status: code === "CUSTOM_DOMAIN_INVALID" || code === "CUSTOM_DOMAIN_RESERVED" ? 422 : 0,
        code,
        reason,
      });
    }
    const list = await t.api("GET", `/api/v1/buckets/${s.pub.bucketId}/custom_domains`, { key: pro.key });
    expect(list.body.data.custom_domains).toEqual([]);
  });

  test("an unpublished bucket: publish first", async () => {
    const b = await t.api("POST", "/api/v1/buckets", { key: pro.key, body: { bucket: { title: "never published" } } });
    const r = await add(pro.key, b.body.data.bucket.id, "www.unpublished-test.com");
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("CUSTOM_DOMAIN_PUBLISH_FIRST");
    const list = await t.api("GET", `/api/v1/buckets/${b.body.data.bucket.id}/custom_domains`, { key: pro.key });
    expect(list.body.data.custom_domains).toEqual([]);
    expect(list.body.data.publication).toBeNull();
  });

  test("plan limits: Free allows none; a plan of one refuses a second bucket's domain but allows a replacement", async () => {
    const free = await t.user({ plan: "free" });
    const fs = await site(free);
    const r = await add(free.key, fs.pub.bucketId, "www.free-test.com");
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("CUSTOM_DOMAIN_LIMIT_REACHED");
    expect(r.body.error.details).toMatchObject({ reason: "plan_limit", entitlement: "max_custom_domains", max_custom_domains: 0, active_count: 0 });
    expect(r.body.error.details.operator_hint).toContain("pier admin account plan");

    const one = await t.user({ plan: "onedomain" });
    const a = await site(one);
    const b = await site(one);
    const first = await add(one.key, a.pub.bucketId, "www.one-a-test.com");
    expect(first.body.data.limits).toEqual({ active_count: 1, max_custom_domains: 1 });
    const refused = await add(one.key, b.pub.bucketId, "www.one-b-test.com");
    expect(refused.body.error.code).toBe("CUSTOM_DOMAIN_LIMIT_REACHED");
    // Replacing a's pending domain needs no new capacity; so does replacing an active one.
    expect((await add(one.key, a.pub.bucketId, "shop.one-a-test.com")).status).toBe(201);
    const d = (await t.api("GET", `/api/v1/buckets/${a.pub.bucketId}/custom_domains`, { key: one.key })).body.data.custom_domains[0];
    await createRecords(d);
    expect((await refresh(one.key, a.pub.bucketId, d.id)).body.data.custom_domain.status).toBe("active");
    const replacement = await add(one.key, a.pub.bucketId, "www2.one-a-test.com");
    expect(replacement.status).toBe(201);
    expect(replacement.body.data.limits).toEqual({ active_count: 1, max_custom_domains: 1 });
  });

  test("another account's hostname: pending elsewhere is allowed; verified elsewhere waits until its DNS moves, then changes hands", async () => {
    const alice = await t.user({ plan: "pro" });
    const bob = await t.user({ plan: "pro" });
    const as = await site(alice);
    const bs = await site(bob);
    const ad = (await add(alice.key, as.pub.bucketId, "www.contested-test.com")).body.data.custom_domain;
    const bAdd = await add(bob.key, bs.pub.bucketId, "www.contested-test.com");
    expect(bAdd.status).toBe(201);
    const bd = bAdd.body.data.custom_domain;
    // Each claim has its own token.
    expect(record(bd, "ownership").value).not.toBe(record(ad, "ownership").value);

    await createRecords(ad);
    expect((await refresh(alice.key, as.pub.bucketId, ad.id)).body.data.custom_domain.status).toBe("active");
    // Bob's claim sees alice's records but not his token: it stays pending.
    const br = await refresh(bob.key, bs.pub.bucketId, bd.id);
    expect(br.body.data.custom_domain.status).toBe("pending_validation");
    expect(record(br.body.data.custom_domain, "ownership").found).toBe(false);

    // A claim after alice verified the name waits, saying why.
    const late = await t.user({ plan: "pro" });
    const ls = await site(late, "the name's new owner");
    const claimed = await add(late.key, ls.pub.bucketId, "WWW.contested-test.com.");
    expect(claimed.status).toBe(201);
    const ld = claimed.body.data.custom_domain;
    expect([ld.status, ld.failure_reason]).toEqual(["pending_validation", expect.stringContaining("is verified for another site")]);
    expect((await refresh(late.key, ls.pub.bucketId, ld.id)).body.data.custom_domain.status).toBe("pending_validation");
    expect(await body(await siteFetch(t, "www.contested-test.com", "/"))).toContain("hello from a custom domain");
    // Other accounts cannot read or remove alice's domain through their own buckets.
    expect((await t.api("DELETE", `/api/v1/buckets/${as.pub.bucketId}/custom_domains/${ad.id}`, { key: bob.key })).body.error.code).toBe("BUCKET_NOT_FOUND");
    expect((await t.api("DELETE", `/api/v1/buckets/${bs.pub.bucketId}/custom_domains/${ad.id}`, { key: bob.key })).body.error.code).toBe(
      "CUSTOM_DOMAIN_NOT_FOUND",
    );
    expect((await siteFetch(t, "www.contested-test.com", "/")).status).toBe(200);

    // The name changes hands: its DNS now holds the new owner's record and no longer alice's.
    // Alice is warned and the name waits out the grace period with the claim's reason saying when.
    await cts.clearTxt(record(ad, "ownership").name);
    await cts.setTxt(record(ld, "ownership").name, record(ld, "ownership").value);
    const waiting = (await refresh(late.key, ls.pub.bucketId, ld.id)).body.data.custom_domain;
    expect([waiting.status, waiting.failure_reason]).toEqual(["pending_validation", expect.stringContaining("it moves to this site at ")]);
    const notes = async () => (await t.api("GET", "/api/v1/notifications", { key: alice.key })).body.data.notifications;
    expect((await notes())[0]).toMatchObject({ kind: "custom_domain_contested", data: { hostname: "www.contested-test.com", custom_domain_id: ad.id } });
    expect((await notes())[0].body).toContain(record(ad, "ownership").value);
    expect(await body(await siteFetch(t, "www.contested-test.com", "/"))).toContain("hello from a custom domain");
    t.clock.advance(71 * 3_600_000);
    expect((await refresh(late.key, ls.pub.bucketId, ld.id)).body.data.custom_domain.status).toBe("pending_validation");
    t.clock.advance(2 * 3_600_000);
    const moved = (await refresh(late.key, ls.pub.bucketId, ld.id)).body.data.custom_domain;
    expect([moved.status, moved.failure_reason]).toEqual(["active", null]);
    expect(await body(await siteFetch(t, "www.contested-test.com", "/"))).toContain("the name's new owner");
    expect((await t.api("GET", `/api/v1/buckets/${as.pub.bucketId}/custom_domains/${ad.id}`, { key: alice.key })).body.error.code).toBe(
      "CUSTOM_DOMAIN_NOT_FOUND",
    );
    const told = (await notes())[0];
    expect(told).toMatchObject({ kind: "custom_domain_lost", data: { hostname: "www.contested-test.com", custom_domain_id: ad.id } });
    expect(JSON.stringify(told)).not.toContain(ld.id);
    t.clock.advance(-73 * 3_600_000); // the re-check job's tests below count what is due from now
    // Alice's site answers at its managed address again; bob's old claim cannot take the name back.
    expect((await t.api("GET", `/api/v1/publications/${as.pub.id}`, { key: alice.key })).body.data.publication.public_url).not.toContain("contested-test");
    expect((await refresh(bob.key, bs.pub.bucketId, bd.id)).body.data.custom_domain.status).toBe("pending_validation");
  });
});

describe("custom domains: the re-check job", () => {
  test("backs off (1, 2, 5, 10, 30 minutes, then hourly), activates once records appear, gives up after 7 days; refresh revives", async () => {
    const s = await site();
    const d = (await add(pro.key, s.pub.bucketId, "www.backoff-test.com")).body.data.custom_domain;
    const get = async () => (await t.api("GET", `/api/v1/buckets/${s.pub.bucketId}/custom_domains/${d.id}`, { key: pro.key })).body.data.custom_domain;
    expect(Date.parse(d.next_check_at) - Date.parse(d.created_at)).toBe(60_000);

    // Not due yet: nothing is checked.
    expect((await recheckDueDomains(t.pier.deps)).checked).toBe(0);
    const gaps: number[] = [];
    let prev = d.next_check_at;
    for (let i = 0; i < 6; i++) {
      t.clock.advance(Date.parse(prev) - t.clock.now().getTime() + 1);
      const run = await recheckDueDomains(t.pier.deps);
      expect(run.checked).toBeGreaterThanOrEqual(1);
      const now = await get();
      gaps.push(Math.round((Date.parse(now.next_check_at) - Date.parse(now.last_checked_at)) / 60_000));
      prev = now.next_check_at;
    }
    expect(gaps).toEqual([2, 5, 10, 30, 60, 60]);

    // Keep missing until the seven days are up: status failed, with a reason, no more checks.
    let cur = await get();
    for (let i = 0; i < 400 && cur.status === "pending_validation"; i++) {
      t.clock.advance(Date.parse(cur.next_check_at) - t.clock.now().getTime() + 1);
      await recheckDueDomains(t.pier.deps);
      cur = await get();
    }
    expect(cur.status).toBe("failed");
    expect(cur.failure_reason).toContain("7 days");
    expect(cur.next_check_at).toBeNull();
    expect(Date.parse(cur.last_checked_at) - Date.parse(d.created_at)).toBeGreaterThanOrEqual(7 * 86_400_000);

    // The user creates the records and refreshes: checked at once, active.
    await createRecords(d);
    const r = await refresh(pro.key, s.pub.bucketId, d.id);
    expect(r.body.data.custom_domain.status).toBe("active");
    expect(r.body.data.custom_domain.failure_reason).toBeNull();
  });

  test("the job activates a domain whose records appeared, without a refresh", async () => {
    const s = await site();
    const d = (await add(pro.key, s.pub.bucketId, "www.job-activates-test.com")).body.data.custom_domain;
    await createRecords(d);
    t.clock.advance(61_000);
    const run = await recheckDueDomains(t.pier.deps);
    expect(run.activated).toBeGreaterThanOrEqual(1);
    expect((await siteFetch(t, "www.job-activates-test.com", "/")).status).toBe(200);
  });
});

describe("custom domains: the re-check job with automatic HTTPS", () => {
  // The real certificate manager, with a CA that never answers (a closed port): a verified
  // domain then waits for a certificate that never comes, as one whose name no longer reaches Pier does.
  let h: TestPier;
  beforeAll(async () => {
    h = await startTestPier({
      baseUrl: "http://pier.test",
      sitesDomain: "sites.pier.test",
      dnsResolver: cts.dns,
      acme: "on",
      httpsPort: 0,
      acmeDirectory: "https://127.0.0.1:9/directory",
      acmeEmail: "ops@example.com",
    });
    const direct = h.api;
    h.api = (method, path, o = {}) => direct(method, path, { ...o, headers: { host: "pier.test", ...o.headers } });
  });
  afterAll(() => h?.stop());

  test("a verified domain still without its certificate seven days on is failed and no longer checked every minute; refresh revives it", async () => {
    expect(h.pier.deps.certificates).not.toBeNull();
    const owner = await h.user({ plan: "pro" });
    const s = await publishSite(h, { user: owner, files: page("waiting for a certificate"), slug: `certwait-${Date.now().toString(36)}` });
    const url = `/api/v1/buckets/${s.pub.bucketId}/custom_domains`;
    const d = (await h.api("POST", url, { key: owner.key, body: { hostname: "www.no-certificate-test.com" } })).body.data.custom_domain;
    await createRecords(d);
    const verified = (await h.api("POST", `${url}/${d.id}/refresh`, { key: owner.key })).body.data.custom_domain;
    expect(verified).toMatchObject({ status: "pending_validation", verified: true, ssl_status: "pending_validation" });

    // A day on: still waiting, looked at again a minute later.
    h.clock.advance(86_400_000);
    await recheckDueDomains(h.pier.deps);
    let cur = (await h.api("GET", `${url}/${d.id}`, { key: owner.key })).body.data.custom_domain;
    expect(cur.status).toBe("pending_validation");
    expect(Date.parse(cur.next_check_at) - Date.parse(cur.updated_at)).toBe(60_000);

    // Seven days after its records were last looked at: failed, with the reason, no more checks.
    h.clock.advance(6 * 86_400_000);
    await recheckDueDomains(h.pier.deps);
    cur = (await h.api("GET", `${url}/${d.id}`, { key: owner.key })).body.data.custom_domain;
    expect(cur).toMatchObject({ status: "failed", verified: true, next_check_at: null });
    expect(cur.failure_reason).toContain("certificate");
    h.clock.advance(3_600_000);
    expect((await recheckDueDomains(h.pier.deps)).checked).toBe(0);

    // Refresh looks again and starts a new wait.
    const again = (await h.api("POST", `${url}/${d.id}/refresh`, { key: owner.key })).body.data.custom_domain;
    expect(again).toMatchObject({ status: "pending_validation", failure_reason: null });
    expect(Date.parse(again.next_check_at) - Date.parse(again.updated_at)).toBe(60_000);
  });
});

describe("custom domains: site rules", () => {
  test("`_redirects` and `_headers` apply on the custom domain as on the slug; Set-Cookie only on the custom domain", async () => {
    const s = await publishSite(t, {
      user: pro,
      slug: `rulesite-${Date.now().toString(36)}`,
      files: [
        ...page("rules on a custom domain"),
        { path: "_redirects", bytes: new TextEncoder().encode("/old/:id /new/:id 301\n") },
        { path: "_headers", bytes: new TextEncoder().encode("/*\n  X-Rules: on\n  Set-Cookie: pref=1; Path=/\n") },
      ],
    });
    const d = (await add(pro.key, s.pub.bucketId, "rules.example-shop.net")).body.data.custom_domain;
    await createRecords(d);
    expect((await refresh(pro.key, s.pub.bucketId, d.id)).body.data.custom_domain.status).toBe("active");

    for (const host of ["rules.example-shop.net", s.host]) {
      const moved = await siteFetch(t, host, "/old/42");
      expect(moved.status).toBe(301);
      expect(moved.headers.get("location")).toBe("/new/42");
      const home = await siteFetch(t, host, "/");
      expect(home.status).toBe(200);
      expect(home.headers.get("x-rules")).toBe("on");
      // A cookie set under the shared sites domain could shadow another site's: dropped there.
      expect(home.headers.get("set-cookie")).toBe(host === s.host ? null : "pref=1; Path=/");
    }
  });
});
