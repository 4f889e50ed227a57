// pebble-challtestsrv (Debian's pebble package) as a real DNS server for tests: started on free
// loopback ports, its records set through the management API. Pier's --dns-resolver (and
// Pebble's -dnsserver) point at `dns`. Only the DNS part runs: the challenge servers are off.
import { createSocket } from "node:dgram";
import { createServer } from "node:net";
import type { Subprocess } from "bun";

export const CHALLTESTSRV = "/usr/bin/pebble-challtestsrv";

export interface ChallTestSrv {
  /** host:port of the DNS server (UDP and TCP). */
  dns: string;
  /** http://127.0.0.1:<port> of the management API. */
  management: string;
  /** TXT record (replaces earlier values of the name). */
  setTxt(host: string, value: string): Promise<void>;
  clearTxt(host: string): Promise<void>;
  setCname(host: string, target: string): Promise<void>;
  clearCname(host: string): Promise<void>;
  addA(host: string, addresses: string[]): Promise<void>;
  clearA(host: string): Promise<void>;
  addAaaa(host: string, addresses: string[]): Promise<void>;
  clearAaaa(host: string): Promise<void>;
  /** Answer every query for the name with SERVFAIL (a broken authoritative server). */
  setServfail(host: string): Promise<void>;
  clearServfail(host: string): Promise<void>;
  stop(): Promise<void>;
}

export interface ChallTestSrvOptions {
  /**
   * Address for A queries that match no record ("" = none, NXDOMAIN-like empty answers). ACME
   * tests keep 127.0.0.1 so Pebble reaches Pier for every name; custom-domain tests use "" so a
   * record exists only once the test creates it.
   */
  defaultIPv4?: string;
}

/** A port free for both TCP and UDP on 127.0.0.1 right now. */
async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once("error", reject);
      s.listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const u = createSocket("udp4");
      u.once("error", () => resolve(false));
      u.bind(port, "127.0.0.1", () => u.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
}

// Names are fully qualified for the TXT mocks (challtestsrv matches the query name with its dot).
const fqdn = (h: string) => (h.endsWith(".") ? h : `${h}.`);

export async function startChallTestSrv(opts: ChallTestSrvOptions = {}): Promise<ChallTestSrv> {
  let lastError = "";
  for (let attempt = 0; attempt < 5; attempt++) {
    const [dnsPort, mgmtPort] = [await freePort(), await freePort()];
    const proc: Subprocess<"ignore", "pipe", "pipe"> = Bun.spawn(
      [
        CHALLTESTSRV,
        "-http01",
        "",
        "-https01",
        "",
        "-tlsalpn01",
        "",
        "-defaultIPv6",
        "",
        "-defaultIPv4",
        opts.defaultIPv4 ?? "127.0.0.1",
        "-dns01",
        `127.0.0.1:${dnsPort}`,
        "-management",
        `127.0.0.1:${mgmtPort}`,
      ],
      { stdin: "ignore", stdout: "pipe", stderr: "pipe" },
    );
    const management = `http://127.0.0.1:${mgmtPort}`;
    const deadline = Date.now() + 15_000;
    let up = false;
    while (Date.now() < deadline && proc.exitCode === null) {
      // Any answer from the management API (even 404) means it listens.
      up = await fetch(`${management}/`, { method: "GET" }).then(
        () => true,
        () => false,
      );
      if (up) break;
      await Bun.sleep(50);
    }
    if (!up) {
      lastError = proc.exitCode === null ? "management API did not come up" : `exited with ${proc.exitCode}`;
      proc.kill();
      await proc.exited;
      continue;
    }
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${management}${path}`, { method: "POST", body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`challtestsrv ${path}: ${res.status} ${await res.text()}`);
    };
    return {
      dns: `127.0.0.1:${dnsPort}`,
      management,
      setTxt: (host, value) => post("/set-txt", { host: fqdn(host), value }),
      clearTxt: (host) => post("/clear-txt", { host: fqdn(host) }),
      setCname: (host, target) => post("/set-cname", { host, target }),
      clearCname: (host) => post("/clear-cname", { host }),
      addA: (host, addresses) => post("/add-a", { host, addresses }),
      clearA: (host) => post("/clear-a", { host }),
      addAaaa: (host, addresses) => post("/add-aaaa", { host, addresses }),
      clearAaaa: (host) => post("/clear-aaaa", { host }),
      setServfail: (host) => post("/set-servfail", { host }),
      clearServfail: (host) => post("/clear-servfail", { host }),
      stop: async () => {
        proc.kill();
        await proc.exited;
      },
    };
  }
  throw new Error(`pebble-challtestsrv did not start: ${lastError}`);
}
