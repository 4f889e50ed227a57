// A slug a bucket lets go (a rename, the bucket deleted) stays its account's for SLUG_HOLD_DAYS
// (D316): another account can neither rename onto it nor publish under it, so a link to the old
// address never opens a stranger's site; the account itself takes it back whenever it likes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SLUG_HOLD_DAYS, SLUG_HOLDS_PER_ACCOUNT } from "../../../src/features/publish";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { siteFetch } from "../../helpers/sites";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t.stop());

const DAY = 86_400_000;
const host = (slug: string) => `${slug}.${t.pier.deps.urls.sitesDomain}`;
const drain = () => t.pier.runner.drain();

async function site(u: TestUser, title: string, slug: string): Promise<{ bucketId: string; slug: string }> {
  const bucketId = await newBucket(t, u.key, title);
  const up = await directUpload(t, u.key, bucketId, textFile("index.html", `<p>${title}</p>`, "text/html; charset=utf-8"));
  expect(up.status).toBeLessThan(300);
  const r = await t.api("POST", `/api/v1/buckets/${bucketId}/publication`, { key: u.key, body: { slug_suggestions: [slug] } });
  expect(r.status).toBe(202);
  await drain();
  return { bucketId, slug: r.body.data.publication.public_slug };
}
const rename = (u: TestUser, bucketId: string, slug: string) =>
  t.api("PATCH", `/api/v1/buckets/${bucketId}/custom_domains/public_slug`, { key: u.key, body: { public_slug: slug } });
const holds = () => (t.pier.deps.sqlite.query("SELECT slug FROM slug_holds ORDER BY slug").all() as { slug: string }[]).map((r) => r.slug);

describe("slug holds", () => {
  test("a renamed site's old slug is refused to other accounts, served by nobody, and taken back by its owner", async () => {
    const owner = await t.user({ plan: "pro" });
    const stranger = await t.user({ plan: "pro" });
    const original = await site(owner, "Harbor Notes", "harbor-notes");
    expect(original.slug).toBe("harbor-notes");
    expect((await rename(owner, original.bucketId, "harbor-notes-moved")).status).toBe(200);
    expect((await siteFetch(t, host("harbor-notes"), "/")).status).toBe(404);

    const theirs = await site(stranger, "Look Alike", "look-alike-notes");
    const grab = await rename(stranger, theirs.bucketId, "harbor-notes");
    expect([grab.status, grab.body.error.code]).toEqual([409, "SLUG_TAKEN"]);
    // A publish asking for it gets the next free name, as for any taken slug.
    expect((await site(stranger, "Copycat", "harbor-notes")).slug).toBe("harbor-notes-2");
    expect((await siteFetch(t, host("harbor-notes"), "/")).status).toBe(404);

    // The owner's other bucket may take it, and so may the renamed one, back.
    const back = await rename(owner, original.bucketId, "harbor-notes");
    expect(back.status).toBe(200);
    expect(await (await siteFetch(t, host("harbor-notes"), "/")).text()).toBe("<p>Harbor Notes</p>");
    // Moving back held the name it left: the stranger cannot take that one either.
    expect((await rename(stranger, theirs.bucketId, "harbor-notes-moved")).status).toBe(409);
  });

  test("a deleted bucket's slug is held too", async () => {
    const owner = await t.user({ plan: "pro" });
    const stranger = await t.user({ plan: "pro" });
    const gone = await site(owner, "Lantern Pages", "lantern-pages");
    expect((await t.api("DELETE", `/api/v1/buckets/${gone.bucketId}/publication`, { key: owner.key })).status).toBe(202);
    await drain();
    const del = await t.api("DELETE", `/api/v1/buckets/${gone.bucketId}`, { key: owner.key, body: { confirmation: `delete ${gone.bucketId}` } });
    expect(del.status).toBeLessThan(300);
    await drain();
    expect((await t.api("GET", `/api/v1/buckets/${gone.bucketId}`, { key: owner.key })).status).toBe(404);
    expect(holds()).toContain("lantern-pages");
    expect((await site(stranger, "Lantern Clone", "lantern-pages")).slug).toBe("lantern-pages-2");
    expect((await site(owner, "Lantern Again", "lantern-pages")).slug).toBe("lantern-pages");
  });

  test(`no squatting: a name nothing was built under is not held, and an account keeps its newest ${SLUG_HOLDS_PER_ACCOUNT} holds`, async () => {
    const owner = await t.user({ plan: "pro" });
    const stranger = await t.user({ plan: "pro" });
    const theirs = await site(stranger, "Stranger Site", "stranger-site-1");

    // A first publish whose build fails: no site was ever served under the name.
    const empty = await newBucket(t, owner.key, "Never Built");
    const up = await directUpload(t, owner.key, empty, textFile("notes.txt", "no page", "text/plain"));
    expect(up.status).toBeLessThan(300);
    const failed = await t.api("POST", `/api/v1/buckets/${empty}/publication`, {
      key: owner.key,
      body: { slug_suggestions: ["never-built-name"], publication_root_directory: "missing" },
    });
    expect(failed.body.data.publication.public_slug).toBe("never-built-name");
    await drain();
    expect((await t.api("GET", `/api/v1/publications/${failed.body.data.publication.id}`, { key: owner.key })).body.data.publication.publish_state).toBe(
      "failed",
    );
    expect((await rename(owner, empty, "never-built-else")).status).toBe(200);
    expect((await rename(stranger, theirs.bucketId, "never-built-name")).status).toBe(200);

    // Renaming in a loop: the oldest holds let go past the cap.
    const looping = await site(owner, "Name Hopper", "name-hopper-0");
    for (let i = 1; i <= SLUG_HOLDS_PER_ACCOUNT + 1; i++) expect((await rename(owner, looping.bucketId, `name-hopper-${i}`)).status).toBe(200);
    const mine = (
      t.pier.deps.sqlite.query("SELECT slug FROM slug_holds WHERE account_id = (SELECT account_id FROM buckets WHERE id = ?)").all(looping.bucketId) as {
        slug: string;
      }[]
    ).map((r) => r.slug);
    expect(mine).toHaveLength(SLUG_HOLDS_PER_ACCOUNT);
    expect(mine).not.toContain("name-hopper-0");
    expect(mine).toContain(`name-hopper-${SLUG_HOLDS_PER_ACCOUNT}`);
    expect((await rename(stranger, theirs.bucketId, "name-hopper-0")).status).toBe(200);
    expect((await rename(stranger, theirs.bucketId, "name-hopper-1")).status).toBe(409);
  });

  test(`the hold ends after ${SLUG_HOLD_DAYS} days, and the sweep forgets it`, async () => {
    const owner = await t.user({ plan: "pro" });
    const stranger = await t.user({ plan: "pro" });
    const quay = await site(owner, "Quay Journal", "quay-journal");
    expect((await rename(owner, quay.bucketId, "quay-journal-new")).status).toBe(200);
    const theirs = await site(stranger, "Other Journal", "other-journal");

    t.clock.advance((SLUG_HOLD_DAYS - 1) * DAY);
    expect((await rename(stranger, theirs.bucketId, "quay-journal")).status).toBe(409);
    t.clock.advance(2 * DAY);
    t.pier.deps.jobs.enqueue("publish.sweep");
    await drain();
    expect(holds()).not.toContain("quay-journal");
    const taken = await rename(stranger, theirs.bucketId, "quay-journal");
    expect(taken.status).toBe(200);
    expect(await (await siteFetch(t, host("quay-journal"), "/")).text()).toBe("<p>Other Journal</p>");
  });
});
