// Crash matrix, second part (the first is crash-matrix.test.ts): the compiled binary SIGKILLed at
// random moments of a publish-session finalize, of a publish build and of a blob garbage
// collection sweep, then started again on the same data dir. After every restart: the bucket holds
// the old or the new files, never a mix; the site serves one whole deploy; an acknowledged publish
// ends ready (or failed, and a retry makes it ready); the collection never removed a blob that
// anything references and the orphans are collected after all; `pier admin check` finds nothing.
// Sizes are scaled down for the suite (docs/operations.md gives the full-size run).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { blobReferenceQueries } from "../../src/blobs/gc";
import { declared, putBytes, syncFiles, textFile, type LocalFile } from "../helpers/uploads";
import { CrashRig, waitFor } from "./crash-harness";

const RUNS = Number(process.env.PIER_CRASH_RUNS ?? 2);
/** A test's time limit, longer for the full-size runs. */
const LIMIT = (ms: number) => ms * Math.max(1, RUNS / 2) * (process.env.PIER_CRASH_SITE_FILES || process.env.PIER_CRASH_UPLOAD_MB ? 4 : 1);
const SITE_FILES = Number(process.env.PIER_CRASH_SITE_FILES ?? 80);
const GC_ORPHANS = Number(process.env.PIER_CRASH_GC_ORPHANS ?? 200);
const SLUG = "crash-final";
const rig = new CrashRig(["--bucket-delete-sync-limit", "20"]);
/** Where each kill landed (PIER_CRASH_TIMING=1 prints it): proof the random offsets hit the work. */
const landed = (what: string) => process.env.PIER_CRASH_TIMING && console.log(`kill landed: ${what}`);

beforeAll(() => rig.setUp("pier-crash2-"), 240_000);
afterAll(() => rig.tearDown());

/** The site's files at version v: an index and SITE_FILES pages, every one naming v. */
const siteFiles = (v: number): LocalFile[] => [
  textFile("index.html", `<h1>v${v}</h1>`, "text/html"),
  ...Array.from({ length: SITE_FILES }, (_, i) => textFile(`p${i}.html`, `<p>v${v} page ${i}</p>`, "text/html")),
];
const expectedListing = (v: number) =>
  siteFiles(v)
    .map((f) => `${f.path}:${declared(f).sha256}`)
    .sort();

let bucketId = "";
let publicationId = "";
// A finalize's and a build's durations without a kill (measured by the first publish): the kill
// offsets are drawn around them, so that on any machine they land before, in and after the work.
let finalizeMs = 250;
let buildMs = 50;
/** The version the last settled publish made live. */
let published = -1;

/** A publish session for version v with every byte uploaded; returns its id (not finalized). */
async function preparePublish(v: number): Promise<string> {
  const files = siteFiles(v);
  const s = await rig.api("POST", "/api/v1/publish_sessions", {
    body: { ...(bucketId ? { bucket_id: bucketId } : { bucket_title: "Finalize site", slug_suggestions: [SLUG] }), files: files.map(declared) },
  });
  if (s.status !== 201) throw new Error(`publish session: ${s.status} ${s.text}`);
  bucketId = s.body.data.bucket.id;
  const uploads = [...s.body.data.publish_session.uploads] as { path: string; upload: { url: string; headers: Record<string, string> } }[];
  const byPath = new Map(files.map((f) => [f.path, f]));
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let u = uploads.shift(); u; u = uploads.shift()) {
        const put = await putBytes({ url: rig.local(u.upload.url), headers: u.upload.headers }, byPath.get(u.path)!.bytes);
        if (put.status !== 200) throw new Error(`PUT ${u.path}: ${put.status} ${await put.text()}`);
      }
    }),
  );
  return s.body.data.publish_session.id;
}

const finalize = (session: string) => rig.api("POST", `/api/v1/publish_sessions/${session}/finalize`);

const sample = [0, Math.floor(SITE_FILES / 2), SITE_FILES - 1];
const liveVersion = () => rig.siteVersion(SLUG, sample);
const expectLive = (v: number) => rig.expectSiteVersion(SLUG, v, sample);

