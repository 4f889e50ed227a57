// A form sent twice (a double click, a browser re-sending it) acts once: the second POST of the
// same rendered form is sent where the first one led, and nothing is created twice.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Browser } from "../../helpers/browser";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";

let t: TestPier;

/** The token of the page's own forms (the sign-out form in the navigation carries a plain one). */
const formCsrf = (html: string) => [...html.matchAll(/name="csrf" value="([^"]+)"/g)].map((m) => m[1]!).find((v) => v.includes("~"))!;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t?.stop());

test("the same create form posted twice creates one bucket and both answers lead to it", async () => {
  const u = await t.user();
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  const csrf = formCsrf((await b.get("/dashboard/buckets")).text);
  const [first, second] = await Promise.all([
    b.post("/dashboard/buckets", { csrf, title: "Only once" }),
    b.post("/dashboard/buckets", { csrf, title: "Only once" }),
  ]);
  expect(first.status).toBe(303);
  expect(second.status).toBe(303);
  expect(second.location).toBe(first.location);
  const titles = (await t.api("GET", "/api/v1/buckets", { key: u.key })).body.data.buckets.map((x: { title: string }) => x.title);
  expect(titles.filter((x: string) => x === "Only once")).toHaveLength(1);

  // A freshly rendered form is a new submission: it creates a second one.
  const again = formCsrf((await b.get("/dashboard/buckets")).text);
  expect(again).not.toBe(csrf);
  expect((await b.post("/dashboard/buckets", { csrf: again, title: "Only once" })).status).toBe(303);
  const after = (await t.api("GET", "/api/v1/buckets", { key: u.key })).body.data.buckets.filter((x: { title: string }) => x.title === "Only once");
  expect(after).toHaveLength(2);
});

test("a token from another session, or a tampered one, changes nothing", async () => {
  const u = await t.user();
  const other = await t.user();
  const mine = new Browser(t.url);
  const theirs = new Browser(t.url);
  await mine.submit("/signin", "/signin", { email: u.email, password: u.password });
  await theirs.submit("/signin", "/signin", { email: other.email, password: other.password });
  const theirCsrf = formCsrf((await theirs.get("/dashboard/buckets")).text);
  const myCsrf = formCsrf((await mine.get("/dashboard/buckets")).text);
  for (const csrf of [theirCsrf, `${myCsrf.split("~")[0]}x~nonce`, "", "~"]) {
    const res = await mine.post("/dashboard/buckets", { csrf, title: "Forged" });
    expect(res.status).toBe(403);
  }
  const titles = (await t.api("GET", "/api/v1/buckets", { key: u.key })).body.data.buckets.map((x: { title: string }) => x.title);
  expect(titles).not.toContain("Forged");
});

test("forms a page builds in code (a custom domain's Remove) are guarded too: sent twice, both answers lead to the same page; unconfirmed, nothing", async () => {
  const u = await t.user({ plan: "pro" });
  const site = await publishSite(t, { user: u, files: [{ path: "index.html", bytes: "hi" }] });
  const bucket = site.pub.bucketId;
  const added = await t.api("POST", `/api/v1/buckets/${bucket}/custom_domains`, { key: u.key, body: { hostname: "www.double-remove.com" } });
  expect(added.status).toBe(201);
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  const page = (await b.get(`/dashboard/buckets/${bucket}/domains`)).text;
  const [, action, csrf] = page.match(/<form method="post" action="([^"]*\/delete)"><input type="hidden" name="csrf" value="([^"]+)">/)!;
  const listed = async () => (await t.api("GET", `/api/v1/buckets/${bucket}/custom_domains`, { key: u.key })).body.data.custom_domains;
  // Removing needs the box ticked (D297): a bare post (a stray click, a script) removes nothing
  // and says what to do next to the box, which the browser requires.
  const bare = await b.post(action!, { csrf: csrf! });
  expect((await listed()).length).toBe(1);
  expect(bare.status).toBe(422);
  expect(bare.text).toMatch(
    /name="confirm" required aria-invalid="true" aria-describedby="[^"]+-confirm-error">[^<]*<\/label><span class="field-error" id="[^"]+-confirm-error">Tick the box to confirm/,
  );
  expect(page).toMatch(/<input type="checkbox" name="confirm" required> Remove www\.double-remove\.com/);
  const first = await b.post(action!, { csrf: csrf!, confirm: "on" });
  const second = await b.post(action!, { csrf: csrf!, confirm: "on" });
  expect([first.status, second.status]).toEqual([303, 303]);
  expect(second.location).toBe(first.location);
  expect(await listed()).toEqual([]);
});
