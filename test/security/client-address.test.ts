// Attacks on how Pier tells clients apart (docs/security.md, "Accounts, sessions, OAuth and
// gates"): every address-keyed limit is only as good as the address it is keyed by.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestPier, type TestPier } from "../helpers/pier";

describe("behind a trusted proxy that appends to X-Forwarded-For", () => {
  let t: TestPier;
  beforeAll(async () => {
    t = await startTestPier({ rateLimitAnonPerMinute: 1, trustProxy: true });
  });
  afterAll(() => t.stop());

  test("a client that sends its own X-Forwarded-For entries cannot choose a fresh address for each request", async () => {
    // The proxy appends the peer it saw (203.0.113.5); the attacker prefixes a new made-up
    // address every time. Pier used to key limits by the leftmost entry: a new budget each time.
    const viaProxy = (forged: string) => t.api("GET", "/api/v1/status", { headers: { "x-forwarded-for": `${forged}, 203.0.113.5` } });
    expect((await viaProxy("198.51.100.1")).status).toBe(200);
    for (const forged of ["198.51.100.2", "198.51.100.3", "10.9.9.9"]) expect((await viaProxy(forged)).status).toBe(429);
    // Another real client behind the same proxy still has its own budget.
    expect((await t.api("GET", "/api/v1/status", { headers: { "x-forwarded-for": "203.0.113.6" } })).status).toBe(200);
  });

  test("an IPv6 client rotating addresses inside its /64 shares one anonymous budget", async () => {
    const from = (ip: string) => t.api("GET", "/api/v1/status", { headers: { "x-forwarded-for": ip } });
    expect((await from("2001:db8:1:2::1")).status).toBe(200);
    for (const ip of ["2001:db8:1:2::2", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:0DB8:0001:0002:0:0:0:9"]) expect((await from(ip)).status).toBe(429);
    expect((await from("2001:db8:1:3::1")).status).toBe(200); // the next /64 is someone else
  });

  test("other spellings of one IPv4 address (mapped IPv6, with a port) share its budget", async () => {
    const from = (ip: string) => t.api("GET", "/api/v1/status", { headers: { "x-forwarded-for": ip } });
    expect((await from("192.0.2.77")).status).toBe(200);
    for (const ip of ["::ffff:192.0.2.77", "0:0:0:0:0:ffff:c000:24d", "192.0.2.77:40000"]) expect((await from(ip)).status).toBe(429);
  });
});
