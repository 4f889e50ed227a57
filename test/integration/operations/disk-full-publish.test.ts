// Publishing on a full disk: the data dir lives on a 24 MiB tmpfs that the test fills to the
// last byte (the pattern of test/integration/monitoring/disk-full.test.ts). A publish session's
// uploads answer 507 STORAGE_FULL; its finalize either answers 507 with the bucket untouched or
// is accepted and its build waits (or fails with a clear error); in every case the site keeps serving the
// previous deploy whole, nothing is half-written, and the same publish succeeds once space is
// freed. Mounting needs root: elsewhere the file is skipped with a message saying so.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { checkDataDir } from "../../../src/features/operations";
import { sweepStuckPublications } from "../../../src/features/publish/lifecycle";
import { mountSmallDisk } from "../../helpers/small-disk";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { siteFetch } from "../../helpers/sites";
import { declared, putBytes, textFile, type LocalFile } from "../../helpers/uploads";

const disk = mountSmallDisk(24, "test/integration/operations/disk-full-publish.test.ts", "publishing on a full disk");
const { mounted, mountPoint } = disk;
const fillDisk = disk.fill;
const freeSpace = disk.free;
const SLUG = "full-disk-site";
let t: TestPier;
let u: TestUser;

/** Version v of the site: an index and 30 pages of ~8 KB (compressible: the build stores gzip/br variants). */
const siteFiles = (v: number): LocalFile[] => [
  textFile("index.html", `<h1>v${v}</h1>`, "text/html"),
  ...Array.from({ length: 30 }, (_, i) => textFile(`p${i}.html`, `<p>v${v} page ${i}</p>${`<div>${v}-${i} filler text</div>`.repeat(300)}`, "text/html")),
];

