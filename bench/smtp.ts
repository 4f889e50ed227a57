// Inbound email benchmark. Runs a whole Pier in a child process (so the client's memory and CPU
// are not counted as the server's) and sends to real bucket addresses: SPF/DKIM/DMARC (local DNS
// table answering after BENCH_DNS_MS, default 5 ms, like a resolver on the network), MIME parse,
// attachments, blobs, one bucket version per message with received_count, all as in production.
// Measures:
//   1. messages/second for 10 KB messages over 8 concurrent SMTP connections, for each
//      configuration in --configs, one server process each, in the same run: `receive-only`
//      (the SMTP layer alone), `none` (no lever: one transaction per message, verification and
//      parsing on the event loop, every DNS question asked), then the levers added one by one
//      (`cache` = DNS answers cached, `group` = group commit, `worker` = reading in a worker);
//   2. the server's peak RSS while it receives one ~25 MB message with attachments (all levers).
// Usage: ./node_modules/.bin/bun bench/smtp.ts [--messages 2000] [--warmup 1000] [--configs receive-only,all] [--no-memory] [--client raw]
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : Number(process.argv[i + 1]);
};

/** --client raw: a minimal SMTP client (prebuilt bytes) instead of nodemailer, whose MIME
 * building costs about 1 ms of CPU per message on the cores the server needs. */
const rawClient = process.argv.includes("--client") && process.argv[process.argv.indexOf("--client") + 1] === "raw";

const CONFIGS: Record<string, Record<string, string>> = {
  "receive-only": { BENCH_RECEIVE_ONLY: "1" },
  none: { BENCH_LEVERS: "" },
  cache: { BENCH_LEVERS: "cache" },
  "cache+group": { BENCH_LEVERS: "cache,group" },
  "cache+worker": { BENCH_LEVERS: "cache,worker" },
  all: { BENCH_LEVERS: "cache,group,worker" },
  // The group-commit window: 2 ms (the default, `all`) against 5 ms.
  "all-wait5": { BENCH_LEVERS: "cache,group,worker", BENCH_GROUP_WAIT_MS: "5" },
  // Durability of the 250: `all` fsyncs the WAL after each group commit (the default);
  // `all-nosync` does not (survives a process crash only), `all-full` uses SQLite's FULL.
  "all-nosync": { BENCH_LEVERS: "cache,group,worker", BENCH_DURABILITY: "none" },
  "all-full": { BENCH_LEVERS: "cache,group,worker", BENCH_DURABILITY: "synchronous-full" },
  // The file-system thread pool (Bun's: one thread per core, read at process start) holds a
  // thread for every fsync and file create in flight: 8 threads let more of them wait on the
  // disk at once (it helped while the disk was busy with other work, not on a quiet machine).
  "all-pool8": { BENCH_LEVERS: "cache,group,worker", UV_THREADPOOL_SIZE: "8" },
  // One syncfs for many blobs (D225): `all` waits for a shared syncfs barrier for the blobs
  // and fsyncs the WAL; `all-walsyncfs` flushes the WAL with the same barrier (measured, not
  // better); `all-fsync` fsyncs every blob and its directory (the path kept where syncfs is
  // unavailable, and the path before D225).
  "all-walsyncfs": { BENCH_LEVERS: "cache,group,worker", BENCH_SYNCFS: "blobs+wal" },
  "all-fsync": { BENCH_LEVERS: "cache,group,worker", BENCH_SYNCFS: "off" },
  // The group-commit window with the barrier: messages reach the committer in clumps (every
  // waiter of one syncfs at once); no window at all was measured not to help.
  "all-wait0": { BENCH_LEVERS: "cache,group,worker", BENCH_GROUP_WAIT_MS: "0" },
};

/** msg/s and server CPU ms per message of each configuration run, for the summary. */
const rates = new Map<string, { rate: number; cpu: number }>();

