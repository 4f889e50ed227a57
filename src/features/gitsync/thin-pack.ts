// Thin packs for fetches. isomorphic-git never asks for one (canonical git cannot read a thin
// pack stored as it comes; isomorphic-git reads the missing bases from the store), and without
// one a server answering a depth-1 fetch sends the tip's whole tree again, unchanged files
// included. With it, the server sends only the tip's new objects, as deltas against what the
// store holds: a fetch brings the branch's newest state and no version in between (D250).
// Protocol: https://git-scm.com/docs/protocol-capabilities#_thin_pack
const enc = new TextEncoder();

/** Whether an upload-pack advertisement (GET info/refs) offers thin packs. */
export function advertisesThinPack(body: Uint8Array): boolean {
  // The capabilities follow a NUL on the first ref line, within the first few hundred bytes.
  const head = Buffer.from(body.buffer, body.byteOffset, Math.min(body.byteLength, 65536)).toString("latin1");
  const nul = head.indexOf("\0");
  if (nul < 0) return false;
  const end = head.indexOf("\n", nul);
  return head
    .slice(nul + 1, end < 0 ? undefined : end)
    .split(" ")
    .includes("thin-pack");
}

/** An upload-pack request asking for a thin pack: "thin-pack" added to the first want line's capabilities. */
export function askThinPack(body: Uint8Array): Uint8Array {
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const len = Number.parseInt(buf.toString("latin1", 0, 4), 16);
  if (!Number.isFinite(len) || len <= 4 || len > buf.length) return body;
  const line = buf.toString("latin1", 4, len);
  if (!line.startsWith("want ") || line.includes(" thin-pack")) return body;
  const text = `${line.replace(/\n$/, "")} thin-pack\n`;
  return Buffer.concat([enc.encode((text.length + 4).toString(16).padStart(4, "0") + text), buf.subarray(len)]);
}