/** Wait until the build settles; a failed build is retried once and must then succeed. */
async function publishSettles(): Promise<void> {
  const state = async () => (await rig.api("GET", `/api/v1/publications/${publicationId}?include_manifest=false`)).body?.data?.publication?.publish_state;
  let s = await waitFor("the build to end", async () => {
    const st = await state();
    return st === "ready" || st === "failed" ? st : null;
  }).catch((e) => {
    const jobs = rig.sql<{ all: string }>(
      "SELECT json_group_array(json_object('kind', kind, 'status', status, 'run_at', run_at, 'error', last_error)) AS \"all\" FROM jobs WHERE kind LIKE 'publish.%'",
    );
    const pub = rig.sql<Record<string, string>>("SELECT status, publish_state, publish_error FROM publications WHERE id = ?", publicationId);
    throw new Error(`${e.message}: publication ${JSON.stringify(pub)}, jobs ${jobs?.all}`);
  });
  if (s === "failed") {
    const retry = await rig.api("POST", `/api/v1/buckets/${bucketId}/publication/retry`);
    expect(retry.status).toBe(202);
    s = await waitFor("the retried build", async () => {
      const st = await state();
      return st === "ready" || st === "failed" ? st : null;
    });
  }
  expect(s).toBe("ready");
}

/** Every blob the files, their versions and the deploys reference is in the store (declared uploads aside). */
function referencedBlobsPresent(): void {
  const sqlite = new Database(join(rig.dataDir, "pier.db"), { readonly: true });
  try {
    const missing: string[] = [];
    for (const q of blobReferenceQueries.filter((q) => !q.includes("upload_entries")))
      for (const { sha256 } of sqlite.query<{ sha256: string }, []>(q).all()) if (!existsSync(blobPath(sha256))) missing.push(sha256);
    expect(missing).toEqual([]);
  } finally {
    sqlite.close();
  }
}

const blobPath = (sha: string) => join(rig.dataDir, "blobs", "sha256", sha.slice(0, 2), sha.slice(2, 4), sha);