if (process.argv.includes("--server")) await runServer();
else await runClient();

async function runServer() {
  if (!process.env.BENCH_RECEIVE_ONLY) return runPierServer();
  const { silentLogger } = await import("../src/core/log");
  const { startSmtpServer } = await import("../src/smtp/server");
  const dir = mkdtempSync(join(process.env.BENCH_DATA_ROOT ?? tmpdir(), "smtp-"));
  let filed = 0;
  const smtp = await startSmtpServer(
    {
      acceptRecipient: (address) => ({ ok: true, key: address }),
      async deliver() {
        filed++; // isolates the SMTP layer
      },
    },
    {
      host: "127.0.0.1",
      port: 0,
      serverName: "bench.test",
      maxMessageBytes: Number(process.env.BENCH_MAX_MB ?? 30) * 1024 * 1024,
      maxRecipients: 100,
      perIpPerMinute: 1_000_000,
      perRecipientPerMinute: 1_000_000,
      tls: null,
      tempDir: join(dir, "tmp"),
      log: silentLogger,
    },
  );
  await serveStats(() => filed, { port: smtp.port, addresses: Array.from({ length: 50 }, (_, i) => `box${i}@in.test`), big: "big@in.test" });
  await smtp.stop();
  process.exit(0);
}

/** A real Pier (temp data dir, worker off) with 50 buckets that have addresses. */
async function runPierServer() {
  const { silentLogger } = await import("../src/core/log");
  const { loadConfig } = await import("../src/config");
  const { startPier } = await import("../src/runtime");
  const { tableResolver } = await import("../src/features/mail/sender-auth");
  const { createApiKey } = await import("../src/features/accounts/keys");
  const { hashPassword, insertUserWithAccount } = await import("../src/features/accounts/service");
  const dir = mkdtempSync(join(process.env.BENCH_DATA_ROOT ?? tmpdir(), "pier-"));
  const config = loadConfig(
    {},
    {
      "data-dir": dir,
      host: "127.0.0.1",
      "http-port": "0",
      "smtp-port": "0",
      "mail-domain": "bench.test",
      "smtp-tls-cert": "off",
      "smtp-rate-limit-per-ip": "1000000",
      "smtp-rate-limit-per-recipient": "1000000",
      "smtp-max-message-size": String(Number(process.env.BENCH_MAX_MB ?? 30) * 1024 * 1024),
      "secret-key": "bench-secret-key-bench-secret-key-bench-secret-key",
    },
  );
  const table = tableResolver({ "sender.test/TXT": [["v=spf1 ip4:127.0.0.1 -all"]], "_dmarc.sender.test/TXT": [["v=DMARC1; p=none"]] });
  const dnsMs = Number(process.env.BENCH_DNS_MS ?? 5);
  const resolver = (async (name: string, rrtype: string) => {
    await Bun.sleep(dnsMs);
    return table(name, rrtype);
  }) as typeof table;
  const levers = new Set((process.env.BENCH_LEVERS ?? "cache,group,worker").split(","));
  const mailFiling = {
    noDnsCache: !levers.has("cache"),
    groupCommit: {
      ...(levers.has("group")
        ? process.env.BENCH_GROUP_WAIT_MS
          ? { maxWaitMs: Number(process.env.BENCH_GROUP_WAIT_MS) }
          : {}
        : { maxBatch: 1, maxWaitMs: 0 }),
      ...(process.env.BENCH_DURABILITY ? { durability: process.env.BENCH_DURABILITY as "none" } : {}),
    },
    inProcessReading: !levers.has("worker"),
    ...(process.env.BENCH_SYNCFS ? { syncfs: process.env.BENCH_SYNCFS as "blobs" } : {}),
  };
  const pier = await startPier(config, { log: silentLogger, startWorker: false, mailResolver: resolver, mailFiling });
  const { user, account } = insertUserWithAccount(pier.deps, { email: "bench@example.com", passwordHash: await hashPassword("bench password"), plan: "pro" });
  const { key } = createApiKey(pier.deps, { accountId: account.id, userId: user.id, label: "bench", kind: "owner", scope: "bucket_admin" });
  const addresses: string[] = [];
  for (let i = 0; i < 51; i++) {
    const r = await fetch(`http://127.0.0.1:${pier.httpPort}/api/v1/buckets`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ bucket: { title: `box ${i}`, inbound_email: { enabled: true } } }),
    });
    addresses.push(((await r.json()) as any).data.bucket.inbound_email.address);
  }
  const filed = () => pier.deps.sqlite.query("select coalesce(sum(received_count), 0) n from mail_addresses").get() as { n: number };
  await serveStats(
    () => filed().n,
    { port: pier.smtp!.port, addresses: addresses.slice(0, 50), big: addresses[50]! },
    () => ({ ...pier.smtp!.commitStats, syncfs: pier.smtp!.syncStats?.syncs ?? 0 }),
  );
  await pier.stop();
  // The data dir stays until the whole run ends (runClient): deleting thousands of files here
  // made the next configuration's file-system threads pay for the kernel's cleanup.
  process.exit(0);
}

