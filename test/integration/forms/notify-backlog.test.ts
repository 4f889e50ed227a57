// Owner notifications through an SMTP relay that refuses one owner's address: that bucket's
// submissions stay pending (tried again each run), and however many pile up there, every other
// bucket's owner is still told about theirs.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { formSubmissions } from "../../../src/db/schema";
import { notifyNewSubmissions } from "../../../src/features/forms";
import { seal } from "../../../src/features/forms/store";
import { newId } from "../../../src/core/ids";
import { filledTimer } from "../../helpers/forms";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { startRelay, type TestRelay } from "../../helpers/smtp-relay";
import { publishSite, siteFetch } from "../../helpers/sites";

let t: TestPier;
let relay: TestRelay;

beforeAll(async () => {
  // Refuses every recipient whose address says "refused".
  relay = await startRelay({ refuse: (to) => to.includes("refused") });
  t = await startTestPier({ smtpRelayUrl: relay.url, trustProxy: true });
});
afterAll(async () => {
  await t?.stop();
  await relay?.stop();
});

const FORMS = { bucket: { metadata: { publication_forms: { forms: [{ name: "contact" }] } } } };

test("a bucket whose owner's mail keeps failing, with 10,000 submissions waiting, does not hold back another owner's mail", async () => {
  const refused = await t.user({ email: `refused-${Date.now()}@example.com`, plan: "owner" });
  const busy = await publishSite(t, { user: refused, files: [{ path: "index.html", bytes: "<h1>Busy</h1>" }], title: "Busy" });
  // A month of submissions the owner was never told about (the relay refuses their address):
  // stored as the visitor endpoint stores them, in one transaction to keep the test short.
  const now = t.clock.now().toISOString();
  t.pier.deps.db.transaction((tx) => {
    for (let i = 0; i < 10_000; i++) {
      const id = newId("fsub");
      const value = {
        fields: { email: `v${i}@example.com`, message: "hello" },
        context: { document_path: "/", document_page: null, document_selection: null },
      };
      tx.insert(formSubmissions)
        .values({
          id,
          bucketId: busy.pub.bucketId,
          accountId: refused.accountId,
          formName: "contact",
          sealed: seal(t.pier.deps, id, value),
          createdAt: now,
          updatedAt: now,
        })
        .run();
    }
  });

  const quiet = await publishSite(t, { files: [{ path: "index.html", bytes: "<h1>Quiet</h1>" }], title: "Quiet" });
  expect((await t.api("PATCH", `/api/v1/buckets/${quiet.pub.bucketId}`, { key: quiet.user.key, body: FORMS })).status).toBe(200);
  const posted = await siteFetch(t, quiet.host, "/_pier/form/contact", {
    method: "POST",
    body: `email=a%40example.com&message=hi&_pier_started=${encodeURIComponent(filledTimer(t, quiet.pub.id, "contact"))}`,
    headers: { origin: `http://${quiet.host}`, "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": "192.0.2.7" },
  });
  expect(posted.status).toBe(200);

  expect(await notifyNewSubmissions(t.pier.deps)).toBe(1);
  expect(relay.messages.map((m) => m.to)).toEqual([[quiet.user.email]]);
  // The refused owner's submissions wait for the next run; the quiet one's are done.
  const pending = (bucketId: string) =>
    (
      t.pier.deps.sqlite.query("SELECT count(*) AS n FROM form_submissions WHERE bucket_id = ? AND notified_at IS NULL").get(bucketId) as {
        n: number;
      }
    ).n;
  expect(pending(busy.pub.bucketId)).toBe(10_000);
  expect(pending(quiet.pub.bucketId)).toBe(0);
  expect(await notifyNewSubmissions(t.pier.deps)).toBe(0);
});
