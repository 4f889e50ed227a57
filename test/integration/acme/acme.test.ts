// Automatic HTTPS against a real ACME CA (pebble, validating HTTP-01 on Pier's HTTP port):
// certificates issued, served by SNI, renewed, retried after failures, kept across restarts,
// and used for SMTP STARTTLS.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { statSync } from "node:fs";
import { join } from "node:path";
import { listCertificates } from "../../../src/acme";
import { admin as runAdmin } from "../../../src/cli/admin";
import { startPier } from "../../../src/runtime";
import { silentLogger } from "../../../src/core/log";
import {
  httpsGet,
  presentedCertificate,
  starttlsCertificate,
  ACME_SETUP_MS,
  startAcmePier,
  untilPresented,
  waitForState,
  type AcmeSetup,
} from "../../helpers/acme";
import { publishSite, siteFetch } from "../../helpers/sites";

async function waitUntil(ok: () => boolean, ms = 30_000) {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error("timed out");
    await Bun.sleep(50);
  }
}

const PAGE = [{ path: "index.html", bytes: "<h1>hello over https</h1>" }];
let s: AcmeSetup;

beforeAll(async () => {
  // One hour of validity: renewal is due 40 minutes in, reached by moving the test clock.
  s = await startAcmePier({ validitySeconds: 3600, overrides: { hsts: 600, smtpPort: 0, mxHost: "mx.localhost" } });
}, ACME_SETUP_MS);
afterAll(() => s?.stop());

const httpsPort = () => s.t.pier.ports.https!;

