// A site read on its custom domain is counted like one read on its slug host: once a domain is
// active it is the site's public URL, so most of its readers never see the slug host. The
// domain itself is the site's own host (navigation, not a referrer).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startChallTestSrv, type ChallTestSrv } from "../../helpers/challtestsrv";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";

const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";
const DOMAIN = "www.counted-shop.com";

let cts: ChallTestSrv;
let t: TestPier;

beforeAll(async () => {
  cts = await startChallTestSrv({ defaultIPv4: "" });
  t = await startTestPier({ baseUrl: "http://pier.test", sitesDomain: "sites.pier.test", trustProxy: true, dnsResolver: cts.dns });
  const direct = t.api;
  t.api = (method, path, o = {}) => direct(method, path, { ...o, headers: { host: "pier.test", ...o.headers } });
});
afterAll(async () => {
  await t?.stop();
  await cts?.stop();
});

test("hits on an active custom domain are counted, and the domain is not listed as a referrer", async () => {
  const user = await t.user({ plan: "pro" });
  const s = await publishSite(t, {
    user,
    files: [
      { path: "index.html", bytes: "<!doctype html><h1>Home</h1>" },
      { path: "about.html", bytes: "<!doctype html><h1>About</h1>" },
    ],
  });
  const added = await t.api("POST", `/api/v1/buckets/${s.pub.bucketId}/custom_domains`, { key: user.key, body: { hostname: DOMAIN } });
  expect(added.status).toBe(201);
  const d = added.body.data.custom_domain;
  const ownership = d.required_dns_records.find((r: any) => r.purpose === "ownership");
  await cts.setTxt(ownership.name, ownership.value);
  await cts.setCname(DOMAIN, "pier.test");
  const refreshed = await t.api("POST", `/api/v1/buckets/${s.pub.bucketId}/custom_domains/${d.id}/refresh`, { key: user.key });
  expect(refreshed.body.data.custom_domain.status).toBe("active");

  // Read by the primary (it follows the test's clock and flushes on flush()).
  const get = async (path: string, referer?: string) => {
    const r = await t.primaryFetch(DOMAIN, path, { headers: { "user-agent": FIREFOX, "x-forwarded-for": "8.8.8.8", ...(referer ? { referer } : {}) } });
    await r.arrayBuffer();
    return r.status;
  };
  expect(await get("/", "https://news.example.org/item?id=1")).toBe(200);
  expect(await get("/about", `http://${DOMAIN}/`)).toBe(200);
  expect(await get("/gone")).toBe(404);
  t.pier.deps.analytics.flush();

  const r = await t.api("GET", `/api/v1/publications/${s.pub.id}/analytics?range=24h`, { key: user.key });
  expect(r.status).toBe(200);
  const a = r.body.data.analytics;
  expect(a.totals).toMatchObject({ hits_all_time: 3, hits: 3, views: 3, visitors: 1, hits_not_found: 1, hits_bots: 0 });
  expect(a.paths).toEqual([
    { path: "/", hits: 1 },
    { path: "/about", hits: 1 },
  ]);
  expect(a.referrers).toEqual([{ referrer: "news.example.org", hits: 1 }]);
  expect(a.paths_not_found.map((p: any) => p.path)).toEqual(["/gone"]);
});
