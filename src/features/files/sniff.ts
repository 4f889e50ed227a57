// "Uploaded content found forbidden is removed": executables renamed to innocent names are
// recognised by their signatures while the body streams in, and the upload is refused before
// anything is stored. Only unambiguous signatures, wherever the format puts them:
// - ELF and Mach-O (thin and universal): magic at offset 0;
// - Windows PE: "MZ" at 0 and "PE\0\0" at the offset stored at 0x3c, which may lie anywhere in
//   the file (a stub of several KiB pushes it past any fixed-size head);
// - Apple disk images: the "koly" trailer in the LAST 512 bytes.
// The scan is one pass with constant memory (a 64-byte head, a 4-byte window, a 512-byte tail).
// Archives are not opened: a zip that contains an .exe is an archive, not an executable.
import { ApiError } from "../../core/errors";

const HEAD_BYTES = 64;
const TAIL_BYTES = 512;

const isPeSignature = (b: Uint8Array) => b[0] === 0x50 && b[1] === 0x45 && b[2] === 0x00 && b[3] === 0x00;

const MACHO_MAGICS = [0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe];
// Universal (fat) Mach-O. The same magic opens Java class files, also executables; a fat
// header's architecture count is small, a class file's version field is large (>= 45).
const FAT_MAGICS = [0xcafebabe, 0xbebafeca, 0xcafebabf];

/**
 * The kind of executable the first bytes of a file announce, or null. Sees a PE header only
 * when it lies within `head`: the streaming ExecutableScanner finds it anywhere.
 */
export function executableKind(head: Uint8Array): string | null {
  const u32 = (o: number) => (head.byteLength >= o + 4 ? new DataView(head.buffer, head.byteOffset + o, 4).getUint32(0, false) : -1);
  if (head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46) return "ELF executable";
  const m = u32(0);
  if (MACHO_MAGICS.includes(m)) return "Mach-O executable";
  if (FAT_MAGICS.includes(m)) return u32(4) > 0 && u32(4) < 45 ? "Mach-O universal executable" : "Java class file";
  const pe = peHeaderOffset(head);
  if (pe !== null && pe + 4 <= head.byteLength && isPeSignature(head.subarray(pe, pe + 4))) return "Windows executable";
  return null;
}

/** Where a PE header must be ("MZ" head with e_lfanew), or null when the file is not MZ. */
export function peHeaderOffset(head: Uint8Array): number | null {
  if (head[0] !== 0x4d || head[1] !== 0x5a || head.byteLength < 0x40) return null;
  return new DataView(head.buffer, head.byteOffset + 0x3c, 4).getUint32(0, true);
}

const isKoly = (tail: Uint8Array) => tail.byteLength === TAIL_BYTES && tail[0] === 0x6b && tail[1] === 0x6f && tail[2] === 0x6c && tail[3] === 0x79;

/** Incremental scanner: feed chunks in order, then `finish()`; each returns a kind or null. */
export class ExecutableScanner {
  private head = new Uint8Array(0);
  private offset = 0;
  private peAt: number | null = null;
  private peBytes = new Uint8Array(4);
  private peSeen = 0;
  private tail = new Uint8Array(0);

  push(chunk: Uint8Array): string | null {
    if (this.head.byteLength < HEAD_BYTES) {
      const merged = new Uint8Array(Math.min(HEAD_BYTES, this.head.byteLength + chunk.byteLength));
      merged.set(this.head);
      merged.set(chunk.subarray(0, merged.byteLength - this.head.byteLength), this.head.byteLength);
      this.head = merged;
      if (this.head.byteLength === HEAD_BYTES) {
        const kind = executableKind(this.head);
        if (kind) return kind;
        this.peAt = peHeaderOffset(this.head);
        // e_lfanew inside the head: those bytes have passed already.
        while (this.peAt !== null && this.peSeen < 4 && this.peAt + this.peSeen < HEAD_BYTES) this.peBytes[this.peSeen] = this.head[this.peAt + this.peSeen++]!;
      }
    }
    // Copy the 4 bytes at e_lfanew as they pass by (they may span chunks).
    if (this.peAt !== null && this.peSeen < 4) {
      for (let i = Math.max(this.peAt + this.peSeen, this.offset); i < this.peAt + 4 && i < this.offset + chunk.byteLength; i++) {
        this.peBytes[this.peSeen++] = chunk[i - this.offset]!;
      }
      if (this.peSeen === 4 && isPeSignature(this.peBytes)) return "Windows executable";
    }
    this.offset += chunk.byteLength;
    this.keepTail(chunk);
    return null;
  }

  finish(): string | null {
    if (this.head.byteLength < HEAD_BYTES) {
      const kind = executableKind(this.head);
      if (kind) return kind;
    }
    return isKoly(this.tail) ? "Apple disk image" : null;
  }

  private keepTail(chunk: Uint8Array): void {
    if (chunk.byteLength >= TAIL_BYTES) {
      this.tail = chunk.slice(chunk.byteLength - TAIL_BYTES);
      return;
    }
    const keep = Math.min(this.tail.byteLength, TAIL_BYTES - chunk.byteLength);
    const next = new Uint8Array(keep + chunk.byteLength);
    next.set(this.tail.subarray(this.tail.byteLength - keep));
    next.set(chunk, keep);
    this.tail = next;
  }
}

/** The kind of executable a whole byte string is, or null (for bytes already in memory). */
export function scanBytes(bytes: Uint8Array): string | null {
  const s = new ExecutableScanner();
  return s.push(bytes) ?? s.finish();
}

/**
 * Refuse bytes already in memory that are an executable: writes that do not stream through the
 * storage endpoint (text writes, appends) get the same check as uploads.
 */
export function assertNotExecutable(bytes: Uint8Array, path: string): void {
  const kind = scanBytes(bytes);
  if (kind) refuse(kind, path);
}

/** Pass a body through unchanged, refusing it as soon as it shows an executable signature. */
export async function* refuseExecutables(body: AsyncIterable<Uint8Array>, path: string): AsyncIterable<Uint8Array> {
  const scanner = new ExecutableScanner();
  for await (const chunk of body) {
    const kind = scanner.push(chunk);
    if (kind) refuse(kind, path);
    yield chunk;
  }
  const kind = scanner.finish();
  if (kind) refuse(kind, path);
}

function refuse(kind: string, path: string): never {
  throw new ApiError("FORBIDDEN_FILE_TYPE", `${path}: the content is a ${kind}; executables are not accepted. Nothing was stored.`, {
    path,
    reason: "executable_content",
  });
}
