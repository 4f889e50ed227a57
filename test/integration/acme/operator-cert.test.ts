// --tls-cert stays supported with automatic HTTPS and wins for the names it covers: a wildcard
// for the sites domain means no site host is ever ordered, while the API host (not covered) is;
// a verified custom domain it covers is active at once, served with it and never ordered (D240).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "selfsigned";
import { listCertificates } from "../../../src/acme";
import { presentedCertificate, ACME_SETUP_MS, startAcmePier, type AcmeSetup } from "../../helpers/acme";
import { startChallTestSrv, type ChallTestSrv } from "../../helpers/challtestsrv";
import { publishSite, siteFetch } from "../../helpers/sites";

let s: AcmeSetup;
let dns: ChallTestSrv;
beforeAll(async () => {
  dns = await startChallTestSrv({ defaultIPv4: "127.0.0.1" });
  const dir = mkdtempSync(join(tmpdir(), "pier-wildcard-"));
  const pems = await generate([{ name: "commonName", value: "*.sites.localhost" }], {
    keySize: 2048,
    days: 30,
    algorithm: "sha256",
    extensions: [
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "*.sites.localhost" },
          { type: 2, value: "*.operator-corp.test" },
        ],
      },
    ],
  } as Parameters<typeof generate>[1]);
  writeFileSync(join(dir, "cert.pem"), pems.cert);
  writeFileSync(join(dir, "key.pem"), pems.private);
  s = await startAcmePier({ dns: dns.dns, overrides: { tlsCert: join(dir, "cert.pem"), tlsKey: join(dir, "key.pem") } });
}, ACME_SETUP_MS);
afterAll(async () => {
  await s?.stop();
  await dns?.stop();
});

test("the operator's wildcard serves the site hosts and none of them is ordered; the API host still gets its own", async () => {
  const orders = s.pebble.orderCount();
  const site = await publishSite(s.t, { files: [{ path: "index.html", bytes: "<p>wildcard</p>" }] });
  expect((await siteFetch(s.t, site.host, "/")).status).toBe(200); // not redirected: no ACME certificate for it
  await Bun.sleep(500);
  expect(s.pebble.orderCount()).toBe(orders);
  expect(listCertificates(s.t.pier.deps).map((c) => c.host)).toEqual([s.apiHost]);
  expect((await presentedCertificate(s.t.pier.ports.https!, site.host)).subjectAltName).toBe("DNS:*.sites.localhost, DNS:*.operator-corp.test");
  expect((await presentedCertificate(s.t.pier.ports.https!, s.apiHost)).subjectAltName).toBe(`DNS:${s.apiHost}`);
});

test("a verified custom domain the operator's certificate covers is active at once, served with it, never ordered", async () => {
  const owner = await s.t.user({ plan: "pro" });
  const site = await publishSite(s.t, { user: owner, files: [{ path: "index.html", bytes: "<p>covered</p>" }] });
  const host = "blog.operator-corp.test";
  const added = await s.t.api("POST", `/api/v1/buckets/${site.pub.bucketId}/custom_domains`, { key: owner.key, body: { hostname: host } });
  const d = added.body.data.custom_domain;
  const record = (purpose: string) => d.required_dns_records.find((r: any) => r.purpose === purpose);
  await dns.setTxt(record("ownership").name, record("ownership").value);
  await dns.setCname(record("traffic").name, record("traffic").value);
  const orders = s.pebble.orderCount();
  const r = await s.t.api("POST", `/api/v1/buckets/${site.pub.bucketId}/custom_domains/${d.id}/refresh`, { key: owner.key });
  expect(r.body.data.custom_domain).toMatchObject({ verified: true, status: "active", ssl_status: "not_managed", ssl_error: null });
  expect(r.body.data.custom_domain.public_url).toStartWith(`https://${host}`);
  expect(s.acme.state(host).status).toBe("none");
  await Bun.sleep(500);
  expect(s.pebble.orderCount()).toBe(orders);
  expect((await siteFetch(s.t, host, "/")).status).toBe(200);
  expect((await presentedCertificate(s.t.pier.ports.https!, host)).subjectAltName).toContain("DNS:*.operator-corp.test");
});
