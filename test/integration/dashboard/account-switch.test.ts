// A user in more than one account picks, on the Account page, which one the browser session
// works in: the pages then show and change that account's buckets with that membership's role.
// Only accounts the user belongs to can be chosen; a user with one account sees no switcher.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { memberships } from "../../../src/db/schema";
import { addMember } from "../../../src/features/accounts/service";
import { formTokenOf, signedIn, unescapeHtml } from "../../helpers/browser";
import { createBucket } from "../../helpers/buckets";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t?.stop());

test("a member of two accounts switches the session between them from the Account page", async () => {
  const dev = await t.user();
  const team = await t.user();
  const stranger = await t.user();
  addMember(t.pier.deps, team.accountId, dev.userId, "member");
  await createBucket(t, dev, { title: "Own bucket" });
  await createBucket(t, team, { title: "Team bucket" });
  await createBucket(t, stranger, { title: "Stranger bucket" });

  const b = await signedIn(t.url, dev);
  const account = (await b.get("/dashboard/account")).text;
  expect(account).toContain('id="accounts-h"');
  expect(account).toContain(`value="${team.accountId}"`);
  expect(account).not.toContain(`value="${dev.accountId}"`); // the current one has no Switch button
  expect((await b.get("/dashboard/buckets")).text).toContain("Own bucket");
  expect((await b.get("/dashboard/buckets")).text).not.toContain("Team bucket");

  const switched = await b.post("/dashboard/account/switch", { csrf: formTokenOf(account), account_id: team.accountId });
  expect([switched.status, switched.location]).toEqual([303, "/dashboard/account?done=switched"]);
  const after = (await b.get(switched.location!)).text;
  expect(after).toContain("This browser now works in this account");
  expect(after).toContain(`value="${dev.accountId}"`);
  const buckets = (await b.get("/dashboard/buckets")).text;
  expect(buckets).toContain("Team bucket");
  expect(buckets).not.toContain("Own bucket");

  // An account the user is not in: refused, and the session stays where it was.
  const refused = await b.post("/dashboard/account/switch", { csrf: formTokenOf(after), account_id: stranger.accountId });
  expect(refused.status).toBe(404);
  expect(unescapeHtml(refused.text)).toContain("You are not a member of that account.");
  expect((await b.get("/dashboard/buckets")).text).toContain("Team bucket");
  expect((await b.get("/dashboard/buckets")).text).not.toContain("Stranger bucket");

  // And back.
  const back = await b.post("/dashboard/account/switch", { csrf: formTokenOf((await b.get("/dashboard/account")).text), account_id: dev.accountId });
  expect(back.status).toBe(303);
  expect((await b.get("/dashboard/buckets")).text).toContain("Own bucket");
});

test("a user with one account sees no switcher", async () => {
  const solo = await t.user();
  const b = await signedIn(t.url, solo);
  expect((await b.get("/dashboard/account")).text).not.toContain('id="accounts-h"');
});

test("a page opened before a switch refuses to act; the role is the membership's; a removed membership falls back", async () => {
  const dev = await t.user();
  const team = await t.user();
  addMember(t.pier.deps, team.accountId, dev.userId, "member");
  const b = await signedIn(t.url, dev);
  // A form from the own account's page, left open in another tab.
  const before = (await b.get("/dashboard/account")).text;
  expect(before).toContain('action="/dashboard/account/time-zone"');
  const beforeForm = formTokenOf(before);
  expect((await b.post("/dashboard/account/switch", { csrf: formTokenOf(before), account_id: team.accountId })).status).toBe(303);

  const stale = await b.post("/dashboard/account/time-zone", { csrf: beforeForm, time_zone: "Europe/Berlin" });
  expect(stale.status).toBe(403);
  expect(unescapeHtml(stale.text)).toContain("This page was opened while this browser worked in another account. Reload it and try again.");
  const zones = (await t.api("GET", "/api/v1/account", { key: team.key })).body.data.account.time_zone;
  expect(zones).toBe("UTC");

  // In the team account the user is a plain member: the time zone is the owners' and admins'.
  const asMember = (await b.get("/dashboard/account")).text;
  expect(asMember).not.toContain('action="/dashboard/account/time-zone"');
  expect(asMember).toContain("An account owner or admin can change it.");

  // Removed from the team: the session works in the user's own account again, not signed out.
  t.pier.deps.db.delete(memberships).where(eq(memberships.userId, dev.userId)).run();
  addMember(t.pier.deps, dev.accountId, dev.userId, "owner");
  const back = await b.get("/dashboard/account");
  expect(back.status).toBe(200);
  expect(back.text).toContain(dev.accountId);
});