/** CPU of the event loop's thread alone (Linux: its task's utime + stime, in clock ticks of 10 ms). */
function mainThreadCpuMs(): number {
  try {
    const stat = require("node:fs").readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8") as string;
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * 10; // fields 14 and 15 of stat(5)
  } catch {
    return NaN;
  }
}

/**
 * CPU of every thread of the server process, by task id and name (Linux: utime + stime of each
 * /proc/self/task/<tid>/stat, clock ticks of 10 ms): shows whether the reading worker, the event
 * loop or the file-system thread pool is the busy one.
 */
function threadCpuMs(): Record<string, number> {
  const fs = require("node:fs") as typeof import("node:fs");
  const out: Record<string, number> = {};
  try {
    for (const tid of fs.readdirSync("/proc/self/task")) {
      try {
        const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        out[`${tid === String(process.pid) ? "event loop" : name} ${tid}`] = (Number(f[11]) + Number(f[12])) * 10;
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    // not Linux
  }
  return out;
}

/** Per-thread CPU ms per message between two samples, grouped by thread name, busiest first. */
function threadShares(before: Record<string, number>, after: Record<string, number>, messages: number, secs: number): string {
  const byName = new Map<string, { ms: number; threads: number; busiest: number }>();
  for (const [key, ms] of Object.entries(after)) {
    const d = ms - (before[key] ?? 0);
    if (d <= 0) continue;
    const name = key.slice(0, key.lastIndexOf(" "));
    const g = byName.get(name) ?? { ms: 0, threads: 0, busiest: 0 };
    g.ms += d;
    g.threads++;
    g.busiest = Math.max(g.busiest, d);
    byName.set(name, g);
  }
  return [...byName]
    .sort((a, b) => b[1].ms - a[1].ms)
    .map(
      ([name, g]) =>
        `${name}${g.threads > 1 ? ` x${g.threads}` : ""} ${(g.ms / messages).toFixed(2)} ms/msg (busiest thread ${((g.busiest / 1000 / secs) * 100).toFixed(0)}% busy)`,
    )
    .join("; ");
}

/** Print where to send, then answer stats commands from the client on stdin. */
async function serveStats(filed: () => number, hello: { port: number; addresses: string[]; big: string }, commits: () => unknown = () => null) {
  let peak = process.memoryUsage().rss;
  // memoryUsage() is not free (about 0.2 ms of CPU per message at these rates when sampled
  // every 50 ms): RSS is sampled only for the large-message measurement, never while the
  // throughput run counts CPU per message.
  const sampleRss = () => setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50).unref();
  console.log(JSON.stringify(hello));
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "sample-rss") sampleRss();
    if (line === "reset") {
      Bun.gc(true);
      peak = process.memoryUsage().rss;
    }
    if (line === "reset" || line === "stats" || line === "gc-on" || line === "sample-rss") {
      const cpu = process.cpuUsage(); // every thread of the server process (event loop, workers, fs pool)
      console.log(
        JSON.stringify({
          peak,
          rss: process.memoryUsage().rss,
          filed: filed(),
          cpuMs: (cpu.user + cpu.system) / 1000,
          mainMs: mainThreadCpuMs(),
          threads: threadCpuMs(),
          commits: commits(),
        }),
      );
    }
    if (line === "gc-on") setInterval(() => Bun.gc(true), 50).unref(); // shows live memory, not GC slack
    if (line === "quit") break;
  }
}

