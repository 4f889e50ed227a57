// Attacks on automatic HTTPS (docs/certificates.md, "Security"): making Pier order
// certificates for names it does not serve, to burn the CA's rate limits, fill the disk and the
// table, or get a certificate for someone else's name; and stealing a challenge answer.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { listCertificates } from "../../src/acme";
import { hostAllowed } from "../../src/acme";
import { presentedCertificate, ACME_SETUP_MS, startAcmePier, type AcmeSetup } from "../helpers/acme";
import { publishSite, siteFetch } from "../helpers/sites";

let s: AcmeSetup;
beforeAll(async () => {
  s = await startAcmePier();
}, ACME_SETUP_MS);
afterAll(() => s?.stop());

const jobsQueued = () => (s.t.pier.deps.sqlite.query("select count(*) as n from jobs where kind = 'acme.issue'").get() as { n: number }).n;

describe("automatic HTTPS host policy", () => {
  test("a flood of random SNI names and Host headers creates no order, no row and no job", async () => {
    const orders = s.pebble.orderCount();
    const jobs = jobsQueued();
    const names = Array.from({ length: 300 }, (_, i) => `${crypto.randomUUID().slice(0, 12)}${i}.sites.localhost`);
    const others = Array.from({ length: 100 }, (_, i) => `victim${i}.example.com`);
    for (const name of [...names, ...others]) {
      await siteFetch(s.t, name, "/").then((r) => r.arrayBuffer());
    }
    for (const name of names.slice(0, 50)) await presentedCertificate(s.t.pier.ports.https!, name);
    await Bun.sleep(500);
    expect(s.pebble.orderCount()).toBe(orders);
    expect(jobsQueued()).toBe(jobs);
    expect(listCertificates(s.t.pier.deps).map((c) => c.host)).toEqual([s.apiHost]);
  });

  test("names that are not plain DNS names under Pier's own hosts are refused before any lookup", () => {
    const deps = s.t.pier.deps;
    for (const host of [
      "127.0.0.1",
      "10.0.0.1",
      "*.sites.localhost",
      "a_b.sites.localhost",
      `${"a".repeat(64)}.sites.localhost`,
      "sites.localhost",
      "x.y.sites.localhost",
      "pier.localhost.evil.com",
      "localhost",
    ])
      expect(hostAllowed(host, deps)).toBe(false);
    expect(hostAllowed(s.apiHost, deps)).toBe(true);
  });

  test("an unpublished site stops being a name Pier orders for", async () => {
    const site = await publishSite(s.t, { files: [{ path: "index.html", bytes: "hi" }] });
    expect(hostAllowed(site.host, s.t.pier.deps)).toBe(true);
    s.t.pier.deps.sqlite.run("update publications set status = 'unpublished' where id = ?", [site.pub.id]);
    expect(hostAllowed(site.host, s.t.pier.deps)).toBe(false);
  });

  test("a challenge answer is only served for a token of an order in flight", async () => {
    for (const token of ["..%2F..%2Faccount.key", "x".repeat(300), "%2e%2e%2faccount.key", "missing"]) {
      const res = await siteFetch(s.t, s.apiHost, `/.well-known/acme-challenge/${token}`);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain("PRIVATE KEY");
    }
  });
});
