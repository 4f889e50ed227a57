// The access log and the log formats: one line per request with what an operator needs
// (request id matching the response's X-Request-Id, host kind, status, duration, bytes) and
// nothing a log reader should not see (paths, query strings, tokens, full client addresses).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../../src/core/log";
import { truncateIp } from "../../../src/http/request-metrics";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";

const lines: string[] = [];
let t: TestPier;

beforeAll(async () => {
  t = await startTestPier({ accessLog: true, logClientIp: "truncated" }, { log: createLogger("info", (l) => lines.push(l), "json") });
});
afterAll(() => t?.stop());

const requestLines = () => lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "request");

async function waitForLine(id: string) {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const hit = requestLines().find((l) => l.request_id === id);
    if (hit) return hit;
    await Bun.sleep(20);
  }
  throw new Error(`no access log line for ${id}`);
}

describe("access log", () => {
  test("one JSON line per API request: request id, host kind, route group, status, duration, bytes", async () => {
    const before = requestLines().length;
    const res = await fetch(`${t.url}/api/v1/status?token=query-secret-value`, { headers: { authorization: "Bearer pier_not_a_real_key_secret" } });
    await res.text();
    const line = await waitForLine(res.headers.get("x-request-id")!);
    expect(line).toMatchObject({ level: "info", host_kind: "api", route: "api", method: "GET", status: res.status });
    expect(typeof line.ms).toBe("number");
    expect(line.ms).toBeGreaterThanOrEqual(0);
    expect(line.client).toBe("127.0.0.0/24");
    expect(requestLines().length).toBe(before + 1);
    const all = lines.join("\n");
    expect(all).not.toContain("query-secret-value");
    expect(all).not.toContain("pier_not_a_real_key_secret");
    expect(all).not.toContain("/api/v1/status");
  });

  test("site requests are logged with their host kind and byte count", async () => {
    const site = await publishSite(t, { files: [{ path: "index.html", bytes: "hello" }] });
    // The logger that collects `lines` is this process's: with serving workers on, a worker would
    // write its line to its own output, so the request goes to the primary.
    const res = await t.primaryFetch(site.host, "/secret-page-name");
    await res.text();
    const line = await waitForLine(res.headers.get("x-request-id")!);
    expect(line).toMatchObject({ host_kind: "site", route: "page", status: 404 });
    expect(lines.join("\n")).not.toContain("secret-page-name");
  });

  test("off by default", async () => {
    const quiet: string[] = [];
    const other = await startTestPier({}, { log: createLogger("info", (l) => quiet.push(l)) });
    try {
      await (await fetch(`${other.url}/api/v1/status`)).text();
      await (await fetch(`${other.url}/livez`)).text();
      expect(quiet.filter((l) => l.includes('"msg":"request"'))).toEqual([]);
    } finally {
      await other.stop();
    }
  });
});

describe("log formats and client addresses", () => {
  test("text format: one readable line per entry, values quoted when needed, secrets redacted, no line breaks from values", () => {
    const out: string[] = [];
    const log = createLogger("info", (l) => out.push(l), "text");
    log.info("request", { status: 200, route: "api", note: "two words", password: "hunter2" });
    log.warn("multi\nline message", { detail: "a\nb" });
    expect(out).toHaveLength(2);
    expect(out[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z INFO  request status=200 route=api note="two words" password=\[redacted\]$/);
    expect(out[1]).not.toContain("\n");
    expect(out[1]).toContain('detail="a\\nb"');
    expect(out.join("")).not.toContain("hunter2");
  });

  test("truncated addresses keep the network, not the host", () => {
    expect(truncateIp("203.0.113.77")).toBe("203.0.113.0/24");
    expect(truncateIp("::ffff:198.51.100.9")).toBe("198.51.100.0/24");
    expect(truncateIp("2001:db8:abcd:12:1:2:3:4")).toBe("2001:db8:abcd::/48");
    expect(truncateIp("2001:db8::1")).toBe("2001:db8:0::/48");
  });
});
