// "Uploaded content found forbidden is removed": executables renamed to innocent names are
// recognised by their magic numbers while the body streams in, and the upload is refused
// before anything is stored. Only unambiguous signatures: PE (MZ + "PE\0\0"), ELF, Mach-O.
import { ApiError } from "../../core/errors";

const SNIFF_BYTES = 4096;

export function executableKind(head: Uint8Array): string | null {
  const u32 = (o: number) => (head.byteLength >= o + 4 ? new DataView(head.buffer, head.byteOffset + o, 4).getUint32(0, false) : -1);
  if (head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46) return "ELF executable";
  const m = u32(0);
  if ([0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe].includes(m)) return "Mach-O executable";
  if (head[0] === 0x4d && head[1] === 0x5a && head.byteLength >= 0x40) {
    const peOffset = new DataView(head.buffer, head.byteOffset + 0x3c, 4).getUint32(0, true);
    if (peOffset + 4 <= head.byteLength && u32(peOffset) === 0x50450000) return "Windows executable";
  }
  return null;
}

/** Pass a body through unchanged, refusing it once its first bytes show an executable. */
export async function* refuseExecutables(body: AsyncIterable<Uint8Array>, path: string): AsyncIterable<Uint8Array> {
  let head = new Uint8Array(0);
  let checked = false;
  for await (const chunk of body) {
    if (!checked) {
      const merged = new Uint8Array(head.byteLength + chunk.byteLength);
      merged.set(head);
      merged.set(chunk, head.byteLength);
      head = merged.subarray(0, SNIFF_BYTES);
      if (head.byteLength >= SNIFF_BYTES) {
        checked = true;
        check(head, path);
      }
    }
    yield chunk;
  }
  if (!checked) check(head, path);
}

function check(head: Uint8Array, path: string): void {
  const kind = executableKind(head);
  if (kind) throw new ApiError("FORBIDDEN_FILE_TYPE", `${path}: the content is a ${kind}; executables are not accepted. Nothing was stored.`, { path, reason: "executable_content" });
}
