// Bad input against the site server's caches: a flood of distinct missing paths (also on an SPA
// site with `_headers`, whose answers go through the baked-header cache), huge Host headers,
// clients that open connections and send nothing, files larger than the memory cache. None may
// grow the server's memory without bound or keep cached files from being served.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import { MEMORY_FILE_LIMIT } from "../../src/sites/files";
import { startTestPier, type TestPier } from "../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../helpers/sites";

let t: TestPier;
let plain: PublishedSite;
let spa: PublishedSite;
const page = "<h1>cached</h1>" + "x".repeat(4000);
const big = new Uint8Array(MEMORY_FILE_LIMIT + 1024 * 1024).fill(7);

beforeAll(async () => {
  t = await startTestPier();
  plain = await publishSite(t, {
    files: [
      { path: "index.html", bytes: page },
      { path: "big.bin", bytes: big },
    ],
  });
  spa = await publishSite(t, {
    siteMode: "spa",
    files: [
      { path: "index.html", bytes: page },
      { path: "_headers", bytes: "/*\n  X-Frame-Options: DENY\n/app/:id\n  X-Seen: :id-never-expanded\n" },
    ],
  });
});
afterAll(async () => {
  await t?.stop();
});

function heapMiB(): number {
  Bun.gc(true);
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

/** `count` requests, `parallel` at a time, each to a path no earlier one used. */
async function flood(host: string, count: number, parallel = 16, path = (i: number) => `/missing-${i}-${"p".repeat(200)}`) {
  let next = 0;
  const statuses = new Map<number, number>();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        const i = next++;
        const r = await siteFetch(t, host, path(i));
        await r.arrayBuffer();
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      }
    }),
  );
  return statuses;
}

describe("the site server under bad input", () => {
  test("a flood of distinct missing paths leaves memory bounded and cached files served", async () => {
    await flood(plain.host, 500); // warm every code path first
    const before = heapMiB();
    const statuses = await flood(plain.host, 8_000);
    expect(statuses.get(404)).toBe(8_000);
    // 8,000 distinct 200-character paths: ~3 MiB of keys if each were kept; allow noise, not growth per path.
    expect(heapMiB() - before).toBeLessThan(24);
    const r = await siteFetch(t, plain.host, "/");
    expect(r.status).toBe(200);
    expect(await r.text()).toBe(page);
  }, 120_000);

  test("on an SPA site with _headers, distinct deep links share one header set (no cache entry per path)", async () => {
    await flood(spa.host, 500, 16, (i) => `/app/warm-${i}`);
    const before = heapMiB();
    const statuses = await flood(spa.host, 4_000, 16, (i) => `/deep/link-${i}-${"q".repeat(200)}`);
    expect(statuses.get(200)).toBe(4_000);
    expect(heapMiB() - before).toBeLessThan(24);
    const r = await siteFetch(t, spa.host, "/deep/anything");
    expect(r.headers.get("x-frame-options")).toBe("DENY");
    expect(r.headers.get("x-seen")).toBeNull();
    expect((await siteFetch(t, spa.host, "/app/42")).headers.get("x-seen")).toBe(":id-never-expanded");
  }, 120_000);

  test("a huge Host header is refused without effect on other requests", async () => {
    for (const size of [300, 8_000, 60_000]) {
      const host = `${"a".repeat(size)}.${t.pier.deps.urls.sitesDomain}`;
      const r = await fetch(`${t.url}/`, { headers: { host } }).catch(() => null);
      // Either Bun's header limit refuses it (431, or the connection is closed) or Pier's host check does (400/404).
      if (r) expect([400, 404, 431]).toContain(r.status);
    }
    expect((await siteFetch(t, plain.host, "/")).status).toBe(200);
  });

  test("clients that connect and send nothing (or half a request) do not hold up cached files", async () => {
    const port = Number(new URL(t.url).port);
    const idle: net.Socket[] = [];
    for (let i = 0; i < 200; i++) {
      const s = net.connect(port, "127.0.0.1");
      s.on("error", () => {});
      if (i % 2) s.write(`GET / HTTP/1.1\r\nHost: ${plain.host}\r\nX-Slow: `);
      idle.push(s);
    }
    try {
      for (let i = 0; i < 20; i++) {
        const r = await siteFetch(t, plain.host, "/");
        expect(r.status).toBe(200);
        expect(await r.text()).toBe(page);
      }
    } finally {
      for (const s of idle) s.destroy();
    }
  }, 60_000);

  test("files larger than the memory cache are streamed, not kept: repeated downloads do not grow memory", async () => {
    const first = await siteFetch(t, plain.host, "/big.bin", { headers: { "accept-encoding": "identity" } });
    expect((await first.arrayBuffer()).byteLength).toBe(big.byteLength);
    const before = heapMiB();
    for (let i = 0; i < 12; i++) {
      const r = await siteFetch(t, plain.host, "/big.bin", { headers: { "accept-encoding": "identity" } });
      expect((await r.arrayBuffer()).byteLength).toBe(big.byteLength);
    }
    // 12 × 3 MiB would be 36 MiB if each were held.
    expect(heapMiB() - before).toBeLessThan(12);
    const ranged = await siteFetch(t, plain.host, "/big.bin", { headers: { range: "bytes=0-9" } });
    expect(ranged.status).toBe(206);
    expect((await ranged.arrayBuffer()).byteLength).toBe(10);
  }, 60_000);
});