async function runClient() {
  const i = process.argv.indexOf("--configs");
  const configs = i === -1 ? ["receive-only", "none", "cache", "cache+group", "all"] : process.argv[i + 1]!.split(",");
  console.log(`load average before: ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`);
  // Every server's data dir, removed once after the last run (see runPierServer).
  const dataRoot = mkdtempSync(join(tmpdir(), "pier-bench-smtp-"));
  process.env.BENCH_DATA_ROOT = dataRoot;
  process.on("exit", () => rmSync(dataRoot, { recursive: true, force: true }));
  for (const name of configs) {
    if (!CONFIGS[name]) throw new Error(`unknown config ${name} (${Object.keys(CONFIGS).join(", ")})`);
    console.log(`uptime before ${name}: load ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`);
    await runOne(name, { ...CONFIGS[name], BENCH_RECEIVE_ONLY: CONFIGS[name]!.BENCH_RECEIVE_ONLY ?? "" }, false);
  }
  const bare = rates.get("receive-only");
  if (bare) {
    for (const [name, r] of rates) {
      if (name !== "receive-only")
        console.log(`${name}: ${(r.rate / bare.rate).toFixed(2)}x the bare SMTP layer's msg/s; CPU ${r.cpu.toFixed(2)} vs ${bare.cpu.toFixed(2)} ms/msg`);
    }
  }
  if (!process.argv.includes("--no-memory")) await runOne("all", CONFIGS.all!, true);
  process.exit(0);
}

interface BenchMail {
  from: string;
  to: string;
  subject: string;
  text: string;
}
interface BenchClient {
  send(m: BenchMail): Promise<unknown>;
  close(): void;
}

function nodemailerPool(port: number): BenchClient {
  const pool = nodemailer.createTransport({
    host: "127.0.0.1",
    port,
    secure: false,
    ignoreTLS: true,
    pool: true,
    maxConnections: 8,
    maxMessages: Infinity,
  } as SMTPTransport.Options);
  return { send: (m) => pool.sendMail(m), close: () => pool.close() };
}

