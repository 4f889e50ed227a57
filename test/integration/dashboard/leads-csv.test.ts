// The Site tab's "Download all as CSV" of a require_email site's visitors: every confirmed
// address once, by address, read back with a real CSV parser, for the bucket's administrators only.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { signedIn } from "../../helpers/browser";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch } from "../../helpers/sites";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t?.stop());

test("a require_email site's visitors download as one CSV, each address once, across pages", async () => {
  const owner = await t.user({ plan: "pro" });
  const site = await publishSite(t, { files: [{ path: "index.html", bytes: "<p>members</p>" }], access: "require_email", user: owner });
  // A real visitor through a recipient link, then many more (a busy site's leads span pages).
  const made = await t.api("POST", `/api/v1/publications/${site.pub.id}/recipient_links`, { key: owner.key, body: { emails: ["Ann@Example.com"] } });
  expect(made.status).toBe(200);
  const link = new URL(made.body.data.recipient_links[0].url);
  expect((await siteFetch(t, site.host, link.pathname + link.search)).status).toBe(303);
  const insert = t.pier.deps.sqlite.prepare(
    "INSERT INTO site_leads (publication_id, email, first_access_at, last_access_at, access_count) VALUES (?, ?, ?, ?, ?)",
  );
  for (let i = 0; i < 450; i++)
    insert.run(site.pub.id, `reader${String(i).padStart(3, "0")}@example.com`, "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z", i + 1);

  const b = await signedIn(t.url, owner);
  const tab = (await b.get(`/dashboard/buckets/${site.pub.bucketId}/site`)).text;
  expect(tab).toContain(`href="/dashboard/buckets/${site.pub.bucketId}/site/leads.csv"`);
  const r = await fetch(`${t.url}/dashboard/buckets/${site.pub.bucketId}/site/leads.csv`, { headers: { cookie: b.cookieHeader() } });
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("text/csv; charset=utf-8");
  expect(r.headers.get("content-disposition")).toContain(`filename="${site.pub.publicSlug}-visitors-`);
  const rows = parse(Buffer.from(await r.arrayBuffer()), { bom: true }) as string[][];
  expect(rows[0]).toEqual(["Email", "First visit (UTC)", "Last visit (UTC)", "Visits"]);
  const emails = rows.slice(1).map((row) => row[0]!);
  expect(emails.length).toBe(451);
  expect(emails).toEqual([...emails].sort());
  expect(new Set(emails).size).toBe(451);
  expect(rows.find((row) => row[0] === "ann@example.com")?.[3]).toBe("1");
  expect(rows.find((row) => row[0] === "reader449@example.com")).toEqual([
    "reader449@example.com",
    "2026-01-01T00:00:00.000Z",
    "2026-01-02T00:00:00.000Z",
    "450",
  ]);
});

test("only the bucket's administrators get the file; a bucket without a site has none", async () => {
  const owner = await t.user({ plan: "pro" });
  const site = await publishSite(t, { files: [{ path: "index.html", bytes: "<p>members</p>" }], access: "require_email", user: owner });
  const path = `/dashboard/buckets/${site.pub.bucketId}/site/leads.csv`;
  expect((await (await signedIn(t.url, await t.user())).get(path)).status).toBe(404);
  const signedOut = await fetch(t.url + path, { redirect: "manual" });
  expect([signedOut.status, signedOut.headers.get("location")]).toEqual([303, expect.stringContaining("/signin")]);
  const b = await signedIn(t.url, owner);
  const empty = await createBucket(t, owner, { title: "No site" });
  expect((await b.get(`/dashboard/buckets/${empty.id}/site/leads.csv`)).status).toBe(404);
});
