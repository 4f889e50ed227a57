// A Pier with automatic HTTPS against a real pebble, and the client checks the ACME tests make:
// an HTTPS request with a chosen SNI name and the CA trusted, the certificate presented, and the
// STARTTLS certificate of the SMTP port.
import net from "node:net";
import tls from "node:tls";
import { X509Certificate } from "node:crypto";
import type { Config } from "../../src/config";
import type { CertificateManager } from "../../src/acme";
import { freePort, startPebble, type Pebble } from "./pebble";
import { startTestPier, type TestPier } from "./pier";

export interface AcmeSetup {
  t: TestPier;
  pebble: Pebble;
  acme: CertificateManager;
  /** The root that signs pebble's certificates. */
  root: string;
  apiHost: string;
  stop(): Promise<void>;
}

/**
 * The time a file's beforeAll gives startAcmePier: pebble's start (up to 45 s) and the API host's
 * certificate (up to three orders) take seconds when the machine is quiet and far more when the
 * whole suite shares its cores, well past bun's 30 s hook timeout.
 */
export const ACME_SETUP_MS = 240_000;

/**
 * `dns`: one DNS server (host:port) for both pebble and Pier's --dns-resolver (custom-domain tests).
 * `servingWorkers`: processes serving the ports (default PIER_TEST_WORKERS, else 1).
 */
export async function startAcmePier(
  o: { validitySeconds?: number; overrides?: Partial<Config>; dns?: string; servingWorkers?: number } = {},
): Promise<AcmeSetup> {
  const httpPort = await freePort();
  const httpsPort = await freePort();
  const pebble = await startPebble({ httpPort, validitySeconds: o.validitySeconds, dns: o.dns });
  const t = await startTestPier(
    {
      httpPort,
      httpsPort,
      baseUrl: `https://pier.localhost:${httpsPort}`,
      sitesDomain: "sites.localhost",
      acme: "on",
      acmeDirectory: pebble.directoryUrl,
      acmeCaRoot: pebble.caRootFile,
      acmeEmail: "ops@example.com",
      ...(o.dns ? { dnsResolver: o.dns } : {}),
      ...o.overrides,
    },
    { startWorker: true, servingWorkers: o.servingWorkers },
  );
  const acme = t.pier.deps.certificates as CertificateManager;
  const root = await pebble.issuingRoot();
  // The API host redirects HTTP to HTTPS once its certificate is in: the tests' API calls go over HTTPS.
  await firstCertificate(acme, "pier.localhost");
  await untilPresented({ t }, "pier.localhost", (c) => c.subjectAltName === "DNS:pier.localhost");
  const origin = `https://pier.localhost:${httpsPort}`;
  t.api = async (method, path, r = {}) => {
    const headers: Record<string, string> = { accept: "application/json", ...r.headers };
    if (r.key) headers.authorization = `Bearer ${r.key}`;
    let body: string | undefined = r.rawBody;
    if (r.body !== undefined) {
      body = JSON.stringify(r.body);
      headers["content-type"] = "application/json";
    }
    // A swap also closes the old listener's idle keep-alive connections: a pooled one that raced
    // it is reset before the request was read, and the client sends again (as browsers do).
    const res = await reconnectingOnReset(() => fetch(origin + path, { method, headers, body, redirect: "manual", tls: { ca: root } }));
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  return {
    t,
    pebble,
    acme,
    root,
    apiHost: "pier.localhost",
    stop: async () => {
      await t.stop();
      await pebble.stop();
    },
  };
}

/**
 * Wait until every new HTTPS connection presents, for `servername`, a certificate `ok` accepts.
 * One process swaps its listener moments after a change (coalesced, 50 ms); a serving worker
 * (PIER_TEST_WORKERS, or the servingWorkers option) follows the table within its poll interval
 * (docs/deployment.md §9), and a new connection may reach either process: with workers the port
 * counts as settled after 16 handshakes in a row were accepted (a process still stale and missed
 * by all 16: one chance in 65,536).
 */
export async function untilPresented(s: Pick<AcmeSetup, "t">, servername: string, ok: (c: X509Certificate) => boolean, ms = 20_000): Promise<X509Certificate> {
  const streak = s.t.servingWorkers > 1 ? 16 : 1;
  const until = Date.now() + ms;
  let inARow = 0;
  for (;;) {
    const cert = await presentedCertificate(s.t.pier.ports.https!, servername);
    inARow = ok(cert) ? inARow + 1 : 0;
    if (inARow >= streak) return cert;
    if (Date.now() > until) throw new Error(`${servername} is still presented with ${cert.subjectAltName} (serial ${cert.serialNumber})`);
    if (inARow === 0) await Bun.sleep(50);
  }
}

/**
 * The API host's first certificate, which every test of a file needs. On a loaded machine one
 * order can fail (a request to the CA, or pebble's check of the challenge, timing out), and Pier
 * tries again only 5 minutes later (RETRY_BACKOFF_MS): the rig orders again at once, three orders
 * at most, and says what failed.
 */
async function firstCertificate(acme: CertificateManager, host: string): Promise<void> {
  for (let order = 1; ; order++) {
    const s = await waitForState(acme, host, (x) => x.status === "issued" || x.status === "failed", 60_000);
    if (s.status === "issued") return;
    if (order === 3) throw new Error(`the certificate order for ${host} failed 3 times, last: ${s.reason}`);
    console.warn(`acme test rig: order ${order} for ${host} failed (${s.reason}); ordering again`);
    await acme.runOrder(host);
  }
}

/** Wait until the host's certificate state satisfies `ok` (polling the manager). */
export async function waitForState(acme: CertificateManager, host: string, ok: (s: ReturnType<CertificateManager["state"]>) => boolean, ms = 20_000) {
  const until = Date.now() + ms;
  for (;;) {
    const s = acme.state(host);
    if (ok(s)) return s;
    if (Date.now() > until) throw new Error(`certificate for ${host} stayed ${JSON.stringify(s)}`);
    await Bun.sleep(50);
  }
}

export interface TlsAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The leaf certificate the server presented. */
  cert: X509Certificate;
}

