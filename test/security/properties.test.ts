// Property-based tests (fast-check) for inputs attackers choose: JSON bodies and Host headers.
// Whatever arrives, Pier answers with a 2xx or a 4xx carrying a catalogue code, never a 500,
// quickly, and a Host never reaches another site's content.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { errorCatalogue } from "../../src/core/errors";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { rawRequest } from "../helpers/raw-http";
import { publishSite } from "../helpers/sites";

let t: TestPier;
let owner: TestUser;
let bucketId: string;
let siteHost: string;
const SECRET = "only-on-site-a-7f3k";

beforeAll(async () => {
  t = await startTestPier({ rateLimitPerMinute: 1_000_000 });
  owner = await t.user();
  bucketId = (await t.api("POST", "/api/v1/buckets", { key: owner.key, body: { bucket: { title: "props" } } })).body.data.bucket.id;
  siteHost = (await publishSite(t, { files: [{ path: "index.html", bytes: new TextEncoder().encode(`<p>${SECRET}</p>`), contentType: "text/html" }] })).host;
});
afterAll(() => t.stop());

const jsonValue = fc.oneof(
  fc.jsonValue({ maxDepth: 40 }),
  fc.letrec((tie) => ({
    deep: fc.oneof({ depthSize: "small" }, fc.constant(0), fc.array(tie("deep"), { maxLength: 2 }), fc.dictionary(fc.string(), tie("deep"), { maxKeys: 2 })),
  })).deep,
  fc.record({
    bucket: fc.record(
      { title: fc.oneof(fc.string(), fc.integer(), fc.constant(null)), tag_paths: fc.array(fc.jsonValue(), { maxLength: 30 }), metadata: fc.jsonValue() },
      { requiredKeys: [] },
    ),
  }),
  fc.record({ operation: fc.string(), bucket_ids: fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 200 }) }),
);
const rawBody = fc.oneof(
  jsonValue.map((v) => JSON.stringify(v)),
  fc.string({ unit: "binary", maxLength: 2000 }),
  fc.integer({ min: 1, max: 3000 }).map((n) => "[".repeat(n)),
  fc.tuple(fc.integer({ min: 0, max: 20 }), fc.string({ maxLength: 5000 })).map(([d, s]) => '{"a":'.repeat(d) + JSON.stringify(s) + "}".repeat(d)),
);
const routes = () => [
  { method: "POST", path: "/api/v1/buckets", auth: true },
  { method: "PATCH", path: `/api/v1/buckets/${bucketId}`, auth: true },
  { method: "POST", path: "/api/v1/buckets/bulk", auth: true },
  { method: "PATCH", path: `/api/v1/buckets/${bucketId}/variables`, auth: true },
  { method: "POST", path: "/api/v1/publish_sessions", auth: true },
  { method: "POST", path: "/api/v1/buckets", auth: false },
  { method: "POST", path: "/oauth/register", auth: false },
  { method: "POST", path: "/oauth/token", auth: false },
  { method: "POST", path: "/api/v1/agent_auth/request_code", auth: false },
];

test("random JSON bodies: 2xx or a catalogued 4xx, never 500, each answered quickly", async () => {
  const codes = new Set(Object.keys(errorCatalogue));
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: routes().length - 1 }),
      rawBody,
      fc.constantFrom("application/json", "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded"),
      async (i, body, type) => {
        const r = routes()[i]!;
        const t0 = performance.now();
        const res = await fetch(t.url + r.path, {
          method: r.method,
          body,
          headers: { "content-type": type, ...(r.auth ? { authorization: `Bearer ${owner.key}` } : {}) },
        });
        const text = await res.text();
        const took = performance.now() - t0;
        expect(res.status, `${r.method} ${r.path} ${body.slice(0, 80)}`).toBeLessThan(500);
        expect(took).toBeLessThan(1000);
        if (res.status >= 400 && !r.path.startsWith("/oauth/")) {
          const code = JSON.parse(text).error.code;
          expect(codes.has(code)).toBe(true);
        }
      },
    ),
    { numRuns: 150 },
  );
});

test("random Host headers: never a 500, and only the exact site host gets the site's content", async () => {
  const port = t.pier.httpPort;
  const label = siteHost.split(".")[0]!;
  const hostChar = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789-._:[]@%ABC*".split(""));
  const hosts = fc.oneof(
    fc.string({ unit: hostChar, maxLength: 80 }),
    fc.string({ unit: hostChar, maxLength: 20 }).map((s) => `${s}${siteHost}`),
    fc.string({ unit: hostChar, maxLength: 20 }).map((s) => `${siteHost}${s}`),
    fc.string({ unit: hostChar, maxLength: 20 }).map((s) => `${label}${s}.localhost`),
    fc.string({ unit: fc.constantFrom(..." \t!\"#$&'()+,;<=>?^`{|}~".split("")), maxLength: 5 }).map((s) => `${label}${s}.localhost`),
    fc.string({ unit: "grapheme-ascii", maxLength: 300 }),
  );
  // The same host, as a browser may legitimately write it.
  const isSiteA = (h: string) => {
    const m = /^([^:]*?)\.?(?::(\d{1,5}))?$/.exec(h.trim().toLowerCase());
    return !!m && m[1] === siteHost && (m[2] === undefined || Number(m[2]) <= 65535);
  };
  await fc.assert(
    fc.asyncProperty(hosts, async (host) => {
      if (/[\r\n]/.test(host)) return;
      const r = await rawRequest({ port, head: `GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close`, next: () => null, giveUpMs: 5000 });
      expect(r.status, JSON.stringify(host)).toBeGreaterThan(0);
      expect(r.status).toBeLessThan(500);
      if (!isSiteA(host)) expect(r.text.includes(SECRET), JSON.stringify(host)).toBe(false);
    }),
    { numRuns: 200 },
  );
  // And the property is not vacuous: the real host does serve it.
  const ok = await rawRequest({ port, head: `GET / HTTP/1.1\r\nHost: ${siteHost}:${port}\r\nConnection: close`, next: () => null });
  expect(ok.text).toContain(SECRET);
});
