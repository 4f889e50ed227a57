// The Forms tab's "Download CSV": every submission of a bucket (or of one form) in one file a
// spreadsheet opens, read back here with a real CSV parser. A visitor's input that looks like a
// formula stays text, quotes, commas, line breaks and non-ASCII survive, pages of the export
// neither repeat nor skip a row, and only members who may read submissions get the file.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { parse } from "csv-parse/sync";
import { storeSubmission } from "../../../src/features/forms/store";
import { type Browser, signedIn } from "../../helpers/browser";
import { filledTimer, solveFormChallenge } from "../../helpers/forms";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { publishSite, siteFetch, type PublishedSite } from "../../helpers/sites";

let t: TestPier;
let owner: TestUser;
let site: PublishedSite;
let b: Browser;
beforeAll(async () => {
  t = await startTestPier();
  owner = await t.user({ plan: "pro" });
  site = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>Home</h1>" }], title: "Café Ünïcode", user: owner });
  const r = await t.api("PATCH", `/api/v1/buckets/${site.pub.bucketId}`, {
    key: owner.key,
    body: { bucket: { metadata: { publication_forms: { forms: [{ name: "contact" }, { name: "waitlist" }] } } } },
  });
  expect(r.status).toBe(200);
  b = await signedIn(t.url, owner);
});
afterAll(() => t?.stop());

const csvPath = (query = "") => `/dashboard/buckets/${site.pub.bucketId}/forms/submissions.csv${query}`;
/** The download's bytes as a browser saves them, then its rows as a spreadsheet reads them. */
async function download(browser: Browser, query = "") {
  const r = await fetch(t.url + csvPath(query), { headers: { cookie: browser.cookieHeader() } });
  const bytes = new Uint8Array(await r.arrayBuffer());
  const rows = parse(Buffer.from(bytes), { bom: true }) as string[][];
  return { status: r.status, headers: r.headers, bytes, rows };
}

async function visitorPost(form: "contact" | "waitlist", fields: Record<string, string>) {
  const altcha = await solveFormChallenge(t, site.host);
  const r = await siteFetch(t, site.host, `/_pier/form/${form}`, {
    method: "POST",
    body: JSON.stringify({ ...fields, altcha, _pier_started: filledTimer(t, site.pub.id, form) }),
    headers: { origin: `http://${site.host}`, "content-type": "application/json", accept: "application/json" },
  });
  expect(r.status).toBe(201);
  return ((await r.json()) as { data: { form_submission: { id: string } } }).data.form_submission.id;
}

