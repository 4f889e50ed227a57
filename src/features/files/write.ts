// Writing files from bytes Pier already holds (inbound email, publishing, templates, append):
// store the blobs first (outside any transaction), then commit them all as one version.
import type { Deps } from "../../core/context";
import { assertAllowedFile, normalizeContentType } from "./forbidden";
import { assertPathsUnlocked, bucketForWrite, commitChanges, type CommitOptions, type CommitResult, type Writer } from "./commit";
import { normalizePath } from "./paths";
import { assertNotExecutable } from "./sniff";

export interface FileBytes {
  path: string;
  bytes: Uint8Array | string;
  contentType?: string;
  /** Only over what the writer read (Change.basedOn): null for a new file, else the SHA-256 it had. */
  basedOn?: string | null;
}

/**
 * Write several files into a bucket as ONE new version. `writer` is the calling actor or
 * `{ kind: "system", name: "inbound-mail" }` for Pier's own features. Paths are normalized
 * and forbidden types and executable content refused exactly as for uploads.
 */
export async function writeFiles(deps: Deps, writer: Writer, bucketId: string, input: FileBytes[], opts: Partial<CommitOptions> = {}): Promise<CommitResult> {
  const prepared = input.map((f) => {
    const path = normalizePath(f.path);
    const contentType = normalizeContentType(f.contentType ?? guessContentType(path));
    assertAllowedFile(path, contentType);
    const bytes = typeof f.bytes === "string" ? new TextEncoder().encode(f.bytes) : f.bytes;
    assertNotExecutable(bytes, path);
    return { path, contentType, bytes, basedOn: f.basedOn };
  });
  // Refused writers store nothing: the commit checks again in its transaction, but a blob put
  // first would stay on disk until the collector's grace ends (a day), for anyone to fill.
  bucketForWrite(deps, writer, bucketId, opts, deps.db);
  assertPathsUnlocked(
    deps,
    writer,
    bucketId,
    prepared.map((f) => f.path),
    deps.db,
  );
  const changes = [];
  for (const f of prepared) {
    const info = await deps.blobs.putBytes(f.bytes);
    changes.push({ path: f.path, blob: { sha256: info.sha256, size: info.size, md5: info.md5, contentType: f.contentType }, basedOn: f.basedOn });
  }
  return commitChanges(deps, writer, bucketId, changes, { kind: "write", ...opts });
}

/** Content type from the file name (Bun's MIME table), for writers that do not know it. */
export function guessContentType(path: string): string {
  const t = Bun.file(path).type; // looks at the extension only; the file need not exist
  return t || "application/octet-stream";
}
