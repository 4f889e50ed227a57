// SIGTERM on the compiled binary, as systemd or Docker sends it: the listeners stop taking new
// connections at once, while a slow upload already in flight and an SMTP message whose DATA is
// being sent both complete (200 and 250), and the process then exits 0. After a restart the
// uploaded blob attaches and the message is filed: nothing acknowledged was lost.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBinary, startBinary, type RunningBinary } from "../helpers/binary";
import { freePort } from "../helpers/pebble";
import { rawRequest } from "../helpers/raw-http";
import { RawSmtp } from "../integration/mail/smtp-harness";

const SECRET = "e2e-shutdown-secret-0123456789-0123456789";
let work: string;
let dataDir: string;
let bin: string;
let key: string;
const running = new Set<RunningBinary>();

const env = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, PIER_SECRET_KEY: SECRET, PIER_DATA_DIR: dataDir });

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "pier-e2e-shutdown-"));
  dataDir = join(work, "data");
  bin = await buildBinary();
  const r = Bun.spawnSync([bin, "admin", "bootstrap", "--email", "op@example.com", "--password", "correct horse battery staple"], {
    cwd: work,
    env: env(),
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`bootstrap failed: ${r.stderr.toString()}`);
  key = r.stdout.toString().trim();
}, 240_000);

afterAll(() => {
  for (const s of running) s.proc.kill("SIGKILL");
  if (work) rmSync(work, { recursive: true, force: true });
});

async function start(): Promise<RunningBinary> {
  const s = await startBinary(bin, { dataDir, cwd: work, env: env(), smtp: true, args: ["--shutdown-timeout", "60", "--workers", "2"] });
  running.add(s);
  return s;
}

const api = async (s: RunningBinary, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

/** True when a new TCP connection to the port is refused (the listener is closed). */
const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(false);
    });
    s.once("error", () => resolve(true));
  });

describe("SIGTERM", () => {
  test("lets an in-flight upload and an SMTP DATA finish, refuses new connections, exits 0", async () => {
    const s = await start();
    const bucket = await api(s, "POST", "/api/v1/buckets", { bucket: { title: "Shutdown", inbound_email: { enabled: true } } });
    expect(bucket.status).toBe(201);
    const bucketId = bucket.body.data.bucket.id as string;
    const address = bucket.body.data.bucket.inbound_email.address as string;

    const bytes = randomBytes(4 * 1024 * 1024);
    const d = await api(s, "POST", "/api/v1/direct_uploads", {
      bucket_id: bucketId,
      path: "big.bin",
      blob: {
        filename: "big.bin",
        byte_size: bytes.byteLength,
        checksum: createHash("md5").update(bytes).digest("base64"),
        content_type: "application/octet-stream",
        sha256: createHash("sha256").update(bytes).digest("hex"),
        purpose: "bucket_file",
      },
    });
    expect(d.status).toBe(201);
    const upload = new URL(d.body.data.upload.url);
    const headers = Object.entries(d.body.data.upload.headers as Record<string, string>)
      .map(([k, v]) => `${k}: ${v}`)
      .join("\r\n");

    // SMTP: a transaction inside DATA, its first half sent.
    const smtp = await RawSmtp.open(s.smtpPort);
    await smtp.cmd("EHLO client.test");
    expect((await smtp.cmd("MAIL FROM:<sender@example.org>")).code).toBe(250);
    expect((await smtp.cmd(`RCPT TO:<${address}>`)).code).toBe(250);
    expect((await smtp.cmd("DATA")).code).toBe(354);
    smtp.write("From: sender@example.org\r\nTo: " + address + "\r\nSubject: during shutdown\r\n\r\nfirst half\r\n");

    // The upload: 16 pieces of 256 KiB, one every 900 ms; SIGTERM goes out after the third. It goes
    // through a serving worker and lasts ~12 s after the SIGTERM: longer than the 10 s after which
    // the primary used to kill its workers, whatever --shutdown-timeout said.
    const PIECE = 256 * 1024;
    let sigtermSent = false;
    const uploadDone = rawRequest({
      port: s.port,
      head: `PUT ${upload.pathname}${upload.search} HTTP/1.1\r\nHost: ${upload.host}\r\n${headers}\r\nContent-Length: ${bytes.byteLength}\r\nConnection: close`,
      every: 900,
      next: (i) => {
        if (i * PIECE >= bytes.byteLength) return null;
        if (i === 3 && !sigtermSent) {
          sigtermSent = true;
          s.proc.kill("SIGTERM");
        }
        return bytes.subarray(i * PIECE, (i + 1) * PIECE);
      },
      giveUpMs: 60_000,
    });

    await waitFor("SIGTERM to be sent", () => sigtermSent);
    await waitFor("the shutdown to start", () => s.output().includes("SIGTERM received"));
    // New connections are refused while the old ones finish.
    await waitFor("the HTTP listener to close", () => refused(s.port), 20_000);
    // At once, not after the serving workers have drained the upload (about 12 s from here).
    await waitFor("the SMTP listener to close", () => refused(s.smtpPort), 5_000);
    expect(s.proc.exitCode).toBeNull();

    smtp.write("second half, sent after SIGTERM\r\n.\r\n");
    const accepted = await smtp.reply(30_000);
    expect(accepted.code).toBe(250);
    smtp.close();

    const put = await uploadDone;
    expect(put.status).toBe(200);
    expect(await s.proc.exited).toBe(0);
    running.delete(s);

    // What was acknowledged is there after a restart.
    const again = await start();
    try {
      const attach = await api(again, "POST", `/api/v1/buckets/${bucketId}/files`, { signed_blob_id: d.body.data.signed_blob_id });
      expect(attach.status).toBe(201);
      const inbound = await api(again, "GET", `/api/v1/buckets/${bucketId}/inbound_email`);
      expect(inbound.body.data.received_count).toBe(1);
    } finally {
      again.proc.kill("SIGTERM");
      expect(await again.proc.exited).toBe(0);
      running.delete(again);
    }
  }, 180_000);

  test("a SIGTERM while Pier is still starting waits for the start, then stops the primary and its serving workers: exit 0, no process left", async () => {
    const port = await freePort();
    const proc = Bun.spawn([bin, "serve", "--http-port", String(port), "--smtp-port", "off", "--host", "127.0.0.1", "--workers", "2"], {
      cwd: work,
      env: env(),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    // The primary answers ("Pier is starting", or already the API) before its workers listen.
    await waitFor("the primary to listen", async () => (await fetch(`http://127.0.0.1:${port}/livez`).catch(() => null)) !== null);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    // Its workers run in the same folder: none is left behind once the primary is gone.
    const leftInFolder = () =>
      readdirSync("/proc")
        .filter((d) => /^\d+$/.test(d))
        .filter((pid) => {
          try {
            return readlinkSync(`/proc/${pid}/cwd`) === work;
          } catch {
            return false;
          }
        });
    await Bun.sleep(500);
    expect(leftInFolder()).toEqual([]);
  }, 60_000);
});