test("a visitor's tricky input comes out as the same text, formulas neutralized, newest first, with the form's columns", async () => {
  const page = (await b.get(`/dashboard/buckets/${site.pub.bucketId}/forms`)).text;
  expect(page).not.toContain('id="submissions-csv"'); // nothing to download yet
  const first = await visitorPost("contact", {
    name: '=HYPERLINK("http://evil.example","x")',
    email: "ann@example.com",
    message: 'Hello, "world"\nsecond line — ünïcode',
  });
  t.clock.advance(1000);
  const second = await visitorPost("waitlist", { name: "@SUM(A1:A9)", email: "+ben@example.com" });

  const listed = (await b.get(`/dashboard/buckets/${site.pub.bucketId}/forms`)).text;
  expect(listed).toContain(`href="${csvPath()}"`);
  const all = await download(b);
  expect(all.status).toBe(200);
  expect(all.headers.get("content-type")).toBe("text/csv; charset=utf-8");
  expect(all.headers.get("content-disposition")).toMatch(
    /^attachment; filename="Caf-n-code-forms-\d{4}-\d{2}-\d{2}\.csv"; filename\*=UTF-8''Caf%C3%A9%20%C3%9Cn%C3%AFcode%20forms%20/,
  );
  expect(all.headers.get("cache-control")).toBe("no-store");
  expect([...all.bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]); // spreadsheets read it as UTF-8
  // Every form's fields, each once, between the time and form and the context.
  const header = all.rows[0]!;
  expect(header.slice(0, 5)).toEqual(["Submitted at (UTC)", "Form", "Name", "Email", "Message"]);
  expect(header.slice(-3)).toEqual(["Document path", "Document page", "Submission id"]);
  expect(header).toContain("Project details");
  expect(new Set(header).size).toBe(header.length);
  const col = (name: string) => header.indexOf(name);
  expect(all.rows.length).toBe(3);
  const [newest, oldest] = [all.rows[1]!, all.rows[2]!];
  expect(newest[col("Submission id")]).toBe(second);
  expect(oldest[col("Submission id")]).toBe(first);
  expect(newest[col("Form")]).toBe("Join the Waitlist");
  // What a spreadsheet would run is prefixed with a quote; the rest is the visitor's text exactly.
  expect(newest[col("Name")]).toBe("'@SUM(A1:A9)");
  expect(newest[col("Email")]).toBe("'+ben@example.com");
  expect(oldest[col("Name")]).toBe('\'=HYPERLINK("http://evil.example","x")');
  expect(oldest[col("Message")]).toBe('Hello, "world"\nsecond line — ünïcode');
  expect(oldest[col("Email")]).toBe("ann@example.com");
  expect(new Date(oldest[col("Submitted at (UTC)")]!).getTime()).toBeLessThan(new Date(newest[col("Submitted at (UTC)")]!).getTime());

  // One form: its own columns only.
  const contact = await download(b, "?form=contact");
  expect(contact.rows[0]).toEqual(["Submitted at (UTC)", "Form", "Name", "Email", "Message", "Document path", "Document page", "Submission id"]);
  expect(contact.rows.slice(1).map((r) => r.at(-1))).toEqual([first]);
  expect(contact.headers.get("content-disposition")).toContain("contact");
  // An unknown form: the Forms tab with the error, no file.
  const unknown = await b.get(csvPath("?form=chat"));
  expect(unknown.status).toBe(422);
  expect(unknown.headers.get("content-type")).toContain("text/html");
  expect(unknown.text).toContain("form_name must be one of");
});

test("a large export is read in pages that neither repeat nor skip a submission", async () => {
  // Seeded through the store the visitor endpoint writes with (proof of work for 600 posts would take minutes).
  const deps = t.pier.deps;
  for (let i = 0; i < 600; i++) {
    // Three to a millisecond, so a page ends inside a tie: the order falls back to the id.
    if (i % 3 === 0) t.clock.advance(1);
    storeSubmission(deps, {
      bucketId: site.pub.bucketId,
      accountId: owner.accountId,
      formName: "waitlist",
      value: { fields: { email: `reader${i}@example.com` }, context: { document_path: null, document_page: null, document_selection: null } },
    });
  }
  const expected = (await t.api("GET", `/api/v1/buckets/${site.pub.bucketId}/form_submissions?form_name=waitlist&limit=1`, { key: owner.key })).body.data
    .pagination.total_count;
  const { status, rows } = await download(b, "?form=waitlist");
  expect(status).toBe(200);
  const emails = rows.slice(1).map((row) => row[3]);
  expect(rows.length - 1).toBe(expected);
  expect(new Set(emails).size).toBe(emails.length);
  expect(emails).toContain("reader0@example.com");
  expect(emails).toContain("reader599@example.com");
  const ids = rows.slice(1).map((row) => row.at(-1)!);
  expect(new Set(ids).size).toBe(ids.length);
});

test("only members who may read submissions download them; another account's bucket is not found", async () => {
  const stranger = await signedIn(t.url, await t.user());
  expect((await stranger.get(csvPath())).status).toBe(404);
  const signedOut = await fetch(t.url + csvPath(), { redirect: "manual" });
  expect(signedOut.status).toBe(303);
  expect(signedOut.headers.get("location")).toContain("/signin");
});
