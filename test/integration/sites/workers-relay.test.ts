// `--workers 2`: what a serving worker relays to the primary must not let slow clients hold the
// relay (D265). Bun's fetch sends at most 256 requests at once per process and queues the rest;
// a worker relayed API bodies unread, so a few hundred anonymous clients that each sent one byte
// of a declared body held every relay request of both workers until the primary's body timeout,
// and every API request behind them (the status probe took ~27 s).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import { MAX_STREAMED_RELAYS } from "../../../src/serving-relay";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier({}, { servingWorkers: 2 });
});
afterAll(async () => {
  await t?.stop();
});

/** `count` connections that each send `head` (and the first bytes of a body) and then nothing. */
async function holdConnections(count: number, head: string, answers: string[] = []): Promise<net.Socket[]> {
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Socket>((resolve) => {
          const s = net.connect(t.pier.httpPort, "127.0.0.1");
          s.on("error", () => {});
          // What each connection was answered (collected whole: an answer may come in pieces).
          let slot = -1;
          s.on("data", (d) => {
            if (slot < 0) slot = answers.push("") - 1;
            answers[slot] += String(d);
          });
          s.on("connect", () => {
            s.write(head);
            resolve(s);
          });
          // A connection that fails counts as held: the probes below say what matters.
          s.on("close", () => resolve(s));
        }),
    ),
  );
  // Every request reached a worker (and, before the fix, its relay).
  await Bun.sleep(3_000);
  return sockets;
}

/** How long an API request takes on a fresh connection (relayed by whichever worker takes it). */
async function probe(): Promise<{ status: number | string; ms: number }> {
  const started = performance.now();
  const status = await fetch(`${t.url}/api/v1/status`, { headers: { connection: "close" }, signal: AbortSignal.timeout(25_000) } as RequestInit)
    .then(async (r) => (await r.arrayBuffer(), r.status))
    .catch((e: Error) => e.name);
  return { status, ms: performance.now() - started };
}

describe("serving workers and clients that send a body slowly", () => {
  test("700 anonymous API posts that each sent one byte of their body do not hold up other API requests", async () => {
    const head = `POST /api/v1/buckets HTTP/1.1\r\nHost: 127.0.0.1:${t.pier.httpPort}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`;
    const held = await holdConnections(700, head);
    try {
      const probes = await Promise.all([probe(), probe(), probe(), probe()]);
      for (const p of probes) {
        expect(p.status).toBe(200);
        // Answered in milliseconds on an idle machine; before the fix, ~27 s (the body timeout).
        expect(p.ms).toBeLessThan(10_000);
      }
    } finally {
      for (const s of held) s.destroy();
    }
  }, 60_000);

  test("1,200 signed-in posts of a large body that send one byte: streamed relays are capped per worker (503 + Retry-After beyond), API requests still answered", async () => {
    // A body declared over the anonymous limit streams to the primary (only it can check the key),
    // so each of these holds a relay request until the body timeout: 600 or so per worker, over
    // fetch's default of 256 requests at once (raised for workers) and over the cap of 512.
    const u = await t.user();
    const head = `POST /api/v1/buckets HTTP/1.1\r\nHost: 127.0.0.1:${t.pier.httpPort}\r\nAuthorization: Bearer ${u.key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`;
    const answers: string[] = [];
    const held = await holdConnections(1_200, head, answers);
    try {
      const probes = await Promise.all([probe(), probe(), probe(), probe()]);
      for (const p of probes) {
        expect(p.status).toBe(200);
        // Before: not answered until the held bodies timed out (30 s).
        expect(p.ms).toBeLessThan(10_000);
      }
      // Beyond 512 streamed relays per worker, answered at once (1,200 - 2 x 512 = 176 when every
      // connection reached a worker); none is the "restarting" answer of a relay that could not
      // connect (a full accept queue on the relay socket refused connections at once).
      expect(answers.length).toBeGreaterThan(0);
      expect(answers.length).toBeLessThanOrEqual(1_200 - 2 * MAX_STREAMED_RELAYS);
      for (const a of answers) {
        expect(a).toStartWith("HTTP/1.1 503");
        expect(a).toMatch(/\r\nretry-after: \d+\r\n/i);
        expect(a).toContain("Too many uploads");
      }
    } finally {
      for (const s of held) s.destroy();
    }
  }, 60_000);

  test("a body over the anonymous limit still reaches the primary, which takes it from a caller with a key only", async () => {
    const u = await t.user();
    // Chunked (no declared length): the worker reads the first 64 KiB, then streams the rest.
    const chunked = (key?: string) =>
      fetch(`${t.url}/api/v1/buckets`, {
        method: "POST",
        headers: { "content-type": "application/json", connection: "close", ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: new Blob([`{"bucket":{"title":"large body"},"pad":"${"a".repeat(100 * 1024)}"}`]).stream(),
        duplex: "half",
      } as RequestInit);
    const anonymous = await chunked();
    expect(anonymous.status).toBe(413);
    expect(await anonymous.json()).toMatchObject({ error: { details: { max_bytes: 64 * 1024 } } });
    // Declared over the anonymous limit without a credential: refused before a byte is read.
    const declaredAnonymous = await fetch(`${t.url}/api/v1/buckets`, {
      method: "POST",
      headers: { "content-type": "application/json", connection: "close" },
      body: "x".repeat(100 * 1024),
    });
    expect(declaredAnonymous.status).toBe(413);
    expect(await declaredAnonymous.json()).toMatchObject({ error: { details: { max_bytes: 64 * 1024 } } });
    // With a key the body is read whole and judged by the route (its schema refuses the padding).
    const keyed = await chunked(u.key);
    expect(keyed.status).toBe(422);
    // Declared over the route's limit: refused by the worker before a byte is read.
    const declared = await fetch(`${t.url}/api/v1/buckets`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${u.key}`, connection: "close" },
      body: "x".repeat(1024 * 1024 + 1),
    });
    expect(declared.status).toBe(413);
    // A small body with a key: relayed whole and answered.
    const created = await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "relayed whole" } } });
    expect(created.status).toBe(201);
  }, 60_000);
});
