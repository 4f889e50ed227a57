// A custom domain from the first request to HTTPS, with nothing mocked: one pebble-challtestsrv
// is the DNS for both Pier's record checks and pebble's validation, pebble issues the
// certificate over HTTP-01 on Pier's HTTP port, and the site is fetched over TLS with the test
// CA trusted. Then replace (the old domain serves until the new one is active) and delete (the
// hostname stops being served and its certificate is forgotten); deleting the bucket forgets it too.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { httpsGet, ACME_SETUP_MS, startAcmePier, untilPresented, type AcmeSetup } from "../../helpers/acme";
import { startChallTestSrv, type ChallTestSrv } from "../../helpers/challtestsrv";
import { publishSite, siteFetch } from "../../helpers/sites";
import type { TestUser } from "../../helpers/pier";

let dns: ChallTestSrv;
let s: AcmeSetup;
let owner: TestUser;

beforeAll(async () => {
  // Every name answers A 127.0.0.1 (so pebble reaches Pier); TXT and CNAME exist only once created.
  dns = await startChallTestSrv({ defaultIPv4: "127.0.0.1" });
  s = await startAcmePier({ dns: dns.dns, overrides: { smtpPort: null } });
  owner = await s.t.user({ plan: "pro" });
}, ACME_SETUP_MS);
afterAll(async () => {
  await s?.stop();
  await dns?.stop();
});

const httpsPort = () => s.t.pier.ports.https!;
const record = (d: any, purpose: string) => d.required_dns_records.find((r: any) => r.purpose === purpose);
const domainsUrl = (bucketId: string) => `/api/v1/buckets/${bucketId}/custom_domains`;

async function createRecords(d: any) {
  await dns.setTxt(record(d, "ownership").name, record(d, "ownership").value);
  await dns.setCname(record(d, "traffic").name, record(d, "traffic").value);
}

/** Refresh until the domain is active (the certificate is ordered by the first refresh that finds the records). */
async function refreshUntilActive(bucketId: string, id: string) {
  const until = Date.now() + 30_000;
  for (;;) {
    const r = await s.t.api("POST", `${domainsUrl(bucketId)}/${id}/refresh`, { key: owner.key });
    expect(r.status).toBe(200);
    const d = r.body.data.custom_domain;
    if (d.status === "active") return d;
    expect(d.ssl_status).not.toBe("failed");
    if (Date.now() > until) throw new Error(`domain stayed ${JSON.stringify(d)}`);
    await Bun.sleep(200);
  }
}

/**
 * A domain change reaches this process's answers at once and a serving worker's (PIER_TEST_WORKERS)
 * within its poll interval (docs/deployment.md §9): without workers the first answer must already
 * have `status`; with them, one within 20 s.
 */
async function expectSiteStatus(host: string, status: number) {
  const until = Date.now() + (s.t.servingWorkers > 1 ? 20_000 : 0);
  let got = (await siteFetch(s.t, host, "/")).status;
  while (got !== status && Date.now() < until) {
    await Bun.sleep(50);
    got = (await siteFetch(s.t, host, "/")).status;
  }
  expect(got).toBe(status);
}

/** HTTPS GET once the listener serves the host's own certificate (swaps are coalesced). */
async function fetchOverHttps(host: string) {
  await untilPresented(s, host, (c) => c.subjectAltName?.includes(`DNS:${host}`) ?? false, 30_000);
  return httpsGet(httpsPort(), host, "/", s.root);
}

test("publish, add a domain, records pending, create them, refresh: certificate issued, active, the site over HTTPS; replace; delete", async () => {
  const site = await publishSite(s.t, { user: owner, files: [{ path: "index.html", bytes: "<h1>shop over https</h1>" }] });
  const bucketId = site.pub.bucketId;

  const created = await s.t.api("POST", domainsUrl(bucketId), { key: owner.key, body: { hostname: "www.shop.test" } });
  expect(created.status).toBe(201);
  const d = created.body.data.custom_domain;
  expect(d.status).toBe("pending_validation");
  expect(d.ssl_status).toBe("pending_validation");
  expect(d.required_dns_records.map((r: any) => r.found)).toEqual([false, false]);
  // Nothing verified yet: the host policy refuses the name, so no certificate is ordered for it.
  expect(s.acme.state("www.shop.test").status).toBe("none");

  await createRecords(d);
  const active = await refreshUntilActive(bucketId, d.id);
  expect(active.ssl_status).toBe("active");
  expect(active.public_url).toStartWith("https://www.shop.test");
  expect(s.acme.state("www.shop.test").status).toBe("issued");

  const res = await fetchOverHttps("www.shop.test");
  expect(res.status).toBe(200);
  expect(res.body).toContain("shop over https");
  expect(res.cert.subjectAltName).toContain("DNS:www.shop.test");
  // The publication's public URL is the domain now; the managed slug keeps working.
  const pub = await s.t.api("GET", `/api/v1/buckets/${bucketId}`, { key: owner.key });
  expect(pub.body.data.bucket.website.public_url).toStartWith("https://www.shop.test");
  const slugHost = site.host.split(":")[0]!;
  expect((await fetchOverHttps(slugHost)).status).toBe(200);

  // Replace: the new domain is pending and the old one keeps serving until the new one is active.
  const replaced = await s.t.api("POST", domainsUrl(bucketId), { key: owner.key, body: { hostname: "shop2.test.example" } });
  expect(replaced.status).toBe(201);
  const next = replaced.body.data.custom_domain;
  expect(next.status).toBe("pending_validation");
  expect((await httpsGet(httpsPort(), "www.shop.test", "/", s.root)).status).toBe(200);
  await createRecords(next);
  await refreshUntilActive(bucketId, next.id);
  const onNew = await fetchOverHttps("shop2.test.example");
  expect(onNew.body).toContain("shop over https");
  // The old domain is gone: no longer served, its certificate forgotten.
  expect(s.acme.state("www.shop.test").status).toBe("none");
  await expectSiteStatus("www.shop.test", 404);

  // Delete: served no more at once, certificate forgotten, the slug still works.
  const del = await s.t.api("DELETE", `${domainsUrl(bucketId)}/${next.id}`, { key: owner.key });
  expect(del.status).toBe(200);
  expect(s.acme.state("shop2.test.example").status).toBe("none");
  await expectSiteStatus("shop2.test.example", 404);
  // The listener drops the certificate at its next (coalesced) swap, moments later.
  await untilPresented(s, "shop2.test.example", (c) => !c.subjectAltName?.includes("DNS:shop2.test.example"));
  expect((await httpsGet(httpsPort(), slugHost, "/", s.root)).status).toBe(200);
}, 90_000);

