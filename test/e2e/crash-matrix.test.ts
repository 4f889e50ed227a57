// Crash matrix: the compiled binary is SIGKILLed at random moments of a large upload, a folder
// publish (publish session finalize + build), a background bucket delete and a version restore,
// then started again on the same data dir. After every restart: each acknowledged write is there
// and readable, nothing is half-applied (a bucket version is all or nothing, a site serves one
// whole deploy), background work resumes and finishes, and `pier admin check` finds nothing.
// Sizes are scaled down for the suite (docs/operations.md gives the full-size run).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { declared, putBytes, syncFiles, textFile, type LocalFile } from "../helpers/uploads";
import { CrashRig, waitFor } from "./crash-harness";

const RUNS = Number(process.env.PIER_CRASH_RUNS ?? 2);
/** A test's time limit, longer for the full-size runs. */
const LIMIT = (ms: number) => ms * Math.max(1, RUNS / 2) * (process.env.PIER_CRASH_SITE_FILES || process.env.PIER_CRASH_UPLOAD_MB ? 4 : 1);
const SITE_FILES = Number(process.env.PIER_CRASH_SITE_FILES ?? 150);
const UPLOAD_MB = Number(process.env.PIER_CRASH_UPLOAD_MB ?? 16);
const rig = new CrashRig(["--bucket-delete-sync-limit", "20"]);
const api = rig.api.bind(rig);
const client = () => rig.client();
const listing = rig.listing.bind(rig);
const download = rig.download.bind(rig);
const newBucket = rig.newBucket.bind(rig);
const killDuring = rig.killDuring.bind(rig);
const quickCheck = rig.quickCheck.bind(rig);
const adminCheck = rig.adminCheck.bind(rig);

beforeAll(() => rig.setUp("pier-crash-"), 240_000);
afterAll(() => rig.tearDown());

