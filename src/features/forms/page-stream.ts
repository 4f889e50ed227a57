// The form macros of a page too large to read whole (D269), filled as the page streams through:
// each {{PIER_FORM}} or {{PIER_FORM:<name>}} is replaced by what `fill` gives, and what `end`
// gives is added after the last byte (a page read whole gets it before its `</body>`; after the
// end, the HTML parser still puts it in the body). The macros are ASCII, so the bytes are
// searched as they are: no UTF-8 decoding, and at most a macro's length is carried between chunks.

const PREFIX = new TextEncoder().encode("{{PIER_FORM");
const OPEN = PREFIX[0]!;
const COLON = 0x3a;
const CLOSE = 0x7d;
/** Longer names are no macro (MACRO in widget.ts has the same bound; form names are at most 8 letters). */
export const MACRO_NAME_MAX = 32;

const isLower = (b: number) => b >= 0x61 && b <= 0x7a;

/** Where `buf` holds PREFIX from `from` on, or -1; only whole prefixes. */
function indexOfPrefix(buf: Uint8Array, from: number): number {
  for (let i = buf.indexOf(OPEN, from); i !== -1 && i + PREFIX.length <= buf.length; i = buf.indexOf(OPEN, i + 1)) {
    let k = 1;
    while (k < PREFIX.length && buf[i + k] === PREFIX[k]) k++;
    if (k === PREFIX.length) return i;
  }
  return -1;
}

/** The start of the shortest tail of `buf` (from `from` on) that could begin a prefix cut by the chunk's end; buf.length if none. */
function partialPrefixAt(buf: Uint8Array, from: number): number {
  for (let i = Math.max(from, buf.length - PREFIX.length + 1); i < buf.length; i++) {
    let k = 0;
    while (i + k < buf.length && buf[i + k] === PREFIX[k]) k++;
    if (i + k === buf.length) return i;
  }
  return buf.length;
}

/**
 * The macro at `i` (where PREFIX starts): its end and name (undefined: every form), "none" when
 * the bytes there are no macro, or "more" when the chunk ends before that is known.
 */
function macroAt(buf: Uint8Array, i: number): { end: number; name: string | undefined } | "none" | "more" {
  let j = i + PREFIX.length;
  let name: string | undefined;
  if (j >= buf.length) return "more";
  if (buf[j] === COLON) {
    const start = ++j;
    while (j < buf.length && j - start <= MACRO_NAME_MAX && isLower(buf[j]!)) j++;
    if (j - start > MACRO_NAME_MAX) return "none";
    if (j >= buf.length) return "more";
    if (j === start) return "none";
    name = String.fromCharCode(...buf.subarray(start, j));
  }
  if (j + 1 >= buf.length) return buf[j] === CLOSE ? "more" : "none";
  return buf[j] === CLOSE && buf[j + 1] === CLOSE ? { end: j + 2, name } : "none";
}

/** A transform that fills a page's form macros as it passes (see the file's header). */
export function macroStream(fill: (name: string | undefined) => string, end: () => string): TransformStream<Uint8Array, Uint8Array> {
  const encoder = new TextEncoder();
  let carry: Uint8Array | null = null;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, out) {
      let buf = chunk;
      if (carry !== null) {
        buf = new Uint8Array(carry.length + chunk.length);
        buf.set(carry);
        buf.set(chunk, carry.length);
        carry = null;
      }
      let pos = 0;
      for (;;) {
        const i = indexOfPrefix(buf, pos);
        if (i === -1) {
          const keep = partialPrefixAt(buf, pos);
          if (keep > pos) out.enqueue(buf.subarray(pos, keep));
          if (keep < buf.length) carry = buf.slice(keep);
          return;
        }
        if (i > pos) out.enqueue(buf.subarray(pos, i));
        const m = macroAt(buf, i);
        if (m === "more") {
          carry = buf.slice(i);
          return;
        }
        if (m === "none") {
          // Not a macro: its first byte goes out as it is, and the search goes on after it.
          out.enqueue(buf.subarray(i, i + 1));
          pos = i + 1;
          continue;
        }
        const filled = fill(m.name);
        if (filled !== "") out.enqueue(encoder.encode(filled));
        pos = m.end;
      }
    },
    flush(out) {
      // A macro cut off by the end of the page is no macro: its bytes go out as they are.
      if (carry !== null) out.enqueue(carry);
      const addition = end();
      if (addition !== "") out.enqueue(encoder.encode(addition));
    },
  });
}
