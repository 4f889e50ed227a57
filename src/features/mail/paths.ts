// Where a received message lives inside a bucket, and how attachment names become safe file
// names. Pure functions: the filer, the parser and the docs all agree on these.
//
//   _email/2026/11/22/20261122T031500123Z-k3j9x0a1b2c3d4e5/
//     message.eml              the raw message as received (with our Received header on top)
//     message.json             the decoded message (see docs/inbound-email.md)
//     attachments/<safe name>  each attachment

// The folder itself is a rule of the files feature (private, never synced away); mail fills it.
import { EMAIL_ROOT, isMailPath } from "../files";
export { EMAIL_ROOT, isMailPath };
export const MAX_ATTACHMENT_NAME_BYTES = 150;

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/**
 * `_email/YYYY/MM/DD/<YYYYMMDDTHHMMSSmmmZ>-<id>/` in UTC. Date folders keep listings small; the
 * full timestamp first makes names sort in arrival order (to the millisecond) on their own,
 * and the random id makes them collision-free.
 */
export function messageFolder(receivedAt: Date, id: string): string {
  if (!/^[a-z0-9]{8,32}$/.test(id)) throw new Error(`message id must be 8-32 lowercase letters/digits, got "${id}"`);
  const d = receivedAt;
  const y = d.getUTCFullYear();
  const mo = pad(d.getUTCMonth() + 1);
  const da = pad(d.getUTCDate());
  const stamp = `${y}${mo}${da}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}${pad(d.getUTCMilliseconds(), 3)}Z`;
  return `${EMAIL_ROOT}${y}/${mo}/${da}/${stamp}-${id}/`;
}

export const messageEmlPath = (folder: string) => `${folder}message.eml`;
export const messageJsonPath = (folder: string) => `${folder}message.json`;
export const attachmentPath = (folder: string, safeName: string) => `${folder}attachments/${safeName}`;

// Names Windows refuses whatever the extension; a bucket may be synced to a Windows machine.
const reservedWindows = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;
// C0/C1 controls, DEL, and bidi/zero-width format characters that can disguise an extension
// ("invoice\u202Efdp.exe" shows as "invoiceexe.pdf").
const unsafeChars = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;

/** Truncate to at most `max` UTF-8 bytes without splitting a character. */
function truncateUtf8(s: string, max: number): string {
  let out = "";
  let bytes = 0;
  for (const ch of s) {
    const b = Buffer.byteLength(ch);
    if (bytes + b > max) break;
    out += ch;
    bytes += b;
  }
  return out;
}

/**
 * A file name safe to store: no directories (`../`, `/`, `\`), no control or bidi characters,
 * no leading dots (hidden files, `..`), no characters Windows refuses, at most
 * MAX_ATTACHMENT_NAME_BYTES bytes with the extension kept. Never empty.
 */
export function safeAttachmentName(raw: string | null | undefined, fallback = "attachment"): string {
  let name = (raw ?? "").normalize("NFC").replace(unsafeChars, "");
  name = name.split(/[/\\]/).pop() ?? ""; // keep only the last path segment
  name = name.replace(/[<>:"|?*]/g, "_").replace(/\s+/g, " ");
  name = name.replace(/^[\s.]+/, "").replace(/[\s.]+$/, "");
  if (!name) name = fallback;
  if (reservedWindows.test(name)) name = `_${name}`;
  if (Buffer.byteLength(name) > MAX_ATTACHMENT_NAME_BYTES) {
    const dot = name.lastIndexOf(".");
    const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : "";
    name = truncateUtf8(name.slice(0, name.length - ext.length), MAX_ATTACHMENT_NAME_BYTES - Buffer.byteLength(ext)).trimEnd() + ext;
  }
  return name;
}

/**
 * Makes names unique within one message, case-insensitively (case-insensitive file systems):
 * the second "report.pdf" becomes "report (2).pdf".
 */
export function uniqueNamer(): (safeName: string) => string {
  const taken = new Set<string>();
  return (name) => {
    let candidate = name;
    const dot = name.lastIndexOf(".");
    const stem = dot > 0 ? name.slice(0, dot) : name;
    const ext = dot > 0 ? name.slice(dot) : "";
    for (let n = 2; taken.has(candidate.toLowerCase()); n++) {
      const suffix = ` (${n})`;
      candidate = truncateUtf8(stem, MAX_ATTACHMENT_NAME_BYTES - Buffer.byteLength(suffix + ext)) + suffix + ext;
    }
    taken.add(candidate.toLowerCase());
    return candidate;
  };
}
