// Attacks on request bodies and the event loop (docs/security.md, "Request bodies and the event
// loop"): each test sends what the attacker sent, over a real socket to a running Pier, and
// checks it no longer gets through or stalls anyone else.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ANONYMOUS_BODY_LIMIT, DEFAULT_BODY_LIMIT, SITE_BODY_LIMIT } from "../../src/http/body-limit";
import { MAX_JSON_DEPTH } from "../../src/http/json-guard";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { rawErrorCode, rawRequest } from "../helpers/raw-http";
import { publishSite } from "../helpers/sites";
import { declared, newBucket } from "../helpers/uploads";

let t: TestPier;
let owner: TestUser;
let port: number;
const BODY_TIMEOUT_S = 2;

beforeAll(async () => {
  t = await startTestPier({ bodyTimeoutSeconds: BODY_TIMEOUT_S });
  owner = await t.user();
  port = t.pier.httpPort;
});
afterAll(() => t.stop());

const post = (path: string, body: BodyInit, headers: Record<string, string> = {}) =>
  fetch(t.url + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

/** Time of a cheap request sent while `attack` is in flight: what every other user waits. */
async function probeDuring(attack: () => Promise<unknown>[]): Promise<number> {
  const inFlight = attack();
  await Bun.sleep(1);
  const t0 = performance.now();
  const r = await fetch(`${t.url}/api/v1/status`);
  const waited = performance.now() - t0;
  expect(r.status).toBe(200);
  await Promise.allSettled(inFlight);
  return waited;
}

/** The request line and headers of a signed storage PUT for `bytes` (a direct upload to a new bucket). */
async function storagePutHead(p: TestPier, u: TestUser, bytes: Uint8Array): Promise<string> {
  const { name, path, ...blob } = declared({ path: "big.bin", bytes, contentType: "application/octet-stream" });
  const d = await p.api("POST", "/api/v1/direct_uploads", {
    key: u.key,
    body: { bucket_id: await newBucket(p, u.key, "uploads"), path, blob: { ...blob, filename: name, purpose: "bucket_file" } },
  });
  expect(d.status).toBe(201);
  const url = new URL(d.body.data.upload.url);
  const headers = Object.entries(d.body.data.upload.headers as Record<string, string>)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\r\n");
  return `PUT ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\n${headers}\r\nContent-Length: ${bytes.byteLength}`;
}

/** A password-gated site's host (the gate's form takes a body). */
const gateSite = async () =>
  (
    await publishSite(t, {
      files: [{ path: "index.html", bytes: new TextEncoder().encode("<h1>hi</h1>"), contentType: "text/html" }],
      access: "password",
      password: "hunter2hunter2",
    })
  ).host;

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("JSON nesting and validation cost", () => {
  test("20,000 nested brackets to a JSON route are refused at once with JSON_TOO_DEEP, before authentication", async () => {
    const t0 = performance.now();
    const r = await post("/api/v1/buckets", nested(20_000));
    const took = performance.now() - t0;
    expect(r.status).toBe(400);
    expect((await r.json()).error.code).toBe("JSON_TOO_DEEP");
    expect(took).toBeLessThan(1500); // was 34 s
  });

  test("nesting inside strings does not count; the limit is exactly MAX_JSON_DEPTH", async () => {
    const inString = JSON.stringify({ bucket: { title: "brackets", description: "[{".repeat(2_000) } });
    expect((await post("/api/v1/buckets", inString, { authorization: `Bearer ${owner.key}` })).status).toBe(201);
    const atLimit = JSON.stringify({ bucket: { title: "ok", metadata: { deep: JSON.parse(nested(MAX_JSON_DEPTH - 3)) } } });
    expect((await post("/api/v1/buckets", atLimit, { authorization: `Bearer ${owner.key}` })).status).toBe(201);
    const over = JSON.stringify({ bucket: { title: "ok", metadata: { deep: JSON.parse(nested(MAX_JSON_DEPTH - 1)) } } });
    const r = await post("/api/v1/buckets", over, { authorization: `Bearer ${owner.key}` });
    expect(r.status).toBe(400);
    expect((await r.json()).error.code).toBe("JSON_TOO_DEEP");
  });

  test("other users are answered quickly while deep bodies arrive on every kind of JSON route", async () => {
    const routes = ["/api/v1/buckets", "/oauth/register", "/mcp", "/api/v1/publish_sessions", "/api/v1/agent_auth/request_code"];
    const waited = await probeDuring(() => routes.flatMap((p) => [post(p, nested(20_000)), post(p, nested(50_000).slice(0, 60_000))]));
    // Before the guard one such body held the event loop for 34 s; 1 s leaves room for a busy CI machine.
    expect(waited).toBeLessThan(1000);
  });

  test("a large invalid body from a signed-in caller costs milliseconds, and the error stays small", async () => {
    // 1 MiB of zeros 30 levels deep where tag_paths wants strings: Elysia's own error pretty-printed all of it.
    const zeros = "0,".repeat(500_000 - 200) + "0";
    const body = `{"bucket":{"title":"x","tag_paths":${"[".repeat(30)}${zeros}${"]".repeat(30)}}}`;
    expect(body.length).toBeLessThan(1024 * 1024);
    const t0 = performance.now();
    const r = await post("/api/v1/buckets", body, { authorization: `Bearer ${owner.key}` });
    const took = performance.now() - t0;
    const text = await r.text();
    expect(r.status).toBe(422);
    expect(JSON.parse(text).error.code).toBe("VALIDATION_FAILED");
    expect(text.length).toBeLessThan(10_000);
    expect(took).toBeLessThan(1000);
  });

  test("many invalid fields are reported, not walked to the end", async () => {
    const body = JSON.stringify({ operation: "archive", bucket_ids: Array.from({ length: 5_000 }, () => 1) });
    const r = await post("/api/v1/buckets/bulk", body, { authorization: `Bearer ${owner.key}` });
    expect(r.status).toBe(422);
    const err = (await r.json()).error;
    expect(err.code).toBe("VALIDATION_FAILED");
    expect(err.details.fields.length).toBeLessThanOrEqual(20);
  });
});

describe("body size limits, enforced while streaming", () => {
  test("an unauthenticated 500 MB octet-stream POST is refused before it is read", async () => {
    const chunk = new Uint8Array(1024 * 1024);
    const r = await rawRequest({
      port,
      head: `POST /api/v1/buckets HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: ${500 * 1024 * 1024}`,
      next: (i) => (i < 500 ? chunk : null),
      hangUpOnAnswer: true,
    });
    expect(r.status).toBe(413);
    expect(rawErrorCode(r)).toBe("PAYLOAD_TOO_LARGE");
    expect(r.answeredAfterMs).toBeLessThan(1000);
    expect(r.bodyBytesSent).toBeLessThan(100 * 1024 * 1024);
  });

  test("a chunked body with no length is cut off at the limit, whatever its content type", async () => {
    for (const type of ["application/octet-stream", "text/plain", "multipart/form-data; boundary=x", "application/json", "image/png", ""]) {
      const piece = new Uint8Array(16 * 1024).fill(0x61);
      const hex = piece.byteLength.toString(16);
      const r = await rawRequest({
        port,
        head: `POST /api/v1/buckets HTTP/1.1\r\nHost: 127.0.0.1\r\n${type ? `Content-Type: ${type}\r\n` : ""}Transfer-Encoding: chunked`,
        next: (i) => (i < 2_000 ? Buffer.concat([Buffer.from(`${hex}\r\n`), piece, Buffer.from("\r\n")]) : "0\r\n\r\n"),
        hangUpOnAnswer: true,
      });
      expect(r.status, type).toBe(413);
      expect(rawErrorCode(r)).toBe("PAYLOAD_TOO_LARGE");
      expect(r.bodyBytesSent).toBeLessThan(20 * 1024 * 1024);
    }
  });

  test("routes with larger limits read past the anonymous limit only for a valid credential", async () => {
    const files = Array.from({ length: 600 }, (_, i) => ({
      path: `assets/file-${i}-${"x".repeat(60)}.txt`,
      byte_size: 1,
      checksum: "DMF1ucDxtqgxw5niaXcmYQ==",
      sha256: "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",
    }));
    const body = JSON.stringify({ bucket_title: "Big manifest", files });
    expect(body.length).toBeGreaterThan(ANONYMOUS_BODY_LIMIT);
    const anon = await post("/api/v1/publish_sessions", body);
    expect(anon.status).toBe(413);
    expect((await anon.json()).error.details.max_bytes).toBe(ANONYMOUS_BODY_LIMIT);
    const badKey = await post("/api/v1/publish_sessions", body, { authorization: "Bearer pier_not_a_real_key" });
    expect(badKey.status).toBe(413);
    const signedIn = await post("/api/v1/publish_sessions", body, { authorization: `Bearer ${owner.key}` });
    expect(signedIn.status).toBe(201);
  });

  test("a route's own limit holds for signed-in callers too", async () => {
    const big = JSON.stringify({ bucket: { title: "x", description: "y".repeat(DEFAULT_BODY_LIMIT) } });
    const r = await post(`/api/v1/buckets/bkt_x/archive`, big, { authorization: `Bearer ${owner.key}` });
    expect(r.status).toBe(413);
    expect((await r.json()).error.details.max_bytes).toBe(DEFAULT_BODY_LIMIT);
  });

  test("a lying Content-Length (not a number) is refused", async () => {
    const r = await rawRequest({
      port,
      head: "POST /api/v1/buckets HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1e9\r\nConnection: close",
      next: () => null,
    });
    expect(r.status).toBe(400);
  });
});

describe("site hosts", () => {
  let host: string;
  beforeAll(async () => {
    host = await gateSite();
  });

  test("a 500 MB POST to a site is refused before it is read", async () => {
    const chunk = new Uint8Array(1024 * 1024);
    for (const path of ["/", "/_pier/gate/password"]) {
      const r = await rawRequest({
        port,
        head: `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${500 * 1024 * 1024}`,
        next: (i) => (i < 500 ? chunk : null),
        hangUpOnAnswer: true,
      });
      expect(r.status, path).toBe(413);
      expect(r.answeredAfterMs).toBeLessThan(1000);
    }
  });

  test("a chunked POST to a site is cut off at the site limit", async () => {
    const piece = new Uint8Array(4096).fill(0x61);
    const r = await rawRequest({
      port,
      head: `POST /_pier/gate/password HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked`,
      next: (i) => (i < 10_000 ? Buffer.concat([Buffer.from("1000\r\n"), piece, Buffer.from("\r\n")]) : "0\r\n\r\n"),
      hangUpOnAnswer: true,
    });
    expect(r.status).toBe(413);
    expect(r.bodyBytesSent).toBeLessThan(20 * 1024 * 1024);
    expect(SITE_BODY_LIMIT).toBeLessThan(DEFAULT_BODY_LIMIT + 1);
  });

  test("a normal gate form post still works", async () => {
    const r = await fetch(`${t.url}/_pier/gate/password`, {
      method: "POST",
      redirect: "manual",
      headers: { host, "content-type": "application/x-www-form-urlencoded" },
      body: "password=hunter2hunter2&next=%2F",
    });
    expect(r.status).toBe(303);
  });
});

describe("JSON nesting under other content types", () => {
  // Elysia parses JSON for any type whose 13th character is `j` (application/jsonx), the MCP SDK
  // for any type containing application/json, the OAuth endpoints likewise: the depth guard used
  // to run only for application/json and +json, so these reached the parser however deep they were.
  const deep = `{"bucket":${"[".repeat(30_000)}${"]".repeat(30_000)}}`; // under every route's body limit
  const cases: Array<[string, string]> = [
    ["/api/v1/buckets", "application/jsonx"],
    ["/api/v1/buckets", "application/json5"],
    ["/api/v1/buckets", "text/plain"],
    ["/mcp", "text/plain; profile=application/json"],
    ["/oauth/register", "application/json-patch"],
  ];
  for (const [path, type] of cases) {
    test(`a 30,000-deep body sent to ${path} as ${type} is refused at once with JSON_TOO_DEEP`, async () => {
      const t0 = performance.now();
      const r = await post(path, ` \n${deep}`, { "content-type": type, authorization: `Bearer ${owner.key}` });
      const took = performance.now() - t0;
      expect(r.status).toBe(400);
      expect((await r.json()).error.code).toBe("JSON_TOO_DEEP");
      expect(took).toBeLessThan(1500);
    });
  }
});

describe("OAuth endpoints rely on the listener's limit", () => {
  test("a form body over the default limit to /oauth/token or the consent page is refused before the route reads it", async () => {
    const big = `grant_type=refresh_token&refresh_token=${"a".repeat(DEFAULT_BODY_LIMIT)}`;
    for (const path of ["/oauth/token", "/oauth/authorize"]) {
      const r = await post(path, big, { "content-type": "application/x-www-form-urlencoded" });
      expect(r.status).toBe(413);
      expect((await r.json()).error.code).toBe("PAYLOAD_TOO_LARGE");
    }
  });
});

// Each of these waits out one of the server's timers (the body timeout, a refusal's lingering
// close, the idle timeout) and uses next to no CPU meanwhile: they wait side by side.
describe.concurrent("waiting out the server's timers", () => {
  let host: string;
  let idle: TestPier;
  beforeAll(async () => {
    host = await gateSite();
    idle = await startTestPier({ idleTimeoutSeconds: 4 });
  });
  afterAll(() => idle?.stop());

  test("a body sent one byte at a time is cut off after the body timeout with 408 BODY_TIMEOUT", async () => {
    const body = JSON.stringify({ bucket: { title: "slow" } });
    const r = await rawRequest({
      port,
      head: `POST /api/v1/buckets HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nAuthorization: Bearer ${owner.key}`,
      next: (i) => (i < body.length ? body[i]! : null),
      every: 500,
    });
    expect(r.status).toBe(408);
    expect(rawErrorCode(r)).toBe("BODY_TIMEOUT");
    expect(r.answeredAfterMs).toBeGreaterThan(BODY_TIMEOUT_S * 1000 - 200);
    expect(r.answeredAfterMs).toBeLessThan(BODY_TIMEOUT_S * 1000 + 3000);
    expect(r.closedAfterMs).toBeLessThan(BODY_TIMEOUT_S * 1000 + 5000);
  });

  test("a storage upload that stops sending is disconnected after the same time without a byte", async () => {
    const bytes = new Uint8Array(100_000).fill(7);
    const r = await rawRequest({
      port,
      head: await storagePutHead(t, owner, bytes),
      next: (i) => (i === 0 ? bytes.slice(0, 1000) : null), // then silence
    });
    expect(r.closedAfterMs).toBeGreaterThan(BODY_TIMEOUT_S * 1000 - 200);
    expect(r.closedAfterMs).toBeLessThan(BODY_TIMEOUT_S * 1000 + 5000);
    expect(r.status === 0 || r.status >= 400).toBe(true);
  });
  test("a refused body's connection stays open 4 to 8 s for its answer to be read, then is cut while the client still sends", async () => {
    // Closing at once while the client still sends makes the kernel reset the connection, and the
    // reset can overtake the 413 (a client in another process then sees "connection reset").
    const piece = new Uint8Array(64 * 1024);
    const refused = (hostHeader: string, path: string) =>
      rawRequest({
        port,
        head: `POST ${path} HTTP/1.1\r\nHost: ${hostHeader}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${500 * 1024 * 1024}`,
        next: () => piece,
        every: 50,
        stopOnAnswer: false,
      });
    for (const r of await Promise.all([refused(host, "/_pier/gate/password"), refused("127.0.0.1", "/api/v1/buckets")])) {
      expect(r.status).toBe(413);
      expect(r.text.toLowerCase()).not.toContain("connection: close");
      expect(r.answeredAfterMs).toBeLessThan(1000);
      expect(r.closedAfterMs - r.answeredAfterMs).toBeGreaterThan(3_500);
      expect(r.closedAfterMs).toBeLessThan(10_000);
    }
  });

  test("a slow gate form post is cut off after the body timeout", async () => {
    const form = "password=hunter2hunter2&next=%2F";
    const r = await rawRequest({
      port,
      head: `POST /_pier/gate/password HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}`,
      next: (i) => (i < form.length ? form[i]! : null),
      hangUpOnAnswer: true,
      every: 500,
    });
    expect(r.status).toBe(408);
    expect(r.answeredAfterMs).toBeLessThan(BODY_TIMEOUT_S * 1000 + 3000);
  });

  test("a storage PUT with a bad token and a 100 MB Content-Length but no body is answered and disconnected", async () => {
    // The stall guard used to switch Bun's idle timer off before the token was checked, so the
    // refused request's socket stayed open for good: a cheap way to hold connections.
    const r = await rawRequest({
      port,
      head: `PUT /_storage/abc.def HTTP/1.1\r\nHost: ${new URL(t.url).host}\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000000`,
      next: () => null,
      giveUpMs: 15_000,
    });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    // Cut by the refusal's lingering close (4 to 8 s: body-limit.ts), not kept for Bun's idle timer.
    expect(r.closedAfterMs).toBeLessThan(10_000);
  });
  test("a connection kept alive after a storage upload or an API post idles out after --idle-timeout", async () => {
    // The upload's stall guard switches Bun's idle timer off while the body streams, and a
    // buffered body gets the body deadline as its timer; both stayed on the connection after the
    // answer (never closed, or closed after 35 s).
    const u = await idle.user();
    const bytes = new Uint8Array(100_000).fill(9);
    const json = '{"bucket":{"title":"kept alive"}}';
    const [upload, post] = await Promise.all([
      rawRequest({ port: idle.pier.httpPort, head: await storagePutHead(idle, u, bytes), next: (i) => (i === 0 ? bytes : null), giveUpMs: 30_000 }),
      rawRequest({
        port: idle.pier.httpPort,
        head: `POST /api/v1/buckets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${u.key}\r\nContent-Type: application/json\r\nContent-Length: ${json.length}`,
        next: (i) => (i === 0 ? json : null),
        giveUpMs: 30_000,
      }),
    ]);
    expect(upload.status).toBeLessThan(300);
    expect(post.status).toBe(201);
    // 4 s on Bun's 4-second tick: closed within 8 s of the answer (a margin for a busy machine).
    for (const r of [upload, post]) expect(r.closedAfterMs - r.answeredAfterMs).toBeLessThan(12_000);
  }, 60_000);
});