describe.skipIf(!mounted)("publishing on a full disk", () => {
  beforeAll(async () => {
    const dataDir = join(mountPoint, "data");
    mkdirSync(dataDir);
    t = await startTestPier({ dataDir, uploadRateLimitPerMinute: 1000 });
    u = await t.user();
  });
  afterAll(async () => {
    try {
      await t?.stop();
    } finally {
      disk.unmount();
    }
  });

  const tempFiles = () => {
    const d = join(t.dataDir, "blobs", "tmp");
    return existsSync(d) ? readdirSync(d) : [];
  };
  let bucketId = "";

  async function session(v: number) {
    const files = siteFiles(v);
    const s = await t.api("POST", "/api/v1/publish_sessions", {
      key: u.key,
      body: { ...(bucketId ? { bucket_id: bucketId } : { bucket_title: "Full disk site", slug_suggestions: [SLUG] }), files: files.map(declared) },
    });
    expect(s.status).toBe(201);
    bucketId = s.body.data.bucket.id;
    return {
      id: s.body.data.publish_session.id as string,
      uploads: s.body.data.publish_session.uploads as { path: string; upload: { url: string; headers: Record<string, string> } }[],
      files,
    };
  }
  async function upload(s: Awaited<ReturnType<typeof session>>): Promise<number[]> {
    const statuses: number[] = [];
    for (const up of s.uploads) statuses.push((await putBytes(up.upload, s.files.find((f) => f.path === up.path)!.bytes)).status);
    return statuses;
  }
  const finalize = (id: string) => t.api("POST", `/api/v1/publish_sessions/${id}/finalize`, { key: u.key });
  const page = async (path: string) => {
    const res = await siteFetch(t, `${SLUG}.${t.pier.deps.urls.sitesDomain}`, path);
    return res.status === 200 ? res.text() : `status ${res.status}`;
  };
  /** The version the site serves, checked whole (index and pages agree). */
  async function live(): Promise<number> {
    const m = /^<h1>v(\d+)<\/h1>$/.exec(await page("/"));
    if (!m) throw new Error(`the site answers ${await page("/")}`);
    const v = Number(m[1]);
    for (const i of [0, 29]) expect(await page(`/p${i}`)).toStartWith(`<p>v${v} page ${i}</p>`);
    return v;
  }
  const listing = async () =>
    ((await t.api("GET", `/api/v1/buckets/${bucketId}/files?limit=1000`, { key: u.key })).body.data.files as { path: string; sha256: string }[])
      .map((f) => `${f.path}:${f.sha256}`)
      .sort();
  const expected = (v: number) =>
    siteFiles(v)
      .map((f) => `${f.path}:${declared(f).sha256}`)
      .sort();
  const publication = async (id: string) => (await t.api("GET", `/api/v1/publications/${id}?include_manifest=false`, { key: u.key })).body.data.publication;

  /** Run the queued build; a build the full disk failed is retried, one it cut off is swept back. */
  async function settle(pubId: string): Promise<void> {
    for (let n = 0; n < 3 && (await publication(pubId)).publish_state !== "ready"; n++) {
      const p = await publication(pubId);
      if (p.publish_state === "failed") expect((await t.api("POST", `/api/v1/buckets/${bucketId}/publication/retry`, { key: u.key })).status).toBe(202);
      else if (p.publish_state === "processing") sweepStuckPublications(t.pier.deps);
      await t.pier.runner.drain();
    }
    expect((await publication(pubId)).publish_state).toBe("ready");
  }

  test("uploads answer 507, finalize is refused or its build fails clearly, the old deploy keeps serving, and the publish succeeds once space is freed", async () => {
    const first = await session(0);
    expect((await upload(first)).every((s) => s === 200)).toBe(true);
    const accepted = await finalize(first.id);
    expect(accepted.status).toBe(202);
    const pubId = accepted.body.data.publication.id;
    await t.pier.runner.drain();
    expect((await publication(pubId)).publish_state).toBe("ready");
    expect(await live()).toBe(0);

    // The uploads of the next version meet a full disk.
    const blocked = await session(1);
    fillDisk();
    let finalizeAnswer: { status: number; code?: string } | null = null;
    try {
      const statuses = await upload(blocked);
      expect(statuses.length).toBeGreaterThan(0);
      expect(statuses.every((s) => s === 507)).toBe(true);
      const put = await putBytes(blocked.uploads[0]!.upload, blocked.files.find((f) => f.path === blocked.uploads[0]!.path)!.bytes);
      expect(((await put.json()) as { error: { code: string } }).error.code).toBe("STORAGE_FULL");
      expect(tempFiles()).toEqual([]);
      expect(await live()).toBe(0);
    } finally {
      freeSpace();
    }

    // Bytes stored, then the disk fills before the finalize (and its build).
    expect((await upload(blocked)).every((s) => s === 200)).toBe(true);
    fillDisk();
    try {
      const r = await finalize(blocked.id);
      finalizeAnswer = { status: r.status, code: r.body?.error?.code };
      if (r.status === 202) {
        // SQLite still had room in its WAL for the finalize: the build meets the full disk.
        await t.pier.runner.drain().catch(() => 0);
        const p = await publication(pubId);
        expect(["failed", "ready", "processing", "queued"]).toContain(p.publish_state);
        if (p.publish_state === "failed") expect(p.publish_error).toMatch(/full|space|ENOSPC/i);
      } else {
        expect(r.status).toBe(507);
        expect(r.body.error.code).toBe("STORAGE_FULL");
        expect(await listing()).toEqual(expected(0));
      }
      // Whatever happened, the site serves one whole deploy, and no temp file is left.
      expect([0, 1]).toContain(await live());
      expect(tempFiles()).toEqual([]);
    } finally {
      freeSpace();
    }

    // Space is back: the same publish goes through (finalize again, or retry the failed build).
    if (finalizeAnswer.status !== 202) expect((await finalize(blocked.id)).status).toBe(202);
    await settle(pubId);
    expect(await listing()).toEqual(expected(1));
    expect(await live()).toBe(1);

    // A finalize accepted with space left, then the disk fills before its build runs.
    const late = await session(2);
    expect((await upload(late)).every((s) => s === 200)).toBe(true);
    expect((await finalize(late.id)).status).toBe(202);
    fillDisk();
    try {
      await t.pier.runner.drain().catch(() => 0);
      const p = await publication(pubId);
      // The job cannot even be claimed on a full disk (or its build fails and says why): the
      // previous deploy keeps serving.
      expect(["queued", "failed"]).toContain(p.publish_state);
      if (p.publish_state === "failed") expect(p.publish_error).toMatch(/full|space|ENOSPC/i);
      expect(await live()).toBe(1);
      expect(tempFiles()).toEqual([]);
    } finally {
      freeSpace();
    }
    await settle(pubId);
    expect(await listing()).toEqual(expected(2));
    expect(await live()).toBe(2);
    const report = await checkDataDir({ sqlite: t.pier.deps.sqlite, blobs: t.pier.deps.blobs, clock: t.pier.deps.clock, dataDir: t.dataDir });
    expect(report.findings).toEqual([]);
  }, 60_000);
});
