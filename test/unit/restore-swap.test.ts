// The swap that ends a restore: a rename failing midway puts the data dir back as it was, and a
// finished swap leaves no old file (the old WAL above all) and no hidden folder behind.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { rename } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { swapIn } from "../../src/features/operations/restore-swap";

const scratch = mkdtempSync(join(tmpdir(), "pier-restore-swap-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile()) out[relative(dir, join(e.parentPath, e.name))] = readFileSync(join(e.parentPath, e.name), "utf8");
  return out;
}

function setUp(name: string): { dataDir: string; staging: string } {
  const dataDir = join(scratch, name);
  const staging = join(dataDir, ".restore-test");
  mkdirSync(join(dataDir, "blobs", "sha256"), { recursive: true });
  mkdirSync(join(dataDir, "https-tls"));
  writeFileSync(join(dataDir, "pier.db"), "old db");
  writeFileSync(join(dataDir, "pier.db-wal"), "old wal");
  writeFileSync(join(dataDir, "blobs", "sha256", "old"), "old blob");
  writeFileSync(join(dataDir, "secret.key"), "old key");
  writeFileSync(join(dataDir, "https-tls", "cert.pem"), "cert");
  mkdirSync(join(staging, "blobs", "sha256"), { recursive: true });
  writeFileSync(join(staging, "pier.db"), "new db");
  writeFileSync(join(staging, "blobs", "sha256", "new"), "new blob");
  return { dataDir, staging };
}

test("a rename failing midway puts the old database, WAL and blobs back", async () => {
  const { dataDir, staging } = setUp("fails");
  const before = tree(dataDir);
  let calls = 0;
  // The old ones are moved aside (3 renames), the new blobs placed (1); the database fails.
  const failing = {
    rename: async (from: string, to: string) => {
      if (++calls === 5) throw Object.assign(new Error("EIO: i/o error, rename"), { code: "EIO" });
      await rename(from, to);
    },
  };
  await expect(swapIn(staging, dataDir, failing)).rejects.toThrow("EIO");
  expect(tree(dataDir)).toEqual(before);
  expect(readdirSync(dataDir).filter((n) => n.startsWith(".replaced"))).toEqual([]);
});

test("a finished swap replaces the database and blobs, drops the old WAL, keeps the key and certificates", async () => {
  const { dataDir, staging } = setUp("works");
  await swapIn(staging, dataDir);
  rmSync(staging, { recursive: true });
  expect(tree(dataDir)).toEqual({
    "pier.db": "new db",
    "blobs/sha256/new": "new blob",
    // The backup had no key: the data dir's stays.
    "secret.key": "old key",
    "https-tls/cert.pem": "cert",
  });
  expect(existsSync(join(dataDir, "pier.db-wal"))).toBe(false);
  expect(readdirSync(dataDir).filter((n) => n.startsWith("."))).toEqual([]);
});
