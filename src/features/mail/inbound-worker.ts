// The worker thread behind InboundReader: SPF/DKIM/DMARC verification (mailauth), MIME
// parsing (mailparser) and the blob writes (prepare.ts) run here, off the event loop that speaks
// SMTP and serves HTTP. It reads the raw message from its temp file and streams attachments
// and large blobs through files, as on the main thread, so memory stays flat for large
// messages. The blob store is content-addressed (temp file, fsync, rename): the worker's handle
// and the main thread's can write the same directory. With `deferSync` the worker skips the
// blobs' fsyncs: the main thread's syncfs barrier makes them durable before the commit. DNS questions go back to the main thread,
// whose resolver (and cache) answers them; the worker keeps those answers for a few seconds
// itself, so a message from a known sender costs no DNS round trip between the threads.
import type { DNSResolver } from "mailauth";
import { SmtpReply } from "../../smtp/server";
import { cachingResolver } from "./dns-cache";
import { DiskBlobStore } from "../../blobs/disk";
import { prepareMessage } from "./prepare";
import type { ReadJob, WorkerReply, WorkerRequest } from "./inbound-reader";

declare const self: Worker;

let nextDnsId = 0;
const dnsWaiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();

/** Answers kept in the worker on top of the main thread's TTL-bounded cache (staleness bound). */
const WORKER_DNS_TTL_MS = 5_000;

const askMainThread = ((name: string, rrtype: string) =>
  new Promise((resolve, reject) => {
    const id = ++nextDnsId;
    dnsWaiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
    self.postMessage({ kind: "dns", id, name, rrtype } satisfies WorkerReply);
  })) as DNSResolver;
const cached = cachingResolver(askMainThread, Date.now, WORKER_DNS_TTL_MS);

const stores = new Map<string, DiskBlobStore>();
const blobStore = (dir: string) => stores.get(dir) ?? stores.set(dir, new DiskBlobStore(dir)).get(dir)!;

async function read(job: ReadJob): Promise<WorkerReply> {
  try {
    const resolver = job.cacheDns ? cached : askMainThread;
    const prepared = await prepareMessage(blobStore(job.blobDir), job.envelope, job.raw, job.session, { ...job.opts, resolver }, { deferSync: job.deferSync });
    return { kind: "read", id: job.id, ok: true, prepared };
  } catch (e) {
    if (e instanceof SmtpReply) return { kind: "read", id: job.id, ok: false, reply: { code: e.code, message: e.message } };
    const code = (e as { code?: unknown })?.code;
    return { kind: "read", id: job.id, ok: false, error: (e as Error)?.message ?? String(e), code: typeof code === "string" ? code : undefined };
  }
}

self.onmessage = (e: MessageEvent<WorkerRequest>) => {
  const m = e.data;
  if (m.kind === "dns") {
    const w = dnsWaiting.get(m.id);
    dnsWaiting.delete(m.id);
    if (!w) return;
    if (m.ok) w.resolve(m.answer);
    else w.reject(Object.assign(new Error(m.message), { code: m.code }));
    return;
  }
  void read(m).then((reply) => self.postMessage(reply));
};
