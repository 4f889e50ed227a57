// Property-based tests (fast-check) for the file paths attackers choose: random segments made of
// "..", backslashes, NUL and control characters, look-alike Unicode, trailing dots and spaces
// and percent-encodings. Whatever comes in, a path never escapes the bucket, the server never
// answers 500, and a forbidden name is never stored.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { posix } from "node:path";
import { ApiError } from "../../src/core/errors";
import { forbiddenReason } from "../../src/features/files/forbidden";
import { normalizePath } from "../../src/features/files/paths";
import { ExecutableScanner, scanBytes } from "../../src/features/files/sniff";
import { isExcludedFromPublish } from "../../src/features/publish/exclusions";
import { parseRequestPath } from "../../src/sites/paths";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";
import { declared, newBucket, putBytes } from "../helpers/uploads";

/** Pieces attackers combine into segments. */
const piece = fc.oneof(
  fc.constantFrom(
    "..",
    ".",
    "...",
    "%2e",
    "%2E%2e",
    "%252e%252e",
    "%2f",
    "%5c",
    "%00",
    "\\",
    "\u0000",
    "\u202e",
    "\u200b",
    "\uff0e\uff0e",
    "\uff0f",
    " ",
    ".",
    "exe",
    ".exe",
    ".env",
    ".git",
    "_email",
    "id_rsa",
    "evil",
    "index.html",
    "C:",
    "::$DATA",
    "%",
    "%zz",
    "é",
    "e\u0301",
    "😀",
    "\t",
    "\n",
  ),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: "grapheme", maxLength: 4 }),
);
const segment = fc.array(piece, { minLength: 1, maxLength: 4 }).map((xs) => xs.join(""));
const rawPath = fc.oneof(
  fc.array(segment, { minLength: 1, maxLength: 5 }).map((xs) => xs.join("/")),
  fc.array(segment, { minLength: 1, maxLength: 3 }).map((xs) => `/${xs.join("\\")}`),
  fc.string({ maxLength: 40 }),
);

/** The invariants of an accepted bucket path. */
function assertSafe(path: string) {
  expect(path.length).toBeGreaterThan(0);
  expect(path.startsWith("/")).toBe(false);
  expect(/[\\\u0000-\u001f]/.test(path)).toBe(false);
  for (const s of path.split("/")) {
    expect(s).not.toBe("");
    expect(s === "." || s === "..").toBe(false);
    expect(/[. ]$/.test(s)).toBe(false);
  }
  // Resolved under a bucket root, it stays under that root (also after one more URL decode).
  for (const p of [path, safeDecode(path)]) {
    expect(posix.resolve("/bucket", p).startsWith("/bucket/")).toBe(true);
  }
}
function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

