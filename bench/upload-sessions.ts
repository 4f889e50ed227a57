// Upload sessions at scale: a session with --pending declared (and uploaded) files, then what one
// more declare and the first finalize calls cost, in wall time and in the longest stall of the
// server's event loop (a 5 ms timer in the same process: while it is late, every other request
// waits). The pending entries are cloned from one real declared and PUT file, straight into the
// database, so the figure is the server's and not the seeding's.
// Run: ./node_modules/.bin/bun bench/upload-sessions.ts [--pending 20000,200000] [--finalizes 3]
import { startTestPier } from "../test/helpers/pier";
import { declared, newBucket, putBytes, textFile } from "../test/helpers/uploads";

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : process.argv[i + 1]!;
};
const SIZES = arg("pending", "20000,200000").split(",").map(Number);
const FINALIZES = Number(arg("finalizes", "3"));

const t = await startTestPier();
let maxLag = 0;
let last = performance.now();
const timer = setInterval(() => {
  const now = performance.now();
  maxLag = Math.max(maxLag, now - last - 5);
  last = now;
}, 5);
async function measure(label: string, call: () => Promise<{ status: number; body: any }>) {
  maxLag = 0;
  last = performance.now();
  const t0 = performance.now();
  const r = await call();
  const ms = performance.now() - t0;
  console.log(`${label.padEnd(34)} ${String(r.status).padEnd(4)} ${ms.toFixed(0).padStart(7)} ms   stall ${maxLag.toFixed(0).padStart(6)} ms`);
  return r;
}

try {
  const u = await t.user();
  for (const n of SIZES) {
    const bucket = await newBucket(t, u.key);
    const base = `/api/v1/buckets/${bucket}/upload_sessions`;
    const s = await t.api("POST", base, { key: u.key, body: { delete_missing: false, expected_file_count: 0 } });
    const sid = s.body.data.upload_session.id;
    const f = textFile("seed.txt", `seed ${n}`);
    const d = await t.api("POST", `${base}/${sid}/uploads`, { key: u.key, body: { files: [declared(f)] } });
    await putBytes(d.body.data.uploads[0].upload, f.bytes);
    const db = t.pier.deps.sqlite;
    const seed = db.query("select * from upload_entries where session_id = ?").get(sid) as Record<string, string | number>;
    const ins = db.prepare(
      "insert into upload_entries (id, session_id, bucket_id, account_id, credential_id, path, sha256, size, md5, content_type, status, created_at, expires_at, received_at) values (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    );
    db.transaction(() => {
      for (let i = 0; i < n; i++) {
        ins.run(
          `upl_b${n}x${i}`,
          sid,
          seed.bucket_id!,
          seed.account_id!,
          seed.credential_id!,
          `dir${i % 100}/f${i}.txt`,
          seed.sha256!,
          seed.size!,
          seed.md5!,
          seed.content_type!,
          "pending",
          seed.created_at!,
          seed.expires_at!,
          seed.received_at!,
        );
      }
    })();
    console.log(`\n${n.toLocaleString("en")} pending files`);
    for (let i = 1; i <= 2; i++) {
      const g = textFile(`more/${i}.txt`, `more ${n} ${i}`);
      const r = await measure(`declare one more file (${i})`, () => t.api("POST", `${base}/${sid}/uploads`, { key: u.key, body: { files: [declared(g)] } }));
      await putBytes(r.body.data.uploads[0].upload, g.bytes);
    }
    for (let i = 1; i <= FINALIZES; i++) {
      await measure(`finalize call ${i}`, () => t.api("POST", `${base}/${sid}/finalize`, { key: u.key, body: { complete: true } }));
    }
  }
} finally {
  clearInterval(timer);
  await t.stop();
}
