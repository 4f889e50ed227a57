// The outbox (mail kept while no SMTP relay is set) forgets messages after 14 days: they say who
// asked for a code to which site, and kept for ever they would become a visitor log.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { listOutbox, mailerFor } from "../../../src/features/mail";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t.stop());

test("the hourly prune forgets outbox mail older than 14 days and keeps the rest", async () => {
  const send = (subject: string) => mailerFor(t.pier.deps).send({ to: "visitor@example.com", subject, text: "code 123456", kind: "site-email-code" });
  await send("old code");
  t.clock.advance(10 * 24 * 3600_000);
  await send("ten days younger");
  t.clock.advance(4 * 24 * 3600_000 + 60_000); // the first is now 14 days and a minute old
  await send("fresh");
  t.pier.deps.jobs.enqueue("mail.outbox_prune");
  await t.pier.runner.drain();
  expect(listOutbox(t.pier.deps).map((m) => m.subject)).toEqual(["fresh", "ten days younger"]);
});