/** `connections` SMTP sessions; each message is MAIL, RCPT, DATA (one reply each), then the bytes. */
async function rawSmtpPool(port: number, connections: number, text: string): Promise<BenchClient> {
  // The same quoted-printable body for every message (as nodemailer encodes this text).
  const qp = text.replace(/(.{72})/g, "$1=\r\n");
  const queue: { m: BenchMail; done: (e?: Error) => void }[] = [];
  const idle: (() => void)[] = [];
  const sockets: import("node:net").Socket[] = [];
  const { connect } = await import("node:net");
  const session = async () => {
    const sock = connect(port, "127.0.0.1");
    sockets.push(sock);
    let buf = "";
    let waiter: ((line: string) => void) | null = null;
    sock.setEncoding("latin1");
    sock.on("data", (d: string) => {
      buf += d;
      for (;;) {
        const nl = buf.indexOf("\r\n");
        if (nl === -1) break;
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 2);
        if (line[3] === "-") continue; // a multi-line reply goes on
        const w = waiter;
        waiter = null;
        w?.(line);
      }
    });
    const reply = (expect: string) =>
      new Promise<void>((resolve, reject) => {
        waiter = (line) => (line.startsWith(expect) ? resolve() : reject(new Error(`SMTP: ${line}`)));
      });
    const cmd = (line: string, expect: string) => {
      const r = reply(expect);
      sock.write(line);
      return r;
    };
    await reply("220");
    await cmd("EHLO client.sender.test\r\n", "250");
    for (;;) {
      const job = queue.shift() ?? (await new Promise<void>((r) => idle.push(r)), queue.shift());
      if (!job) return;
      try {
        await cmd(`MAIL FROM:<${job.m.from}>\r\n`, "250");
        await cmd(`RCPT TO:<${job.m.to}>\r\n`, "250");
        await cmd("DATA\r\n", "354");
        const head = `From: <${job.m.from}>\r\nTo: <${job.m.to}>\r\nSubject: ${job.m.subject}\r\nMessage-ID: <${crypto.randomUUID()}@sender.test>\r\nDate: ${new Date().toUTCString()}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n`;
        await cmd(`${head}${qp}\r\n.\r\n`, "250");
        job.done();
      } catch (e) {
        job.done(e as Error);
      }
    }
  };
  const sessions = Array.from({ length: connections }, session);
  return {
    send: (m) =>
      new Promise<void>((resolve, reject) => {
        queue.push({ m, done: (e) => (e ? reject(e) : resolve()) });
        idle.shift()?.();
      }),
    close() {
      for (const s of sockets) s.end("QUIT\r\n");
      void sessions;
    },
  };
}

