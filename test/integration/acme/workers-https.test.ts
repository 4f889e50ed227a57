// `--workers 2` with automatic HTTPS against a real pebble: the primary (this test process) runs
// every order; the serving worker (its own process) shares the HTTP and HTTPS ports and serves
// the certificates the primary stored. Pebble's HTTP-01 validation connects to whichever process
// the kernel picks (a worker relays the challenge path to the primary). Every check opens a new
// connection per request, so both processes answer, told apart by the request id's per-process
// prefix.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { CHALLENGE_PREFIX } from "../../../src/acme";
import { httpsGet, ACME_SETUP_MS, startAcmePier, type AcmeSetup, type TlsAnswer } from "../../helpers/acme";
import { startChallTestSrv, type ChallTestSrv } from "../../helpers/challtestsrv";
import type { TestUser } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";

const HOST = "www.workers-shop.test";
/** Generous for a loaded 2-core machine; the documented bound is a data_version poll (200 ms) plus the listener swap. */
const DEADLINE_MS = 20_000;

let dns: ChallTestSrv;
let s: AcmeSetup;
let owner: TestUser;

beforeAll(async () => {
  dns = await startChallTestSrv({ defaultIPv4: "127.0.0.1" });
  // One hour of validity: renewal is due 40 minutes in, reached by moving the primary's clock.
  s = await startAcmePier({ dns: dns.dns, validitySeconds: 3600, servingWorkers: 2, overrides: { smtpPort: null } });
  owner = await s.t.user({ plan: "pro" });
  await untilBothProcessesServe();
}, ACME_SETUP_MS);
afterAll(async () => {
  await s?.stop();
  await dns?.stop();
});

const httpsPort = () => s.t.pier.ports.https!;
/** The process that answered: request ids are a per-process prefix and a counter. */
const processOf = (headers: Record<string, string>) => (headers["x-request-id"] ?? "").slice(0, "req_".length + 9);

/** The worker starts beside the primary: wait until fresh connections reach two processes (an unknown site's 404 is answered locally). */
async function untilBothProcessesServe() {
  const seen = new Set<string>();
  const until = Date.now() + 30_000;
  while (seen.size < 2) {
    if (Date.now() > until) throw new Error("the serving worker never answered");
    const res = await fetch(`${s.t.url}/`, { headers: { host: "nosuch.sites.localhost", connection: "close" }, keepalive: false } as RequestInit);
    await res.arrayBuffer();
    seen.add(res.headers.get("x-request-id")?.slice(0, "req_".length + 9) ?? "");
  }
}

/** Fresh HTTPS connections until `serial` is presented by two different processes; then `rounds` more must all present it. */
async function everyProcessPresents(serial: string, rounds = 16): Promise<{ ms: number; processes: Set<string>; answers: TlsAnswer[] }> {
  const started = performance.now();
  const good = new Set<string>();
  const seen = new Set<string>();
  while (good.size < 2) {
    if (performance.now() - started > DEADLINE_MS)
      throw new Error(`only ${good.size} of the processes seen (${[...seen].join(", ")}) present ${serial} after ${DEADLINE_MS} ms`);
    // Until a process has followed the store it presents what it had: the fallback (which the
    // CA-verified handshake refuses) or the previous certificate. Once it presents the new one it
    // never goes back (the rounds below check it).
    const res = await httpsGet(httpsPort(), HOST, "/", s.root).catch(() => null);
    if (!res) continue;
    const who = processOf(res.headers);
    seen.add(who);
    if (res.status === 200 && res.cert.serialNumber === serial) good.add(who);
    else good.delete(who);
  }
  const ms = performance.now() - started;
  const answers: TlsAnswer[] = [];
  for (let i = 0; i < rounds; i++) answers.push(await httpsGet(httpsPort(), HOST, "/", s.root));
  return { ms, processes: good, answers };
}

/** The serial of the certificate the primary serves for `host` (what it stored). */
function storedSerial(host: string): string | null {
  const c = s.acme.certificateFor(host);
  return c ? new X509Certificate(c.cert).serialNumber : null;
}

test("the CA's HTTP-01 request is answered by whichever process it reaches (the primary holds the answer)", async () => {
  const token = `workers-${Date.now().toString(36)}-token`;
  s.acme.challenges.set(token, `${token}.thumbprint`);
  try {
    // 24 connections: all reaching the primary by chance is a one-in-ten-million event.
    for (let i = 0; i < 24; i++) {
      // A new connection each time (the kernel picks a process per connection).
      const res = await fetch(`${s.t.url}${CHALLENGE_PREFIX}${token}`, { headers: { host: HOST, connection: "close" }, keepalive: false } as RequestInit);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(`${token}.thumbprint`);
    }
  } finally {
    s.acme.challenges.delete(token);
  }
});

test("a custom domain's certificate, ordered by the primary, is presented by every process; a renewal reaches every process", async () => {
  const site = await publishSite(s.t, { user: owner, files: [{ path: "index.html", bytes: "<h1>shop on every core</h1>" }] });
  const url = `/api/v1/buckets/${site.pub.bucketId}/custom_domains`;
  const created = await s.t.api("POST", url, { key: owner.key, body: { hostname: HOST } });
  expect(created.status).toBe(201);
  const d = created.body.data.custom_domain;
  for (const r of d.required_dns_records) {
    if (r.purpose === "ownership") await dns.setTxt(r.name, r.value);
    if (r.purpose === "traffic") await dns.setCname(r.name, r.value);
  }
  const until = Date.now() + 30_000;
  for (;;) {
    const r = await s.t.api("POST", `${url}/${d.id}/refresh`, { key: owner.key });
    expect(r.body.data.custom_domain.ssl_status).not.toBe("failed");
    if (r.body.data.custom_domain.status === "active") break;
    if (Date.now() > until) throw new Error(`domain stayed ${JSON.stringify(r.body.data.custom_domain)}`);
    await Bun.sleep(200);
  }

  const issued = storedSerial(HOST)!;
  expect(issued).toBeString();
  const first = await everyProcessPresents(issued);
  // Both processes answered over HTTPS (a site page is answered by the process that accepted it).
  expect(first.processes.size).toBe(2);
  for (const a of first.answers) {
    expect(a.status).toBe(200);
    expect(a.body).toContain("shop on every core");
    expect(a.cert.subjectAltName).toContain(`DNS:${HOST}`);
    expect(a.cert.serialNumber).toBe(issued);
  }
  // Plain HTTP for the host is redirected by every process now that it has a certificate.
  for (let i = 0; i < 8; i++) {
    const res = await fetch(`${s.t.url}/`, { headers: { host: HOST, connection: "close" }, keepalive: false, redirect: "manual" } as RequestInit);
    expect(res.status).toBe(308);
    expect(res.headers.get("location")).toBe(`https://${HOST}:${httpsPort()}/`);
  }

  // Renewal: two thirds into the one-hour lifetime, the primary's sweep orders it again.
  s.t.clock.advance(41 * 60_000);
  const renewUntil = Date.now() + 30_000;
  while (storedSerial(HOST) === issued) {
    if (Date.now() > renewUntil) throw new Error("the certificate was not renewed");
    await Bun.sleep(50);
  }
  const renewed = storedSerial(HOST)!;
  const second = await everyProcessPresents(renewed);
  expect(second.processes.size).toBe(2);
  for (const a of second.answers) expect(a.cert.serialNumber).toBe(renewed);
}, 90_000);
