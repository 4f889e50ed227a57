// --geoip-db FILE: countries come from the operator's MMDB file instead of the embedded one, and
// a file that is not an MMDB database stops Pier at start with the flag's name. The other file
// here is the IPv6-only edition of the embedded database: an IPv4 reader, whom the embedded
// database (IPv4 and IPv6) places, is counted with no country.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countryLookup } from "../../../src/features/analytics/geo";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";

const IPV6_ONLY = require.resolve("@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country-ipv6.mmdb");
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
const SAFARI = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15";
const GOOGLE_DNS = "8.8.8.8";
const HETZNER_V6 = "2a01:4f8::1";

let t: TestPier | undefined;
afterAll(() => t?.stop());

test("countries come from the --geoip-db file", async () => {
  expect(countryLookup(null)(GOOGLE_DNS)).toBe("US"); // the embedded database places it
  t = await startTestPier({ trustProxy: true, geoipDb: IPV6_ONLY });
  const s = await publishSite(t, { files: [{ path: "index.html", bytes: "<!doctype html><h1>hi</h1>" }] });
  for (const [ua, ip] of [
    [FIREFOX, GOOGLE_DNS],
    [SAFARI, HETZNER_V6],
  ]) {
    const r = await t.primaryFetch(s.host, "/", { headers: { "user-agent": ua!, "x-forwarded-for": ip! } });
    expect(r.status).toBe(200);
    await r.arrayBuffer();
  }
  t.pier.deps.analytics.flush();
  const a = (await t.api("GET", `/api/v1/publications/${s.pub.id}/analytics?range=24h`, { key: s.user.key })).body.data.analytics;
  expect(a.totals).toMatchObject({ hits: 2, visitors: 2 });
  expect(a.countries).toEqual([{ country: "DE", hits: 1 }]);
});

test("a file that is not an MMDB database stops Pier at start, naming the flag", async () => {
  const bogus = join(mkdtempSync(join(tmpdir(), "pier-geoip-")), "countries.mmdb");
  writeFileSync(bogus, "not a MaxMind database");
  await expect(startTestPier({ geoipDb: bogus })).rejects.toThrow(/--geoip-db .*countries\.mmdb/);
});
