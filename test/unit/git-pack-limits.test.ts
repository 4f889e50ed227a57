// The check of a fetched pack against git sync's limits, on packs built byte by byte as
// https://git-scm.com/docs/pack-format describes: object headers carry inflated sizes, and an
// object longer than its header must not slip past the check (isomorphic-git would inflate it
// whole). test/integration/gitsync/limits.test.ts covers real packs from git http-backend.
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { deflateSync } from "node:zlib";
import { SyncFailure } from "../../src/features/gitsync/failure";
import { checkPackResponse, type SyncLimits } from "../../src/features/gitsync/limits";

const MiB = 1048576;
const limits = (): SyncLimits => ({ fileBytes: MiB, totalBytes: 2 * MiB, inflated: 0, maxPaths: 100, paths: 0 });

/** A pack entry header: type in bits 4-6 of the first byte, the size in 4 + 7k bits. */
function header(type: number, size: number): Buffer {
  const bytes = [((type & 7) << 4) | (size & 15)];
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes[bytes.length - 1]! |= 0x80;
    bytes.push(rest & 0x7f);
    rest = Math.floor(rest / 128);
  }
  return Buffer.from(bytes);
}

function pack(objects: { declared: number; content: Buffer }[]): Buffer {
  const head = Buffer.alloc(12);
  head.write("PACK", 0, "latin1");
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(objects.length, 8);
  const body = Buffer.concat([head, ...objects.flatMap((o) => [header(3, o.declared), deflateSync(o.content)])]);
  return Buffer.concat([body, createHash("sha1").update(body).digest()]);
}

/** As upload-pack answers: "NAK", then the pack in side-band channel 1, 65515-byte pieces. */
function sideBand(p: Buffer): Buffer {
  const line = (payload: Buffer) => Buffer.concat([Buffer.from((payload.length + 4).toString(16).padStart(4, "0"), "latin1"), payload]);
  const parts = [line(Buffer.from("NAK\n"))];
  for (let i = 0; i < p.length; i += 65515) parts.push(line(Buffer.concat([Buffer.from([1]), p.subarray(i, i + 65515)])));
  return Buffer.concat([...parts, Buffer.from("0000", "latin1")]);
}

const failureOf = (body: Buffer, l = limits()) => {
  try {
    checkPackResponse(body, l);
    return null;
  } catch (e) {
    return e instanceof SyncFailure ? e.code : String(e);
  }
};

test("objects within the limits pass, their inflated sizes counted", () => {
  const l = limits();
  expect(
    failureOf(
      sideBand(
        pack([
          { declared: 3000, content: Buffer.alloc(3000) },
          { declared: 5, content: Buffer.from("hello") },
        ]),
      ),
      l,
    ),
  ).toBeNull();
  expect(l.inflated).toBe(3005);
});

test("an object declared over the file cap fails before it is inflated: file_too_large", () => {
  expect(failureOf(sideBand(pack([{ declared: 2 * MiB, content: Buffer.alloc(2 * MiB) }])))).toBe("file_too_large");
});

test("objects whose inflated sizes add up past the total fail: repository_too_large", () => {
  const third = Math.floor(0.9 * MiB);
  expect(failureOf(sideBand(pack([0, 1, 2].map(() => ({ declared: third, content: Buffer.alloc(third) })))))).toBe("repository_too_large");
});

test("an object longer than its header says fails (it would otherwise be inflated whole later)", () => {
  expect(failureOf(sideBand(pack([{ declared: 10, content: Buffer.alloc(4 * MiB) }])))).toBe("git_error");
  expect(failureOf(pack([{ declared: 10, content: Buffer.alloc(4 * MiB) }]))).toBe("git_error"); // a bare pack, no side-band
});