describe("automatic HTTPS with a real ACME CA", () => {
  test("the API host's certificate is ordered at start and served over HTTPS, chaining to the CA", async () => {
    await waitForState(s.acme, s.apiHost, (x) => x.status === "issued");
    await untilPresented(s, s.apiHost, (c) => c.subjectAltName === `DNS:${s.apiHost}`); // the listener swap is coalesced
    const res = await httpsGet(httpsPort(), s.apiHost, "/api/v1/status", s.root);
    expect(res.status).toBe(200);
    expect(res.cert.subjectAltName).toContain(`DNS:${s.apiHost}`);
    // HSTS on HTTPS responses when --hsts is set
    expect(res.headers["strict-transport-security"]).toBe("max-age=600");
    const key = statSync(join(s.t.dataDir, "acme", "certs", s.apiHost, "key.pem"));
    expect(key.mode & 0o777).toBe(0o600);
    expect(statSync(join(s.t.dataDir, "acme", "account.key")).mode & 0o777).toBe(0o600);
  });

  test("the operator sees every certificate's state: pier admin certs, and the status endpoint for the instance admin only", async () => {
    const admin = await s.t.user(); // the first user runs the instance
    const other = await s.t.user();
    const status = await s.t.api("GET", "/api/v1/status", { key: admin.key });
    const api = status.body.data.automatic_https.certificates.find((c: { host: string }) => c.host === s.apiHost);
    expect(status.body.data.automatic_https.enabled).toBe(true);
    expect(api.status).toBe("issued");
    expect(Date.parse(api.expires_at)).toBeGreaterThan(Date.now());
    expect((await s.t.api("GET", "/api/v1/status", { key: other.key })).body.data.automatic_https).toBeUndefined();
    // A narrow key of the admin's (read-only, or limited to some buckets) is a narrow key: no instance data.
    for (const narrow of [
      s.t.key(admin, { scope: "bucket_read" }),
      s.t.key(admin, { scope: "bucket_admin", bucketAccess: "selected", bucketPermissions: {} }),
    ]) {
      expect((await s.t.api("GET", "/api/v1/status", { key: narrow })).body.data.automatic_https).toBeUndefined();
    }
    const out: string[] = [];
    const code = await runAdmin(["certs", "--data-dir", s.t.dataDir], { out: (l) => out.push(l), err: () => {} });
    expect(code).toBe(0);
    expect(out.join("\n")).toMatch(/^HOST\s+STATUS\s+EXPIRES\s+NEXT ATTEMPT\s+LAST ERROR/);
    expect(out.join("\n")).toContain(`${s.apiHost}  issued`);
  });

  test("HTTP redirects to HTTPS (308) for a host with a certificate, but never the challenge path", async () => {
    const res = await fetch(`${s.t.url}/api/v1/status?x=1`, { headers: { host: `${s.apiHost}:${s.t.pier.httpPort}` }, redirect: "manual" });
    expect(res.status).toBe(308);
    expect(res.headers.get("location")).toBe(`https://${s.apiHost}:${httpsPort()}/api/v1/status?x=1`);
    expect(res.headers.get("strict-transport-security")).toBeNull();
    const challenge = await fetch(`${s.t.url}/.well-known/acme-challenge/unknown-token`, { headers: { host: s.apiHost }, redirect: "manual" });
    expect(challenge.status).toBe(404);
  });

  test("a published site gets its certificate when it goes live; before that its host is served over HTTP", async () => {
    const site = await publishSite(s.t, { files: PAGE });
    await waitForState(s.acme, site.host, (x) => x.status === "issued");
    await untilPresented(s, site.host, (c) => c.subjectAltName === `DNS:${site.host}`);
    const res = await httpsGet(httpsPort(), site.host, "/", s.root);
    expect(res.status).toBe(200);
    expect(res.body).toContain("hello over https");
    expect(res.cert.subjectAltName).toBe(`DNS:${site.host}`);
    expect((await siteFetch(s.t, site.host, "/")).status).toBe(308);
  });

  test("a site gate's cookie is Secure when the site is served over HTTPS", async () => {
    const site = await publishSite(s.t, { files: PAGE, access: "password", password: "open sesame" });
    await waitForState(s.acme, site.host, (x) => x.status === "issued");
    await untilPresented(s, site.host, (c) => c.subjectAltName === `DNS:${site.host}`);
    const res = await fetch(`https://${site.host}:${httpsPort()}/_pier/gate/password`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: `https://${site.host}:${httpsPort()}` },
      body: new URLSearchParams({ password: "open sesame", next: "/" }).toString(),
      redirect: "manual",
      tls: { ca: s.root },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get("set-cookie")).toMatch(/;\s*Secure/i);
  });

  test("on demand: a live site host without a certificate gets one from its first request", async () => {
    const site = await publishSite(s.t, { files: PAGE });
    await waitForState(s.acme, site.host, (x) => x.status === "issued");
    s.acme.forget(site.host);
    expect(s.acme.state(site.host).status).toBe("none");
    // The handshake itself gets the fallback certificate (Bun cannot hold it open)...
    await untilPresented(s, site.host, (c) => c.subjectAltName !== `DNS:${site.host}`);
    // ...and the first request for the name, here over plain HTTP, starts the order.
    // To the primary: the order is queued at the clock of the process that saw the request, and
    // serving workers (PIER_TEST_WORKERS) run on the real clock, not this test's.
    const first = await s.t.primaryFetch(site.host, "/");
    expect(first.status).toBe(200);
    await waitForState(s.acme, site.host, (x) => x.status === "issued");
    await untilPresented(s, site.host, (c) => c.subjectAltName === `DNS:${site.host}`);
    expect((await httpsGet(httpsPort(), site.host, "/", s.root)).status).toBe(200);
  });

  test("pier admin certs forget, run beside the server, stops the running server serving that certificate at its next sweep", async () => {
    const site = await publishSite(s.t, { files: PAGE });
    await siteFetch(s.t, site.host, "/");
    await waitForState(s.acme, site.host, (x) => x.status === "issued");
    await waitUntil(() => s.acme.servedCertificates().some((c) => c.host === site.host));
    const code = await runAdmin(["certs", "forget", site.host, "--data-dir", s.t.dataDir], { out: () => {}, err: () => {} });
    expect(code).toBe(0);
    // Another process deleted the row and files; the server's own sweep (every minute) notices.
    expect(s.acme.sweep()).toMatchObject({ dropped: 1 });
    expect(s.acme.state(site.host).status).toBe("none");
    await untilPresented(s, site.host, (c) => !c.subjectAltName?.includes(`DNS:${site.host}`));
  });

  test("an unpublished or unknown host never starts an order", async () => {
    const ordersBefore = s.pebble.orderCount();
    const unknown = ["nosuchsite.sites.localhost", "preview-nosuchsite.sites.localhost", "other.example.com", "a.b.sites.localhost"];
    for (const host of unknown) {
      await siteFetch(s.t, host, "/").then((r) => r.arrayBuffer());
      await presentedCertificate(httpsPort(), host);
    }
    await Bun.sleep(500);
    expect(s.pebble.orderCount()).toBe(ordersBefore);
    const hosts = listCertificates(s.t.pier.deps).map((c) => c.host);
    for (const host of unknown) expect(hosts).not.toContain(host);
    // Not redirected either: no certificate, so HTTP keeps serving (here: the site-not-found page).
    expect((await siteFetch(s.t, "nosuchsite.sites.localhost", "/")).status).toBe(404);
  });

  test("a failed validation is recorded with its reason and retried later with backoff; the site keeps working over HTTP", async () => {
    const slug = `failing-${Date.now().toString(36)}`;
    // The name points where Pier does not listen (Pier binds 127.0.0.1 only): validation fails.
    await fetch(`${s.pebble.challtest}/add-a`, { method: "POST", body: JSON.stringify({ host: `${slug}.sites.localhost.`, addresses: ["127.0.0.2"] }) });
    const site = await publishSite(s.t, { files: PAGE, slug });
    const failed = await waitForState(s.acme, site.host, (x) => x.status === "failed");
    expect(failed.reason).toBeString();
    expect(failed.reason!.length).toBeGreaterThan(10);
    const row = listCertificates(s.t.pier.deps).find((c) => c.host === site.host)!;
    expect(row.attempts).toBe(1);
    const waitMs = Date.parse(row.nextAttemptAt!) - s.t.clock.now().getTime();
    expect(waitMs).toBeGreaterThan(4 * 60_000);
    expect(waitMs).toBeLessThanOrEqual(5 * 60_000);
    const ordersAfterFailure = s.pebble.orderCount();
    // No tight loop: nothing more is ordered before the backoff passed.
    await Bun.sleep(1500);
    expect(s.pebble.orderCount()).toBe(ordersAfterFailure);
    const http = await siteFetch(s.t, site.host, "/");
    expect(http.status).toBe(200);
    expect(await http.text()).toContain("hello over https");
    // DNS fixed, backoff over: the retry succeeds.
    await fetch(`${s.pebble.challtest}/clear-a`, { method: "POST", body: JSON.stringify({ host: `${site.host}.` }) });
    s.t.clock.advance(5 * 60_000 + 1000);
    await waitForState(s.acme, site.host, (x) => x.status === "issued", 30_000);
  });

  test("SMTP STARTTLS presents the MX host's issued certificate", async () => {
    await waitForState(s.acme, "mx.localhost", (x) => x.status === "issued");
    await Bun.sleep(200);
    const cert = await starttlsCertificate(s.t.pier.ports.smtp!, "mx.localhost", s.root);
    expect(cert.subjectAltName).toBe("DNS:mx.localhost");
  });

  test("renewal at two thirds of the lifetime replaces the served certificate without a restart", async () => {
    await waitForState(s.acme, "mx.localhost", (x) => x.status === "issued");
    await Bun.sleep(200);
    const apiPem = s.acme.certificateFor(s.apiHost)!.cert;
    const apiSerial = new X509Certificate(apiPem).serialNumber;
    await untilPresented(s, s.apiHost, (c) => c.serialNumber === apiSerial);
    const before = await httpsGet(httpsPort(), s.apiHost, "/api/v1/status", s.root);
    const mxBefore = await starttlsCertificate(s.t.pier.ports.smtp!, "mx.localhost", s.root);
    const mxPem = s.acme.certificateFor("mx.localhost")!.cert;
    s.t.clock.advance(41 * 60_000);
    await waitUntil(() => s.acme.certificateFor(s.apiHost)!.cert !== apiPem && s.acme.certificateFor("mx.localhost")!.cert !== mxPem);
    await untilPresented(s, s.apiHost, (c) => c.serialNumber !== before.cert.serialNumber);
    const after = await httpsGet(httpsPort(), s.apiHost, "/api/v1/status", s.root);
    expect(after.status).toBe(200);
    expect(after.cert.serialNumber).not.toBe(before.cert.serialNumber);
    const mxAfter = await starttlsCertificate(s.t.pier.ports.smtp!, "mx.localhost", s.root);
    expect(mxAfter.serialNumber).not.toBe(mxBefore.serialNumber);
  });

  test("certificates survive a restart: served at once, nothing ordered again", async () => {
    const config = s.t.pier.deps.config;
    // Renewals the clock jump made due (every site so far) finish first: what is on disk is then final.
    const busy = s.t.pier.deps.sqlite.query("select count(*) as n from jobs where kind = 'acme.issue' and status in ('queued', 'running')");
    await waitUntil(() => (busy.get() as { n: number }).n === 0);
    const stored = new X509Certificate(s.acme.certificateFor(s.apiHost)!.cert).serialNumber;
    await untilPresented(s, s.apiHost, (c) => c.serialNumber === stored);
    const served = await httpsGet(httpsPort(), s.apiHost, "/api/v1/status", s.root);
    await s.t.pier.stop();
    const ordersBefore = s.pebble.orderCount();
    const again = await startPier(config, { clock: s.t.clock, log: silentLogger, startWorker: true });
    try {
      const res = await httpsGet(again.ports.https!, s.apiHost, "/api/v1/status", s.root);
      expect(res.status).toBe(200);
      expect(res.cert.serialNumber).toBe(served.cert.serialNumber);
      await Bun.sleep(500);
      expect(s.pebble.orderCount()).toBe(ordersBefore);
    } finally {
      await again.stop();
    }
  });
});
