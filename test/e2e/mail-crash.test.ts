// The compiled binary killed (SIGKILL, no shutdown) while mail streams in over 8 connections,
// then started again on the same data dir. With group commit several messages share one
// transaction, so this is the proof that acknowledging them together loses nothing: every
// message that got its 250 is in its bucket, whole (message.eml, message.json, one version,
// counted once); a message cut off before its 250 is filed once or not at all, never twice and
// never half.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import { syncfsAvailable, syncfsFileSystem } from "../../src/blobs/syncfs";
import { buildBinary, startBinary, type RunningBinary } from "../helpers/binary";

const SECRET = "mail-crash-secret-key-0123456789-0123456789-0123456789";
let work: string;
let dataDir: string;
let bin: string;
const running = new Set<RunningBinary>();
const env = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, PIER_SECRET_KEY: SECRET });

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "pier-mail-crash-"));
  dataDir = join(work, "data");
  bin = await buildBinary();
}, 240_000);

afterAll(() => {
  for (const p of running) p.proc.kill("SIGKILL");
  if (work) rmSync(work, { recursive: true, force: true });
});

async function start(): Promise<RunningBinary> {
  const p = await startBinary(bin, {
    dataDir,
    cwd: work,
    env: env(),
    smtp: true,
    args: ["--smtp-rate-limit-per-ip", "1000000", "--smtp-rate-limit-per-recipient", "1000000"],
  });
  running.add(p);
  return p;
}

describe("inbound mail survives SIGKILL", () => {
  test("every 250 is filed after restart; nothing is filed twice or half", async () => {
    const boot = Bun.spawnSync([bin, "admin", "bootstrap", "--data-dir", dataDir, "--email", "crash@example.com", "--password", "crash test password 1"], {
      cwd: work,
      env: env(),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(boot.exitCode).toBe(0);
    const key = boot.stdout.toString().trim();

    const first = await start();
    // The compiled binary reaches syncfs through bun:ffi (D225): its blobs wait for the shared flush.
    if (syncfsAvailable() && syncfsFileSystem(work)) expect(first.output()).toMatch(/inbound mail durability.*"?blobs"?[:=]"?syncfs/);
    const addresses: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await fetch(`${first.url}/api/v1/buckets`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ bucket: { title: `crash ${i}`, inbound_email: { enabled: true } } }),
      });
      expect(r.status).toBe(201);
      addresses.push(((await r.json()) as any).data.bucket.inbound_email.address);
    }

    // 8 connections, each sending one message after the other until the server dies.
    const acked = new Set<string>();
    const attempted = new Set<string>();
    let next = 0;
    let dead = false;
    const body = "Crash test line of text, long enough to need a few packets. ".repeat(160);
    const sender = async () => {
      const t = nodemailer.createTransport({
        host: "127.0.0.1",
        port: first.smtpPort,
        secure: false,
        ignoreTLS: true,
        pool: true,
        maxConnections: 1,
      } as SMTPTransport.Options);
      try {
        while (!dead) {
          const subject = `crash-${next++}`;
          attempted.add(subject);
          try {
            await t.sendMail({ from: "sender@example.org", to: addresses[next % addresses.length], subject, text: body });
            acked.add(subject);
          } catch {
            return; // the server is gone (or refused): this message's fate is "once or not at all"
          }
        }
      } finally {
        t.close();
      }
    };
    const senders = Array.from({ length: 8 }, sender);
    const deadline = Date.now() + 90_000;
    while (acked.size < 150 && Date.now() < deadline) await Bun.sleep(20);
    expect(acked.size).toBeGreaterThanOrEqual(150);
    first.proc.kill("SIGKILL");
    dead = true;
    await first.proc.exited;
    running.delete(first);
    await Promise.all(senders);

    // Started again: recovery is SQLite's own (WAL), nothing of Pier's runs to "fix" mail.
    const second = await start();
    const subjects: string[] = [];
    for (let i = 0; i < 4; i++) {
      const bucket = (await (await fetch(`${second.url}/api/v1/buckets?limit=100`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
      const id = bucket.data.buckets.find((b: { title: string }) => b.title === `crash ${i}`).id;
      const r = await fetch(`${second.url}/api/v1/buckets/${id}/inbound_email/messages?limit=500`, { headers: { authorization: `Bearer ${key}` } });
      expect(r.status).toBe(200);
      subjects.push(...((await r.json()) as any).data.messages.map((m: { subject: string }) => m.subject));
    }
    expect(await second.stop()).toBe(0);
    running.delete(second);

    // Every acknowledged message is there; nothing is there twice; nothing unknown appeared.
    for (const s of acked) expect(subjects).toContain(s);
    expect(new Set(subjects).size).toBe(subjects.length);
    for (const s of subjects) expect(attempted.has(s)).toBe(true);

    // Each filed message is whole: its two files, its own bucket version, counted once.
    const db = new Database(join(dataDir, "pier.db"), { readonly: true });
    try {
      const rows = db.query<{ bucket_id: string; folder: string }, []>("SELECT bucket_id, folder FROM mail_messages").all();
      expect(rows.length).toBe(subjects.length);
      for (const r of rows) {
        const inFolder = db
          .query<{ path: string }, [string, string]>("SELECT path FROM files WHERE bucket_id = ?1 AND path LIKE ?2 || '%'")
          .all(r.bucket_id, r.folder)
          .map((f) => f.path.slice(r.folder.length).replace(/^\//, ""));
        expect(inFolder.sort()).toEqual(["message.eml", "message.json"]);
      }
      const perBucket = db
        .query<{ n: number; versions: number; counted: number }, []>(
          `SELECT (SELECT count(*) FROM mail_messages m WHERE m.bucket_id = a.bucket_id) AS n,
                  (SELECT count(*) FROM bucket_versions v WHERE v.bucket_id = a.bucket_id AND v.comment LIKE 'inbound email %') AS versions,
                  a.received_count AS counted
             FROM mail_addresses a`,
        )
        .all();
      expect(perBucket.length).toBe(4);
      for (const b of perBucket) {
        expect(b.versions).toBe(b.n);
        expect(b.counted).toBe(b.n);
      }
    } finally {
      db.close();
    }
  }, 240_000);
});