describe("SIGKILL at random moments, then restart", () => {
  test(
    `a large upload (${UPLOAD_MB} MB): never a partial file; the acknowledged one stays; the retry succeeds`,
    async () => {
      const bucket = await newBucket("Large uploads");
      const safe = textFile("acknowledged.txt", "written before the crash");
      expect((await syncFiles(client(), rig.key, bucket, [safe])).finalize.status).toBe(200);
      const big: LocalFile = { path: "big.bin", bytes: new Uint8Array(UPLOAD_MB << 20), contentType: "application/octet-stream" };
      for (let i = 0; i < big.bytes.length; i += 4096) big.bytes[i] = (i / 4096) & 0xff;
      for (let n = 0; n < RUNS; n++) {
        // New bytes each round: a PUT that finished before the kill is stored, and would be reused.
        big.bytes[1] = n + 1;
        const d = await api("POST", "/api/v1/direct_uploads", {
          body: { bucket_id: bucket, path: big.path, blob: { ...declared(big), filename: "big.bin", byte_size: big.bytes.length, purpose: "bucket_file" } },
        });
        expect(d.status).toBe(201);
        const upload = d.body.data.upload;
        upload.url = upload.url.replace(/^http:\/\/localhost:\d+/, rig.url);
        await killDuring(() => putBytes(upload, big.bytes), 400);
        expect(await listing(bucket)).toEqual([`acknowledged.txt:${declared(safe).sha256}`]);
        expect(new TextDecoder().decode((await download(bucket, "acknowledged.txt"))!)).toBe("written before the crash");
        await quickCheck();
      }
      expect((await syncFiles(client(), rig.key, bucket, [big])).finalize.status).toBe(200);
      const back = await download(bucket, "big.bin");
      expect(back?.length).toBe(big.bytes.length);
      expect(Buffer.from(back!).equals(Buffer.from(big.bytes))).toBe(true);
      adminCheck();
    },
    LIMIT(120_000),
  );

  test(
    `a folder publish of ${SITE_FILES} files: the site serves one whole deploy, the next publish finishes`,
    async () => {
      const site = join(rig.work, "site");
      const write = (v: number) => {
        rmSync(site, { recursive: true, force: true });
        mkdirSync(site, { recursive: true });
        writeFileSync(join(site, "index.html"), `<h1>v${v}</h1>`);
        for (let i = 0; i < SITE_FILES; i++) writeFileSync(join(site, `p${i}.html`), `<p>v${v} page ${i}</p>`);
      };
      const publish = () => {
        const p = Bun.spawn([rig.bin, "publish", site, "--slug", "crash-site", "--url", rig.url.replace("127.0.0.1", "localhost"), "--key", rig.key], {
          cwd: rig.work,
          env: rig.env(),
          stdout: "pipe",
          stderr: "pipe",
        });
        return p.exited;
      };
      write(0);
      expect(await publish()).toBe(0);
      const sample = [0, Math.floor(SITE_FILES / 2), SITE_FILES - 1];
      await rig.expectSiteVersion("crash-site", 0, sample);
      let live = 0;
      for (let n = 1; n <= RUNS; n++) {
        write(n);
        await killDuring(publish, 1500);
        // Old or new, whole: the index and a sample of pages agree on one version.
        expect([live, n]).toContain(await rig.siteVersion("crash-site", sample));
        await quickCheck();
        expect(await publish()).toBe(0);
        await rig.expectSiteVersion("crash-site", n, sample);
        live = n;
      }
      adminCheck();
    },
    LIMIT(180_000),
  );

  test(
    "a background bucket delete resumes after the crash and finishes",
    async () => {
      for (let n = 0; n < RUNS; n++) {
        const bucket = await newBucket(`Doomed ${n}`);
        const files = Array.from({ length: 60 }, (_, i) => textFile(`f${i}.txt`, `doomed ${n} ${i}`));
        expect((await syncFiles(client(), rig.key, bucket, files)).finalize.status).toBe(200);
        const b = await api("GET", `/api/v1/buckets/${bucket}`);
        const confirmation = JSON.stringify(b.body).match(/"delete":\{[^}]*"confirmation":"([^"]+)"/)![1]!;
        let answered = 0;
        await killDuring(async () => {
          answered = (await api("DELETE", `/api/v1/buckets/${bucket}`, { body: { confirmation } })).status;
        }, 150);
        if (answered !== 202) {
          // Not acknowledged: the delete committed just before the kill (a 409 says it is running)
          // or not at all (the bucket is intact and can be deleted now).
          const again = await api("DELETE", `/api/v1/buckets/${bucket}`, { body: { confirmation } });
          if (![202, 404, 409].includes(again.status)) throw new Error(`second delete: ${again.status} ${again.text}`);
        }
        // The delete job, queued in the same transaction as the acknowledgement, finishes after the restart.
        await waitFor("the background delete", async () => (await api("GET", `/api/v1/buckets/${bucket}`)).status === 404);
        await quickCheck();
      }
    },
    LIMIT(120_000),
  );

  test(
    "a version restore is all or nothing",
    async () => {
      const bucket = await newBucket("Restorable");
      const a = Array.from({ length: 80 }, (_, i) => textFile(`doc${i}.txt`, `version A ${i}`));
      const b = [
        ...Array.from({ length: 80 }, (_, i) => textFile(`doc${i}.txt`, `version B ${i}`)),
        ...Array.from({ length: 20 }, (_, i) => textFile(`extra${i}.txt`, `B only ${i}`)),
      ];
      expect((await syncFiles(client(), rig.key, bucket, a)).finalize.status).toBe(200);
      const stateA = await listing(bucket);
      const versionA = (await api("GET", `/api/v1/buckets/${bucket}/versions`)).body.data.versions[0].id;
      expect((await syncFiles(client(), rig.key, bucket, b)).finalize.status).toBe(200);
      const stateB = await listing(bucket);
      for (let n = 0; n < RUNS; n++) {
        const before = await listing(bucket);
        await killDuring(() => api("POST", `/api/v1/buckets/${bucket}/versions/restore`, { body: { version_id: versionA } }), 60);
        const after = await listing(bucket);
        // Either the restore committed whole (A's files) or not at all.
        expect([JSON.stringify(before), JSON.stringify(stateA)]).toContain(JSON.stringify(after));
        await quickCheck();
        // Back to B for the next round.
        expect((await syncFiles(client(), rig.key, bucket, b, { deleteMissing: true })).finalize.status).toBe(200);
        expect(await listing(bucket)).toEqual(stateB);
      }
    },
    LIMIT(120_000),
  );
});
