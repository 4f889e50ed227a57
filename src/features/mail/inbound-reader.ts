// Runs prepareMessage (verification, parsing and the blobs: all of filing a message but its
// transaction) in a worker thread, so SMTP conversations, commits and HTTP requests on the main
// thread do not wait behind mailauth, mailparser, hashing and file writes. One worker: on a small machine the main thread needs the
// other core; each worker handles many messages at once (its work is mostly streams).
import { promises as dns } from "node:dns";
import { join } from "node:path";
import type { DNSResolver } from "mailauth";
import { SmtpReply, type InboundEnvelope, type SmtpSessionInfo } from "../../smtp/server";
import { removeScratch, type ReadOptions } from "./inbound";
import type { PreparedMessage } from "./prepare";

export interface ReadJob {
  kind: "read";
  id: number;
  envelope: InboundEnvelope;
  /** The raw message's temp file, or its bytes. */
  raw: string | Uint8Array;
  session: SmtpSessionInfo;
  opts: Omit<ReadOptions, "resolver">;
  /** The disk blob store's directory, opened by the worker. */
  blobDir: string;
  /** Keep DNS answers in the worker for a few seconds (off only for the benchmark's comparison). */
  cacheDns: boolean;
  /** Skip the blobs' own fsyncs: the caller flushes a SyncBarrier before committing. */
  deferSync: boolean;
}
export type WorkerRequest =
  | ReadJob
  | { kind: "dns"; id: number; ok: true; answer: unknown }
  | { kind: "dns"; id: number; ok: false; code?: string; message: string };
export type WorkerReply =
  | { kind: "read"; id: number; ok: true; prepared: PreparedMessage }
  | { kind: "read"; id: number; ok: false; reply?: { code: number; message: string }; error?: string; code?: string }
  | { kind: "dns"; id: number; name: string; rrtype: string };

/** A message the worker has not answered in this long is given up (451; the sender retries). */
const JOB_TIMEOUT_MS = 120_000;

/**
 * From source the worker file sits beside this one. In the compiled binary it is an extra
 * entrypoint of the build (scripts/build.ts), embedded under the entrypoints' common folder
 * (src/) as features/mail/inbound-worker, while this module is bundled into the executable.
 */
function workerEntry(): string {
  return import.meta.url.includes("/$bunfs/") ? "./features/mail/inbound-worker.ts" : new URL("./inbound-worker.ts", import.meta.url).href;
}

interface Waiting {
  resolve: (r: Extract<WorkerReply, { kind: "read" }>) => void;
  reject: (e: unknown) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class InboundReader {
  private worker: Worker | null = null;
  private nextId = 0;
  private readonly waiting = new Map<number, Waiting>();

  private readonly resolver: DNSResolver;

  /** `resolver` answers the worker's DNS questions; the system resolver when unset. */
  constructor(
    private readonly blobDir: string,
    resolver?: DNSResolver,
    private readonly cacheDns = true,
  ) {
    this.resolver = resolver ?? (((name: string, rrtype: string) => dns.resolve(name, rrtype as "TXT")) as DNSResolver);
  }

  /** deferSync: skip the blobs' own fsyncs, the caller flushes a SyncBarrier before committing. */
  async prepare(envelope: InboundEnvelope, raw: string | Uint8Array, session: SmtpSessionInfo, opts: ReadOptions, deferSync = false): Promise<PreparedMessage> {
    const { resolver: _, ...plain } = opts;
    const id = ++this.nextId;
    const dir = join(opts.tempDir, envelope.id);
    const cleanup = () => removeScratch(dir);
    const w = this.start();
    let reply: Extract<WorkerReply, { kind: "read" }>;
    try {
      reply = await new Promise((resolve, reject) => {
        const timer = setTimeout(() => this.fail(new Error("message reading timed out")), JOB_TIMEOUT_MS);
        this.waiting.set(id, { resolve, reject, timer });
        // Bytes held in memory are moved to the worker, not copied: nothing here reads them again.
        const own = typeof raw !== "string" && raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength;
        const job = {
          kind: "read",
          id,
          envelope,
          raw,
          session,
          opts: plain,
          blobDir: this.blobDir,
          cacheDns: this.cacheDns,
          deferSync,
        } satisfies ReadJob;
        w.postMessage(job, own ? [raw.buffer as ArrayBuffer] : []);
      });
    } catch (e) {
      await cleanup();
      throw e;
    }
    if (!reply.ok) {
      await cleanup();
      if (reply.reply) throw new SmtpReply(reply.reply.code, reply.reply.message);
      // The code travels too: a full disk (ENOSPC) must still become SMTP 452.
      throw Object.assign(new Error(reply.error ?? "message reading failed"), reply.code ? { code: reply.code } : {});
    }
    return reply.prepared;
  }

  close(): void {
    this.fail(new Error("mail receiver stopped"));
  }

  /** The worker died or hung: every message it held gets a 451, the next one a new worker. */
  private fail(e: Error): void {
    const w = this.worker;
    this.worker = null;
    w?.terminate();
    for (const [id, job] of this.waiting) {
      clearTimeout(job.timer);
      job.reject(e);
      this.waiting.delete(id);
    }
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(workerEntry());
    (w as unknown as { unref(): void }).unref(); // an idle reader does not keep the process alive
    w.onmessage = (e: MessageEvent<WorkerReply>) => {
      const m = e.data;
      if (m.kind === "dns") {
        this.resolver(m.name, m.rrtype).then(
          (answer) => w.postMessage({ kind: "dns", id: m.id, ok: true, answer } satisfies WorkerRequest),
          (err: { code?: string; message?: string }) =>
            w.postMessage({ kind: "dns", id: m.id, ok: false, code: err?.code, message: err?.message ?? String(err) } satisfies WorkerRequest),
        );
        return;
      }
      const job = this.waiting.get(m.id);
      if (!job) return;
      this.waiting.delete(m.id);
      clearTimeout(job.timer);
      job.resolve(m);
    };
    w.onerror = () => {
      if (this.worker === w) this.fail(new Error("message reader worker failed"));
    };
    return (this.worker = w);
  }
}