describe("SIGKILL at random moments of publishing and collecting, then restart", () => {
  test(
    `a publish-session finalize of ${SITE_FILES + 1} files: the old or the new version, whole`,
    async () => {
      const prepared = await preparePublish(0);
      const t0 = Date.now();
      const first = await finalize(prepared);
      expect(first.status).toBe(202);
      const t1 = Date.now();
      publicationId = first.body.data.publication.id;
      await publishSettles();
      published = 0;
      finalizeMs = t1 - t0;
      buildMs = Date.now() - t1;
      landed(`(no kill) finalize ${finalizeMs} ms, build ${buildMs} ms`);
      await expectLive(0);
      for (let n = 1; n <= RUNS; n++) {
        const session = await preparePublish(n);
        await rig.killDuring(
          () => finalize(session),
          finalizeMs * 1.3,
          () =>
            landed(
              rig.sql<{ status: string }>("SELECT status FROM publish_sessions WHERE id = ?", session)!.status === "finalized"
                ? "after the finalize"
                : "before its commit",
            ),
        );
        const after = await rig.listing(bucketId);
        const committed = JSON.stringify(after) === JSON.stringify(expectedListing(n));
        if (!committed) expect(after).toEqual(expectedListing(n - 1));
        // Until the build ends the old deploy serves, whole; then the new one.
        expect([n - 1, n]).toContain(await liveVersion());
        await rig.quickCheck();
        if (!committed) expect((await finalize(session)).status).toBe(202);
        else expect((await finalize(session)).body?.error?.code).toBe("PUBLISH_SESSION_NOT_PENDING");
        await publishSettles();
        await expectLive(n);
        published = n;
      }
      rig.adminCheck();
    },
    LIMIT(180_000),
  );

  test(
    `a build of ${SITE_FILES + 1} files: the publication ends ready (or failed, and a retry makes it ready), never half`,
    async () => {
      expect(publicationId).not.toBe("");
      const state = () => rig.sql<{ s: string }>("SELECT publish_state AS s FROM publications WHERE id = ?", publicationId)!.s;
      for (let n = RUNS + 1; n <= 2 * RUNS; n++) {
        const session = await preparePublish(n);
        const accepted = finalize(session);
        accepted.catch(() => null);
        // The build starts as the finalize commits: from then on, kill within about a build's length.
        const deadline = Date.now() + 30_000;
        while (state() !== "processing" && (await Promise.race([accepted.then(() => false), Bun.sleep(2).then(() => true)])) && Date.now() < deadline);
        await rig.killDuring(
          async () => {},
          Math.max(buildMs, 100),
          () => landed(`build ${state()}`),
        );
        // The build had started, so the finalize committed (its answer may have been cut off: the
        // connection reset, or a serving worker's 503 for a primary that died before answering):
        // the bucket holds the new files whatever the build did.
        const answer = await accepted.catch(() => null);
        if (answer?.status === 503) expect(answer.text).toContain("Pier is restarting");
        else if (answer) expect(answer.status).toBe(202);
        expect(await rig.listing(bucketId)).toEqual(expectedListing(n));
        expect([n - 1, n]).toContain(await liveVersion());
        await publishSettles();
        await expectLive(n);
        published = n;
        await rig.quickCheck();
      }
      rig.adminCheck();
    },
    LIMIT(180_000),
  );

  test(
    `blob garbage collection (${GC_ORPHANS} orphans): no referenced blob is lost, the orphans go`,
    async () => {
      const kept = await rig.newBucket("Kept");
      const keptFiles = Array.from({ length: 30 }, (_, i) => textFile(`k${i}.txt`, `kept ${i}`));
      expect((await syncFiles(rig.client(), rig.key, kept, keptFiles)).finalize.status).toBe(200);
      for (let n = 0; n < RUNS; n++) {
        // Orphans: the blobs of a deleted bucket (nothing else holds the same bytes).
        const doomed = await rig.newBucket(`Doomed ${n}`);
        const orphans = Array.from({ length: GC_ORPHANS }, (_, i) => textFile(`o${i}.txt`, `orphan ${n} ${i}`));
        for (let i = 0; i < orphans.length; i += 500)
          expect((await syncFiles(rig.client(), rig.key, doomed, orphans.slice(i, i + 500))).finalize.status).toBe(200);
        const b = await rig.api("GET", `/api/v1/buckets/${doomed}`);
        const confirmation = JSON.stringify(b.body).match(/"delete":\{[^}]*"confirmation":"([^"]+)"/)![1]!;
        expect([200, 202, 204]).toContain((await rig.api("DELETE", `/api/v1/buckets/${doomed}`, { body: { confirmation } })).status);
        await waitFor("the bucket delete", async () => (await rig.api("GET", `/api/v1/buckets/${doomed}`)).status === 404);
        // Every stored blob past the grace period, the referenced ones too: only the mark keeps them.
        const old = new Date(Date.now() - 3 * 24 * 3600_000);
        ageBlobs(join(rig.dataDir, "blobs", "sha256"), old);
        // The periodic collection's next run is due now; kill while it sweeps.
        const db = new Database(join(rig.dataDir, "pier.db"));
        db.exec("PRAGMA busy_timeout = 10000");
        db.query("UPDATE jobs SET run_at = ? WHERE kind = 'blobs.gc' AND status = 'queued'").run(new Date(Date.now() - 1000).toISOString());
        const t0 = Date.now();
        await waitFor(
          "the collection to start",
          async () =>
            db
              .query<{ n: number }, [string]>("SELECT count(*) AS n FROM jobs WHERE kind = 'blobs.gc' AND status <> 'queued' AND updated_at >= ?")
              .get(new Date(t0 - 1000).toISOString())!.n > 0,
          30_000,
        ).catch(() => null);
        db.close();
        await rig.killDuring(
          async () => {},
          20 + GC_ORPHANS / 4,
          () => landed(`gc with ${orphans.filter((f) => existsSync(blobPath(declared(f).sha256))).length} of ${orphans.length} orphans left`),
        );
        referencedBlobsPresent();
        for (const f of keptFiles) expect(new TextDecoder().decode((await rig.download(kept, f.path))!)).toBe(new TextDecoder().decode(f.bytes));
        if (published >= 0) await expectLive(published);
        await rig.quickCheck();
        // The killed run is marked failed at the restart and the next one runs at once.
        await waitFor("the orphans to be collected", async () => orphans.every((f) => !existsSync(blobPath(declared(f).sha256))));
        referencedBlobsPresent();
      }
      rig.adminCheck();
    },
    LIMIT(180_000),
  );
});

function ageBlobs(dir: string, when: Date): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) ageBlobs(p, when);
    else utimesSync(p, when, when);
  }
}
