// Benchmark: git sync against a real git server (git http-backend on loopback) and a real
// `pier serve`: import of a 1,000-file repository into an empty bucket, then a one-file change
// each way (a push to the branch -> one bucket version; a bucket upload -> one pushed commit).
// Time from the sync request until the other side has the change, and bytes the git server sent
// and received for each step.
// Run: ./node_modules/.bin/bun run bench/git-sync.ts   (BENCH_FILES=n to change the count)
import { createHash } from "node:crypto";
import { startGitServer, workClone, git } from "../test/helpers/git-server";
import { api, startServer } from "./lib";

const FILES = Number(process.env.BENCH_FILES ?? 1000);
const gitServer = startGitServer();
const repoUrl = gitServer.createRepo("bench");
const other = await workClone(repoUrl);
let seed = 7;
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
const text = (n: number) => Array.from({ length: n }, () => "lorem ipsum dolor sit amet "[Math.floor(rnd() * 27)]).join("");
let totalBytes = 0;
for (let i = 0; i < FILES; i++) {
  const body = `<p>${i}</p>${text(2000 + Math.floor(rnd() * 4000))}`;
  other.write(`section-${i % 20}/sub-${i % 7}/page-${i}.html`, body);
  totalBytes += body.length;
}
await other.commitAndPush("1,000 files");

const s = await startServer(undefined, ["--git-allow-http", "on", "--git-allow-private-network", "on", "--git-poll-interval", "600"]);
const results: string[][] = [];
const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
try {
  const bucket = (await api(s, "POST", "/api/v1/buckets", { bucket: { title: "git bench" } })).data.bucket;
  const state = async () => (await api(s, "GET", `/api/v1/buckets/${bucket.id}/github_sync`)).data.github_sync;
  async function until(check: () => Promise<boolean>, what: string) {
    const deadline = Date.now() + 300_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await Bun.sleep(20);
    }
  }
  const step = async (name: string, run: () => Promise<void>) => {
    const before = { ...gitServer.traffic };
    const t0 = performance.now();
    await run();
    const ms = performance.now() - t0;
    results.push([name, `${ms.toFixed(0)} ms`, kb(gitServer.traffic.sent - before.sent), kb(gitServer.traffic.received - before.received)]);
  };

  await step(`import ${FILES} files (${(totalBytes / 1048576).toFixed(1)} MiB)`, async () => {
    await api(s, "POST", `/api/v1/buckets/${bucket.id}/github_sync`, { direction: "import", repository_url: repoUrl });
    await until(async () => (await state()).state === "in_sync", "the import");
  });
  const files = (await api(s, "GET", `/api/v1/buckets/${bucket.id}/files?limit=5`)).data;
  if (!files.files.length) throw new Error("import brought nothing");

  other.write("section-3/sub-3/page-3.html", "<p>changed in git</p>");
  await other.commitAndPush("one file");
  await step("repository -> bucket: one file", async () => {
    const last = (await state()).last_commit;
    await api(s, "POST", `/api/v1/buckets/${bucket.id}/github_sync/sync`, {});
    await until(async () => (await state()).last_commit !== last, "the pull");
  });

  const bytes = new TextEncoder().encode("<p>changed in the bucket</p>");
  const d = await api(s, "POST", "/api/v1/direct_uploads", {
    bucket_id: bucket.id,
    path: "section-4/sub-4/page-4.html",
    blob: {
      filename: "page-4.html",
      byte_size: bytes.length,
      checksum: createHash("md5").update(bytes).digest("base64"),
      content_type: "text/html",
      sha256: createHash("sha256").update(bytes).digest("hex"),
      purpose: "bucket_file",
    },
  });
  await fetch(d.data.upload.url, { method: "PUT", headers: d.data.upload.headers, body: bytes });
  await api(s, "POST", `/api/v1/buckets/${bucket.id}/files`, { signed_blob_id: d.data.signed_blob_id });
  await step("bucket -> repository: one file (sync now; automatic syncs wait 10 s of quiet first)", async () => {
    const head = await git(other.dir, "ls-remote", "origin", "main");
    await api(s, "POST", `/api/v1/buckets/${bucket.id}/github_sync/sync`, {});
    await until(async () => (await git(other.dir, "ls-remote", "origin", "main")) !== head, "the push");
  });
  await other.pull();
  if (other.read("section-4/sub-4/page-4.html") !== "<p>changed in the bucket</p>") throw new Error("push did not arrive");
} finally {
  await s.stop();
  other.cleanup();
  await gitServer.stop();
}
console.log(`git sync, ${FILES} files (Bun ${Bun.version})`);
console.log(["step", "time", "git server sent", "git server received"].join(" | "));
for (const r of results) console.log(r.join(" | "));