describe("normalizePath (pure, many cases)", () => {
  test("accepts only safe, idempotent keys and refuses the rest with INVALID_PATH", () => {
    fc.assert(
      fc.property(rawPath, (raw) => {
        let path: string;
        try {
          path = normalizePath(raw);
        } catch (e) {
          expect(e).toBeInstanceOf(ApiError);
          expect((e as ApiError).code).toBe("INVALID_PATH");
          return;
        }
        assertSafe(path);
        expect(normalizePath(path)).toBe(path);
      }),
      { numRuns: 5000 },
    );
  });

  test("a name that is forbidden once Windows trims it is forbidden (or refused) here", () => {
    const ext = fc.constantFrom("exe", "bat", "msi", "ps1", "pem", "key", "env");
    const tail = fc.array(fc.constantFrom(".", " "), { minLength: 1, maxLength: 4 }).map((x) => x.join(""));
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9_-]{1,12}$/), ext, tail, (stem, e, t) => {
        const name = `${stem}.${e}${t}`;
        expect(forbiddenReason(name)).not.toBeNull();
        expect(() => normalizePath(name)).toThrow();
        expect(isExcludedFromPublish(name)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});

describe("site request paths", () => {
  test("parseRequestPath never yields a traversal, separator or control character", () => {
    fc.assert(
      fc.property(rawPath, (raw) => {
        const r = parseRequestPath(`/${raw}`);
        if (!r.ok) return;
        for (const s of r.path.split("/").filter(Boolean)) {
          expect(s === "." || s === "..").toBe(false);
          expect(/[\\\u0000-\u001f]/.test(s)).toBe(false);
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe("executable scanner", () => {
  test("finds a PE header at any offset however the body is split into chunks", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0x40, max: 20_000 }), fc.array(fc.integer({ min: 1, max: 5000 }), { maxLength: 12 }), fc.boolean(), (at, cuts, real) => {
        const b = new Uint8Array(at + 100);
        b.set([0x4d, 0x5a]);
        new DataView(b.buffer).setUint32(0x3c, at, true);
        b.set(real ? [0x50, 0x45, 0, 0] : [0x50, 0x45, 0, 1], at);
        const s = new ExecutableScanner();
        let found: string | null = null;
        let pos = 0;
        for (const c of [...cuts, b.byteLength]) {
          if (pos >= b.byteLength) break;
          found ??= s.push(b.subarray(pos, Math.min(b.byteLength, pos + c)));
          pos += c;
        }
        found ??= s.finish();
        expect(found).toBe(real ? "Windows executable" : null);
        expect(scanBytes(b)).toBe(found);
      }),
      { numRuns: 500 },
    );
  });
});

describe("over HTTP: declare, PUT, attach", () => {
  let t: TestPier;
  let u: TestUser;
  let bucket: string;
  beforeAll(async () => {
    t = await startTestPier({ uploadRateLimitPerMinute: 1_000_000 });
    u = await t.user({ plan: "pro" });
    bucket = await newBucket(t, u.key, "Fuzzed paths");
  });
  afterAll(() => t.stop());

  test("never a 500; what is stored is a safe, allowed key, and exactly the key answered", async () => {
    await fc.assert(
      fc.asyncProperty(rawPath, async (raw) => {
        const bytes = new TextEncoder().encode(`content of ${raw}`);
        const d = await t.api("POST", "/api/v1/direct_uploads", {
          key: u.key,
          body: { bucket_id: bucket, path: raw, blob: declared({ path: raw, bytes, contentType: "text/plain" }) },
        });
        expect(d.status).toBeLessThan(500);
        if (d.status !== 201) {
          expect(d.status).toBe(422);
          expect(["INVALID_PATH", "FORBIDDEN_FILE_TYPE", "VALIDATION_FAILED"]).toContain(d.body.error.code);
          return;
        }
        const path: string = d.body.data.path;
        assertSafe(path);
        expect(forbiddenReason(path)).toBeNull();
        if (d.body.data.upload_required) expect((await putBytes(d.body.data.upload, bytes)).status).toBe(200);
        const a = await t.api("POST", `/api/v1/buckets/${bucket}/files`, { key: u.key, body: { signed_blob_id: d.body.data.signed_blob_id } });
        if (a.status === 409) {
          // An earlier run stored a file where this path needs a folder, or the reverse (D302):
          // only a clash that really exists in the bucket may refuse it.
          expect(a.body.error.code).toBe("PATH_CONFLICT");
          const other: string = a.body.error.details.conflicting_path;
          expect(other.startsWith(`${path}/`) || path.startsWith(`${other}/`)).toBe(true);
          const listed = await t.api("GET", `/api/v1/buckets/${bucket}/files/by_path?path=${encodeURIComponent(other)}`, { key: u.key });
          expect(listed.status).toBe(302);
          return;
        }
        expect([a.status, a.body.data?.file?.path]).toEqual([201, path]);
      }),
      { numRuns: 150 },
    );
    // Nothing outside the bucket's data: every stored key is still a safe key.
    const all = (await t.api("GET", `/api/v1/buckets/${bucket}/files?limit=1000`, { key: u.key })).body.data.files;
    for (const f of all) {
      assertSafe(f.path);
      expect(forbiddenReason(f.path)).toBeNull();
    }
  });
});
