// How many DKIM signatures of a message get verified (D276). mailauth verifies every
// DKIM-Signature header, and each one a sender adds with its own l= costs a pass over the body,
// each with its own s=/d= a DNS lookup to a name the sender picks: hundreds of them made one
// message hold the reading worker for tens of seconds. Like OpenDKIM's
// MaximumSignaturesToVerify (first N in header order), only the first MAX_DKIM_SIGNATURES are
// handed to mailauth; later ones are renamed in the bytes mailauth reads, never in the message
// that is stored, so mailauth neither hashes the body for them nor looks up their keys. mailauth
// has no option for this. Header fields are found with mailauth's own parser (parseHeaders), so
// folding, case and odd spellings of the name count exactly as mailauth would count them.
import { Transform } from "node:stream";
import { parseHeaders } from "mailauth/lib/tools";

/** Signatures verified per message, topmost first; the rest are not looked at. */
export const MAX_DKIM_SIGNATURES = 5;

/** The name a signature past the limit gets in mailauth's copy (no mailauth code reads it). */
export const UNVERIFIED_DKIM_HEADER = "X-Pier-Unverified-DKIM-Signature";

const LF = 0x0a;
const CR = 0x0d;

/**
 * Finds the end of the header block the way mailauth's MessageParser does (it turns every bare
 * LF into CRLF first, then ends the header at the first empty line, or at once when the message
 * starts with one): in the raw bytes that is an LF right after an LF or after LF CR, or an LF
 * as the first byte or after a first CR. `state` carries the bytes before `chunk`.
 */
function scanHeaderEnd(chunk: Buffer, state: { seen: number; prev1: number; prev2: number }): number {
  for (let i = 0; i < chunk.length; i++) {
    const c = chunk[i]!;
    if (c === LF) {
      const at = state.seen + i;
      if (at === 0 || (at === 1 && state.prev1 === CR) || state.prev1 === LF || (state.prev1 === CR && state.prev2 === LF)) {
        state.seen += i + 1;
        return i + 1;
      }
    }
    state.prev2 = state.prev1;
    state.prev1 = c;
  }
  state.seen += chunk.length;
  return -1;
}

/**
 * The header block as mailauth should read it: unchanged when it has at most `max` DKIM
 * signatures, else rebuilt from mailauth's own rows with the later signatures renamed. A
 * rebuilt block ends its lines with CRLF, which mailauth does to every bare LF anyway.
 * `ended`: the block ended with its empty line (false: the message has no body).
 */
export function limitDkimInHeaderBlock(block: Buffer, ended: boolean, max = MAX_DKIM_SIGNATURES): Buffer {
  const rows = parseHeaders(block).parsed;
  if (rows.filter((r) => r.key === "dkim-signature").length <= max) return block;
  let n = 0;
  const lines = rows.map((r) => {
    const line = r.line.toString("binary");
    // The field name is everything before the first colon (folds included), as mailauth reads it.
    return r.key === "dkim-signature" && ++n > max ? line.replace(/^[^:]*/, UNVERIFIED_DKIM_HEADER) : line;
  });
  return Buffer.from(lines.join("\r\n") + (ended ? "\r\n\r\n" : "\r\n"), "binary");
}

/** The same for a message held in memory: a new buffer only when something was renamed. */
export function limitDkimSignaturesInBytes(raw: Buffer, max = MAX_DKIM_SIGNATURES): Buffer {
  const end = scanHeaderEnd(raw, { seen: 0, prev1: -1, prev2: -1 });
  const block = end < 0 ? raw : raw.subarray(0, end);
  const limited = limitDkimInHeaderBlock(block, end >= 0, max);
  return limited === block ? raw : end < 0 ? limited : Buffer.concat([limited, raw.subarray(end)]);
}

/**
 * A stream transform doing the same on the way from the message's file to mailauth: it holds
 * the header block until its end (mailauth holds it whole as well), then passes the body
 * through chunk by chunk, never keeping it.
 */
export function limitDkimSignatures(max = MAX_DKIM_SIGNATURES): Transform {
  const state = { seen: 0, prev1: -1, prev2: -1 };
  let header: Buffer[] | null = [];
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (header === null) return done(null, chunk);
      const end = scanHeaderEnd(chunk, state);
      if (end < 0) {
        header.push(chunk);
        return done();
      }
      header.push(chunk.subarray(0, end));
      this.push(limitDkimInHeaderBlock(Buffer.concat(header), true, max));
      header = null;
      done(null, end < chunk.length ? chunk.subarray(end) : undefined);
    },
    flush(done) {
      if (header !== null && header.length > 0) this.push(limitDkimInHeaderBlock(Buffer.concat(header), false, max));
      header = null;
      done();
    },
  });
}
