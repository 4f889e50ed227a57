// A publication's site-change event (which makes the site server drop its cached lookup) is
// announced only once the transaction that wrote the change has committed: a publish-session
// finalize that fails after accepting the publish must roll back without announcing anything.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { jobs, publications } from "../../../src/db/schema";
import { transaction } from "../../../src/db/tx";
import { actorFromApiKey } from "../../../src/features/accounts/keys";
import { commitPublish, preparePublish } from "../../../src/features/publish/accept-publish";
import { onSiteChange, type SiteChange } from "../../../src/features/publish/events";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { directUpload, newBucket, textFile } from "../../helpers/uploads";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t.stop());

describe("site-change events wait for the commit", () => {
  test("a rolled-back publish with new access settings announces nothing; the committed one announces once, after the commit", async () => {
    const deps = t.pier.deps;
    const u = await t.user({ plan: "pro" });
    const bucketId = await newBucket(t, u.key, "After Commit Site");
    expect((await directUpload(t, u.key, bucketId, textFile("index.html", "<h1>hi</h1>", "text/html; charset=utf-8"))).status).toBe(201);
    const actor = actorFromApiKey(deps, u.key)!;
    const changes: SiteChange[] = [];
    const stop = onSiteChange(deps, (c) => changes.push(c));
    try {
      const input = { access_mode: "password" as const, password: "correct horse battery" };
      const doomed = await preparePublish(deps, actor, bucketId, input, "main");
      expect(doomed.access).not.toBeNull();
      expect(() =>
        transaction(deps.db, (tx) => {
          commitPublish(deps, doomed, tx);
          throw new Error("a later step of the finalize failed");
        }),
      ).toThrow("a later step of the finalize failed");
      expect(changes).toEqual([]);
      expect(deps.db.select().from(publications).where(eq(publications.bucketId, bucketId)).all()).toEqual([]);
      expect(
        deps.db
          .select()
          .from(jobs)
          .all()
          .filter((j) => (j.payload as { publication_id?: string }).publication_id === doomed.publicationId),
      ).toEqual([]);

      const kept = await preparePublish(deps, actor, bucketId, input, "main");
      const row = transaction(deps.db, (tx) => {
        const r = commitPublish(deps, kept, tx);
        expect(changes).toEqual([]);
        return r;
      });
      expect(changes).toEqual([{ publicationId: row.id }]);
    } finally {
      stop();
    }
  });
});
