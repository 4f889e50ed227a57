// The worker thread behind InboundReader: SPF/DKIM/DMARC verification (mailauth) and MIME
// parsing (mailparser) run here, off the event loop that speaks SMTP and serves HTTP. It reads
// the raw message from its temp file and writes attachments to temp files, as on the main
// thread, so memory stays flat for large messages. DNS questions go back to the main thread,
// whose resolver (and cache) answers them.
import type { DNSResolver } from "mailauth";
import { SmtpReply } from "../../smtp/server";
import { readInboundMessage } from "./inbound";
import type { ReadJob, WorkerReply, WorkerRequest } from "./inbound-reader";

declare const self: Worker;

let nextDnsId = 0;
const dnsWaiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();

const resolver = ((name: string, rrtype: string) =>
  new Promise((resolve, reject) => {
    const id = ++nextDnsId;
    dnsWaiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
    self.postMessage({ kind: "dns", id, name, rrtype } satisfies WorkerReply);
  })) as DNSResolver;

async function read(job: ReadJob): Promise<WorkerReply> {
  try {
    const msg = await readInboundMessage(job.envelope, job.raw, job.session, { ...job.opts, resolver });
    return { kind: "read", id: job.id, ok: true, decoded: msg.decoded, auth: msg.auth, attachmentFiles: msg.attachmentFiles };
  } catch (e) {
    if (e instanceof SmtpReply) return { kind: "read", id: job.id, ok: false, reply: { code: e.code, message: e.message } };
    return { kind: "read", id: job.id, ok: false, error: (e as Error)?.message ?? String(e) };
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