async function runOne(name: string, env: Record<string, string>, memory: boolean) {
  const total = arg("messages", 2000);
  // BENCH_SERVER_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server's event loop;
  // BENCH_SERVER_WRAP="strace -f -c -o /tmp/syscalls.txt" counts the server's system calls.
  const flags = (process.env.BENCH_SERVER_FLAGS ?? "").split(" ").filter(Boolean);
  const wrap = (process.env.BENCH_SERVER_WRAP ?? "").split(" ").filter(Boolean);
  const child = Bun.spawn([...wrap, process.execPath, ...flags, import.meta.path, "--server"], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
    env: { ...process.env, ...env },
  });
  const reader = child.stdout.getReader();
  let buf = "";
  const next = async (): Promise<any> => {
    for (;;) {
      const nl = buf.indexOf("\n");
      if (nl !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        return JSON.parse(line);
      }
      const { value, done } = await reader.read();
      if (done) throw new Error("bench server exited");
      buf += new TextDecoder().decode(value);
    }
  };
  const ask = async (cmd: string) => {
    child.stdin.write(cmd + "\n");
    child.stdin.flush();
    return next();
  };
  const { port, addresses, big } = (await next()) as { port: number; addresses: string[]; big: string };
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

  const quit = async () => {
    child.stdin.write("quit\n");
    child.stdin.flush();
    await child.exited;
  };
  if (!memory) {
    // 1. Throughput: 10 KB messages, 8 pooled connections.
    const body = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(170).slice(0, 9_500);
    const mail = (i: number) => ({ from: "sender@sender.test", to: addresses[i % addresses.length]!, subject: `bench ${i}`, text: body });
    const client = rawClient ? await rawSmtpPool(port, 8, body) : nodemailerPool(port);
    // Warm-up: a server that has run a while (JIT tiers up, caches filled). 100 messages left the
    // JIT compiling through the measured ones (its threads: 0.46 ms per message in 2,000, 0.28
    // in 10,000), which no long-running server pays.
    const warmup = arg("warmup", 1000);
    await Promise.all(Array.from({ length: warmup }, (_, i) => client.send(mail(i))));
    const base = await ask("reset");
    const clientCpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: total }, (_, i) => client.send(mail(i))));
    const secs = (performance.now() - t0) / 1000;
    const clientCpu = process.cpuUsage(clientCpu0);
    const after = await ask("stats");
    client.close();
    const load = (await Bun.file("/proc/loadavg").text()).split(" ")[0];
    console.log(
      `${name.padEnd(13)} ${rawClient ? "[raw client] " : ""}${total} x 10 KB over 8 connections in ${secs.toFixed(2)} s = ${(total / secs).toFixed(0)} msg/s (filed ${after.filed - base.filed}); server CPU ${((after.cpuMs - base.cpuMs) / total).toFixed(2)} ms/msg (event loop ${((after.mainMs - base.mainMs) / total).toFixed(2)}), client ${((clientCpu.user + clientCpu.system) / 1000 / total).toFixed(2)};${after.commits ? ` ${after.commits.messages - base.commits.messages} messages in ${after.commits.batches - base.commits.batches} transactions (largest ${after.commits.largest});` : ""} server RSS ${mb(after.rss)}; load ${load}`,
    );
    console.log(`  threads (CPU per message): ${threadShares(base.threads, after.threads, total, secs)}`);
    if (after.commits) {
      const d = (k: string) => after.commits[k] - base.commits[k];
      const batches = d("batches");
      console.log(
        `  a message's wait: ${(d("prepareMs") / total).toFixed(1)} ms for the reading worker (verify, parse, blobs), ${(d("blobSyncMs") / total).toFixed(1)} ms for its blobs' syncfs, ${(d("commitWaitMs") / total).toFixed(1)} ms for its commit; per batch of ${(total / batches).toFixed(1)}: transaction ${(d("transactionMs") / batches).toFixed(2)} ms, WAL flush ${(d("walSyncMs") / batches).toFixed(2)} ms; ${d("syncfs")} syncfs calls (${(d("syncfs") / total).toFixed(2)} per message), ${d("fsyncedWhileSlow")} messages fsynced their own blobs while syncfs was slow`,
      );
    }
    rates.set(name, { rate: total / secs, cpu: (after.cpuMs - base.cpuMs) / total });
    return quit();
  }

  // 2. One ~25 MB message with attachments: server RSS must stay flat. RSS after a large
  // message includes garbage the GC has not collected yet, so the same sizes are measured again
  // with a full GC every 50 ms in the server: that peak is what the server really holds.
  const dir = mkdtempSync(join(tmpdir(), "pier-bench-att-"));
  const attachments = (mbEach: number) =>
    [0, 1, 2].map((i) => {
      const p = join(dir, `data-${mbEach}-${i}.bin`);
      writeFileSync(p, randomBytes(mbEach * 1024 * 1024));
      return { filename: `data-${i}.bin`, path: p };
    });
  await ask("sample-rss");
  const one = nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true } as SMTPTransport.Options);
  const sendLarge = async (mbEach: number, label: string) => {
    const idle = await ask("reset");
    const t1 = performance.now();
    const info = await one.sendMail({ from: "sender@sender.test", to: big, subject: "big", text: "three attachments", attachments: attachments(mbEach) });
    const st = await ask("stats");
    console.log(
      `${label}: ${mb((info as { messageSize?: number }).messageSize ?? 0)} message (3 x ${mbEach} MB attachments) in ${((performance.now() - t1) / 1000).toFixed(2)} s; server RSS before ${mb(idle.peak)}, peak ${mb(st.peak)} (+${mb(st.peak - idle.peak)})`,
    );
  };
  await sendLarge(6, "large message, default GC");
  await ask("gc-on");
  await sendLarge(1, "small message, GC every 50 ms");
  await sendLarge(6, "large message, GC every 50 ms");
  // BENCH_MAX_MB=120 also sends a ~100 MB message: if the peak does not grow with it, it is flat.
  if (Number(process.env.BENCH_MAX_MB) >= 120) await sendLarge(24, "huge message, GC every 50 ms");
  rmSync(dir, { recursive: true, force: true });
  await quit();
}