/**
 * A new connection that lands in the old listener's accept queue as a certificate swap closes it
 * is reset by the kernel (unless net.ipv4.tcp_migrate_req=1; docs/certificates.md), and clients
 * connect again, as browsers do: the tests' TLS clients do the same, a few times at most.
 */
async function reconnectingOnReset<T>(connect: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await connect();
    } catch (e) {
      if ((e as { code?: string }).code !== "ECONNRESET" || attempt === 3) throw e;
      await Bun.sleep(50);
    }
  }
}

/** GET over TLS to 127.0.0.1 with this SNI name and Host, trusting only `ca` (verification on). */
export function httpsGet(port: number, host: string, path: string, ca: string): Promise<TlsAnswer> {
  return reconnectingOnReset(() => httpsGetOnce(port, host, path, ca));
}

function httpsGetOnce(port: number, host: string, path: string, ca: string): Promise<TlsAnswer> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, servername: host, ca }, () => {
      const peer = socket.getPeerX509Certificate();
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nConnection: close\r\n\r\n`);
      let raw = "";
      socket.on("data", (d: Buffer) => (raw += d.toString()));
      socket.on("end", () => {
        const [head = "", ...rest] = raw.split("\r\n\r\n");
        const [statusLine = "", ...lines] = head.split("\r\n");
        const headers: Record<string, string> = {};
        for (const l of lines) {
          const i = l.indexOf(":");
          headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
        }
        resolve({ status: Number(statusLine.split(" ")[1]), headers, body: rest.join("\r\n\r\n"), cert: peer! });
      });
    });
    socket.on("error", reject);
  });
}

/** The certificate a TLS handshake with this SNI name presents (no verification: for names Pier has no certificate for). */
export function presentedCertificate(port: number, servername: string): Promise<X509Certificate> {
  return reconnectingOnReset(() => presentedCertificateOnce(port, servername));
}

function presentedCertificateOnce(port: number, servername: string): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false }, () => {
      const c = socket.getPeerX509Certificate()!;
      socket.end();
      resolve(c);
    });
    socket.on("error", reject);
  });
}

/** EHLO, STARTTLS, and the certificate the SMTP port presents for `servername`, verified against `ca`. */
export function starttlsCertificate(port: number, servername: string, ca: string): Promise<X509Certificate> {
  return reconnectingOnReset(() => starttlsCertificateOnce(port, servername, ca));
}

function starttlsCertificateOnce(port: number, servername: string, ca: string): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const plain = net.connect(port, "127.0.0.1");
    let buf = "";
    let step = 0;
    plain.on("error", reject);
    plain.on("data", (d) => {
      buf += d.toString();
      if (!/\r\n$/.test(buf) || /^\d{3}-/m.test(buf.split("\r\n").at(-2) ?? "")) return;
      const reply = buf;
      buf = "";
      if (step === 0 && reply.startsWith("220")) {
        step = 1;
        plain.write("EHLO client.example\r\n");
      } else if (step === 1 && reply.startsWith("250")) {
        step = 2;
        plain.write("STARTTLS\r\n");
      } else if (step === 2 && reply.startsWith("220")) {
        step = 3;
        plain.removeAllListeners("data");
        const secure = tls.connect({ socket: plain, servername, ca }, () => {
          const c = secure.getPeerX509Certificate()!;
          secure.end();
          resolve(c);
        });
        secure.on("error", reject);
      } else reject(new Error(`unexpected SMTP reply at step ${step}: ${reply}`));
    });
  });
}