test("a name that changes hands keeps its certificate: the new site answers over HTTPS at once, nothing ordered again (D319)", async () => {
  const host = "www.handover-shop.test";
  const first = await publishSite(s.t, { user: owner, files: [{ path: "index.html", bytes: "<h1>the first owner</h1>" }] });
  const held = (await s.t.api("POST", domainsUrl(first.pub.bucketId), { key: owner.key, body: { hostname: host } })).body.data.custom_domain;
  await createRecords(held);
  await refreshUntilActive(first.pub.bucketId, held.id);
  const before = await fetchOverHttps(host);
  expect(before.body).toContain("the first owner");

  // The name is sold: its DNS now holds the buyer's ownership record instead of the first owner's.
  const buyer = await s.t.user({ plan: "pro" });
  const second = await publishSite(s.t, { user: buyer, files: [{ path: "index.html", bytes: "<h1>the new owner</h1>" }] });
  const claim = (await s.t.api("POST", domainsUrl(second.pub.bucketId), { key: buyer.key, body: { hostname: host } })).body.data.custom_domain;
  await dns.clearTxt(record(held, "ownership").name);
  await dns.setTxt(record(claim, "ownership").name, record(claim, "ownership").value);
  const refresh = async () => (await s.t.api("POST", `${domainsUrl(second.pub.bucketId)}/${claim.id}/refresh`, { key: buyer.key })).body.data.custom_domain;
  expect((await refresh()).status).toBe("pending_validation");
  s.t.clock.advance(73 * 3_600_000); // past the grace period
  try {
    expect(await refresh()).toMatchObject({ status: "active", ssl_status: "active" });
  } finally {
    s.t.clock.advance(-73 * 3_600_000);
  }
  expect(s.acme.state(host).status).toBe("issued");
  // A serving worker (PIER_TEST_WORKERS) learns of the change within its poll interval.
  let after = await httpsGet(httpsPort(), host, "/", s.root);
  for (const until = Date.now() + (s.t.servingWorkers > 1 ? 20_000 : 0); !after.body.includes("the new owner") && Date.now() < until; ) {
    await Bun.sleep(50);
    after = await httpsGet(httpsPort(), host, "/", s.root);
  }
  expect(after.body).toContain("the new owner");
  expect(after.cert.fingerprint256).toBe(before.cert.fingerprint256);
}, 90_000);

test("deleting the bucket forgets its custom domain's certificate: no longer served, row and key gone (D240)", async () => {
  const site = await publishSite(s.t, { user: owner, files: [{ path: "index.html", bytes: "<h1>gone soon</h1>" }] });
  const bucketId = site.pub.bucketId;
  const host = "www.gone-shop.test";
  const d = (await s.t.api("POST", domainsUrl(bucketId), { key: owner.key, body: { hostname: host } })).body.data.custom_domain;
  await createRecords(d);
  await refreshUntilActive(bucketId, d.id);
  expect((await fetchOverHttps(host)).status).toBe(200);
  const keyFile = join(s.t.dataDir, "acme", "certs", host, "key.pem");
  expect(existsSync(keyFile)).toBe(true);

  expect((await s.t.api("DELETE", `/api/v1/buckets/${bucketId}/publication`, { key: owner.key })).status).toBe(202);
  let del = await s.t.api("DELETE", `/api/v1/buckets/${bucketId}`, { key: owner.key, body: { confirmation: `delete ${bucketId}` } });
  for (const until = Date.now() + 20_000; del.status === 409 && Date.now() < until; ) {
    await Bun.sleep(100); // the unpublish job is still running
    del = await s.t.api("DELETE", `/api/v1/buckets/${bucketId}`, { key: owner.key, body: { confirmation: `delete ${bucketId}` } });
  }
  expect(del.status).toBe(200);

  expect(s.acme.state(host).status).toBe("none");
  expect(s.acme.certificateFor(host)).toBeNull();
  expect(s.acme.servedCertificates().map((c) => c.host)).not.toContain(host);
  expect(existsSync(keyFile)).toBe(false);
  await untilPresented(s, host, (c) => !c.subjectAltName?.includes(`DNS:${host}`));
}, 90_000);
