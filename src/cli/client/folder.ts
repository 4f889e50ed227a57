// A local folder as `pier publish`, `preview` and `push` send it: every file hashed (SHA-256 and
// MD5, as the upload descriptors want), then the bytes Pier asked for PUT 12 at a time with one
// progress line on stderr. Sizes are always shown the same way (humanBytes).
import { closeSync, openSync, readdirSync, readSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { isExcludedFromPublish } from "../../features/publish/exclusions";
import type { PierClient } from "./http";

/** Files PUT in parallel; the spec's reference clients use 12. */
export const SUB_BATCH = 12;

export interface LocalFile {
  path: string;
  abs: string;
  size: number;
  sha256: string;
  md5: string;
  contentType: string;
}

const CHUNK = 1024 * 1024;

/**
 * Size and hashes of a file read 1 MiB at a time: a file may be up to 10 GB (the server's limit),
 * and reading it whole would hold all of it in memory.
 */
function hashFile(abs: string): { size: number; sha256: string; md5: string } {
  const sha256 = new Bun.CryptoHasher("sha256");
  const md5 = new Bun.CryptoHasher("md5");
  const buf = Buffer.allocUnsafe(CHUNK);
  const fd = openSync(abs, "r");
  let size = 0;
  try {
    for (let n = readSync(fd, buf, 0, CHUNK, null); n > 0; n = readSync(fd, buf, 0, CHUNK, null)) {
      const chunk = buf.subarray(0, n);
      sha256.update(chunk);
      md5.update(chunk);
      size += n;
    }
  } finally {
    closeSync(fd);
  }
  return { size, sha256: sha256.digest("hex"), md5: md5.digest("base64") };
}

/**
 * Every file under `dir` worth sending (dot-git, node_modules and never-published files skipped).
 * Symbolic links are never followed (one may point outside the folder, at /etc/passwd or ~/.ssh);
 * their paths go to `links` so the command can say what it left out (D292).
 */
export function scanFolder(dir: string, links: string[] = []): LocalFile[] {
  const out: LocalFile[] = [];
  const walk = (d: string) => {
    for (const ent of readdirSync(d, { withFileTypes: true })) {
      const abs = join(d, ent.name);
      if (ent.isDirectory()) {
        if (ent.name === ".git" || ent.name === "node_modules") continue;
        walk(abs);
      } else if (ent.isSymbolicLink()) {
        links.push(relative(dir, abs).split(sep).join("/"));
      } else if (ent.isFile()) {
        const path = relative(dir, abs).split(sep).join("/");
        if (isExcludedFromPublish(path) || ent.name === ".DS_Store") continue;
        out.push({ path, abs, ...hashFile(abs), contentType: Bun.file(abs).type || "application/octet-stream" });
      }
    }
  };
  walk(dir);
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** The line naming the links scanFolder skipped (the first 5), else null. */
export function skippedLinksLine(links: string[]): string | null {
  if (links.length === 0) return null;
  const named = [...links].sort().slice(0, 5).join(", ") + (links.length > 5 ? ` and ${links.length - 5} more` : "");
  return `Skipped ${links.length} symbolic link${links.length === 1 ? "" : "s"} (links are not followed): ${named}.`;
}

/** One unit style everywhere (the server's deploy summary uses the same): 1024-based, one decimal. */
export function humanBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

/** "Uploading 3 of 12 files: 3.4 MB of 12.0 MB" */
export function progressLine(done: number, total: number, bytes: number, totalBytes: number): string {
  return `Uploading ${done} of ${total} file${total === 1 ? "" : "s"}: ${humanBytes(bytes)} of ${humanBytes(totalBytes)}`;
}

type Upload = { path: string; upload: { url: string; headers: Record<string, string> } };

/** PUT every upload (12 at a time); returns the bytes sent. A terminal gets one redrawn line. */
export async function uploadAll(
  client: PierClient,
  uploads: Upload[],
  byPath: Map<string, LocalFile>,
  write = (s: string) => process.stderr.write(s),
): Promise<number> {
  if (uploads.length === 0) return 0;
  const tty = process.stderr.isTTY;
  const totalBytes = uploads.reduce((n, u) => n + (byPath.get(u.path)?.size ?? 0), 0);
  let done = 0,
    bytes = 0;
  const show = () =>
    write(tty ? `\r${progressLine(done, uploads.length, bytes, totalBytes)}\x1b[K` : `${progressLine(done, uploads.length, bytes, totalBytes)}\n`);
  show();
  for (let i = 0; i < uploads.length; i += SUB_BATCH) {
    await Promise.all(
      uploads.slice(i, i + SUB_BATCH).map(async (u) => {
        const f = byPath.get(u.path);
        if (!f) throw new Error(`the server asked for ${u.path}, which is not in the folder`);
        // Bun.file streams the bytes from disk: 12 large files at once must not be 12 in memory.
        await client.put(u.upload, Bun.file(f.abs));
        done++;
        bytes += f.size;
        // Without a terminal, one line per sub-batch keeps logs short.
        if (tty || done % SUB_BATCH === 0 || done === uploads.length) show();
      }),
    );
  }
  if (tty) write("\n");
  return bytes;
}
