// An ACME order cannot hold the job runner (one job at a time) for ever (D235): a CA that accepts
// the connection and never answers — a real loopback socket here — ends the order at its deadline,
// or the request at its timeout, as a failed order with its reason and the usual backoff, and the
// jobs queued behind it run. The limits are shortened through acmeLimits so this takes seconds.
import { afterAll, beforeAll, expect, test } from "bun:test";
import net from "node:net";
import { acmeLimits, type CertificateManager } from "../../../src/acme";
import type { JobRow } from "../../../src/jobs/queue";
import { freePort } from "../../helpers/pebble";
import { startTestPier, type TestPier } from "../../helpers/pier";

const defaults = { ...acmeLimits };
const sockets: net.Socket[] = [];
// Accepts, reads, never answers.
const silentCa = net.createServer((s) => {
  sockets.push(s);
  s.on("error", () => {});
});
const host = "pier.example.com";
let t: TestPier;
let acme: CertificateManager;

beforeAll(async () => {
  await new Promise<void>((r) => silentCa.listen(0, "127.0.0.1", r));
  const caPort = (silentCa.address() as net.AddressInfo).port;
  // The deadline, not the request timeout, must end the first order.
  acmeLimits.orderDeadlineMs = 1500;
  const httpsPort = await freePort();
  t = await startTestPier(
    { httpsPort, baseUrl: `https://${host}:${httpsPort}`, sitesDomain: "sites.example.com", acme: "on", acmeDirectory: `http://127.0.0.1:${caPort}/dir` },
    { startWorker: true },
  );
  acme = t.pier.deps.certificates as CertificateManager;
});
afterAll(async () => {
  Object.assign(acmeLimits, defaults);
  for (const s of sockets) s.destroy();
  silentCa.close();
  await t?.stop();
});

async function until<T>(what: string, read: () => T | undefined | null | false, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = read();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

const job = (id: string) => t.pier.deps.jobs.get(id) as JobRow | undefined;

test("an order the CA never answers fails at its deadline with a reason and backoff; the job queued behind it runs", async () => {
  // The API host's order starts with the server and hangs on the directory request.
  await until("the order's first request", () => sockets.length > 0);
  const probe = t.pier.deps.jobs.enqueue("acme.sweep", {}, { uniqueKey: "probe-behind-a-stalled-order", maxAttempts: 1 });
  const state = await until("the order to fail", () => (acme.state(host).status === "failed" ? acme.state(host) : null));
  expect(state.reason).toContain("did not finish within 1.5 s");
  expect(state.reason).toContain(`http://127.0.0.1:${(silentCa.address() as net.AddressInfo).port}`);
  const row = acme.store.row(host)!;
  expect(row.attempts).toBe(1);
  // The first step of the usual backoff (RETRY_BACKOFF_MS), counted from when the order failed.
  expect(Date.parse(row.nextAttemptAt!) - t.clock.now().getTime()).toBeWithin(4 * 60_000, 5 * 60_000 + 1);
  expect((await until("the queued job to run", () => (job(probe)?.status === "done" ? job(probe) : null))).status).toBe("done");
}, 20_000);

test("one request the CA never answers fails at the request timeout", async () => {
  acmeLimits.orderDeadlineMs = 60_000;
  acmeLimits.requestTimeoutMs = 500;
  const started = Date.now();
  const outcome = await acme.runOrder(host);
  expect(Date.now() - started).toBeLessThan(5000);
  expect(outcome.error).toMatch(/^http:\/\/127\.0\.0\.1:\d+ did not answer within 0.5 s$/);
  expect(acme.state(host)).toMatchObject({ status: "failed", reason: outcome.error });
  expect(acme.store.row(host)!.attempts).toBe(2);
}, 20_000);
