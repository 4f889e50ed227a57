// Certificates read back from the data dir at start. A pair the TLS library would refuse (a
// truncated file, a key that is not the certificate's) is never handed to the HTTPS listener,
// where it would make every certificate swap fail; a missing pair is not reported as issued.
// Either way the host is ordered again.
import { afterEach, expect, test } from "bun:test";
import { generate } from "selfsigned";
import { CertificateManager } from "../../src/acme";
import { CertificateStore } from "../../src/acme/store";
import { testDeps, type TestDeps } from "../helpers/deps";

async function pair(name: string) {
  const p = await generate([{ name: "commonName", value: name }], {
    keySize: 2048,
    days: 30,
    algorithm: "sha256",
    extensions: [{ name: "subjectAltName", altNames: [{ type: 2, value: name }] }],
  } as Parameters<typeof generate>[1]);
  return { cert: p.cert, key: p.private };
}

let td: TestDeps | null = null;
afterEach(() => {
  td?.close();
  td = null;
});

test("a missing, unreadable or mismatched stored certificate is not served, and its host is due for a new order", async () => {
  td = await testDeps();
  const { deps } = td;
  const store = new CertificateStore(deps.config.dataDir, deps.db);
  const now = deps.clock.now();
  const later = new Date(now.getTime() + 20 * 86_400_000).toISOString();
  const good = await pair("good.example.com");
  const other = await pair("other.example.com");
  const stored: Record<string, { cert: string; key: string }> = {
    "good.example.com": good,
    "truncated.example.com": { cert: good.cert.slice(0, 200), key: good.key },
    "mismatched.example.com": { cert: good.cert, key: other.key },
  };
  for (const host of [...Object.keys(stored), "missing.example.com"]) {
    store.ensureRow(host, now);
    store.update(host, { status: "issued", notAfter: later, nextAttemptAt: later, issuedAt: now.toISOString() }, now);
    if (stored[host]) store.writeFiles(host, stored[host]);
  }

  const manager = new CertificateManager(deps);
  try {
    expect(manager.servedCertificates().map((c) => c.host)).toEqual(["good.example.com"]);
    for (const host of ["truncated.example.com", "mismatched.example.com", "missing.example.com"]) {
      expect(manager.state(host).status).toBe("pending");
      expect(manager.certificateFor(host)).toBeNull();
      const row = store.row(host)!;
      expect(row.status).toBe("pending");
      expect(row.nextAttemptAt! <= deps.clock.now().toISOString()).toBe(true);
    }
    expect(store.row("good.example.com")!.status).toBe("issued");
  } finally {
    manager.close();
  }
});

test("a serving worker's manager follows the table: a new, a renewed and a forgotten certificate; a damaged pair keeps the one served; nothing is repaired", async () => {
  td = await testDeps();
  const { deps, clock } = td;
  const store = new CertificateStore(deps.config.dataDir, deps.db);
  const host = "shop.example.com";
  const issue = (pem: { cert: string; key: string }) => {
    // What the primary does: the files first, then the row (a new issue time and expiry).
    const now = clock.now();
    store.ensureRow(host, now);
    store.writeFiles(host, pem);
    const later = new Date(now.getTime() + 20 * 86_400_000).toISOString();
    store.update(host, { status: "issued", notAfter: later, nextAttemptAt: later, issuedAt: now.toISOString() }, now);
  };
  // A damaged pair at start: the follower does not serve it and leaves the row to the primary.
  store.ensureRow("damaged.example.com", clock.now());
  store.update("damaged.example.com", { status: "issued", notAfter: clock.now().toISOString(), issuedAt: clock.now().toISOString() }, clock.now());
  const follower = new CertificateManager(deps, { follower: true });
  let changes = 0;
  follower.onChange(() => changes++);
  const served = () => follower.certificateFor(host)?.cert ?? null;
  const settled = async (n: number) => {
    const until = Date.now() + 20_000;
    while (changes < n && Date.now() < until) await Bun.sleep(10);
    expect(changes).toBe(n);
  };
  try {
    expect(follower.servedCertificates()).toEqual([]);
    expect(store.row("damaged.example.com")!.status).toBe("issued");

    const first = await pair(host);
    issue(first);
    // Seen through the table's row count and latest update (the write is no longer recent).
    clock.advance(10_000);
    follower.followStore();
    expect(served()).toBe(first.cert);
    await settled(1);
    // Nothing changed: no new read, no listener swap.
    follower.followStore();
    await Bun.sleep(100);
    expect(changes).toBe(1);

    clock.advance(60_000);
    const second = await pair(host);
    issue(second);
    clock.advance(10_000);
    follower.followStore();
    expect(served()).toBe(second.cert);
    await settled(2);

    // A damaged renewal on disk: the certificate served before stays (it is still valid).
    clock.advance(60_000);
    issue({ cert: second.cert.slice(0, 200), key: second.key });
    follower.followStore();
    expect(served()).toBe(second.cert);

    store.deleteRow(host);
    store.deleteFiles(host);
    follower.followStore();
    expect(served()).toBeNull();
    expect(follower.state(host).status).toBe("none");
    await settled(3);
  } finally {
    follower.close();
  }
});
