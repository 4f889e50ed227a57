import type { Deps } from "../../core/context";
import type { FileRow } from "./commit";
import { baseName } from "./paths";

export interface FileLockView {
  message: string;
  expires_at: string;
  held_by_you: boolean;
}

export function presentFile(deps: Deps, f: FileRow, lock?: FileLockView | null) {
  return {
    id: f.id,
    bucket_id: f.bucketId,
    path: f.path,
    name: baseName(f.path),
    byte_size: f.size,
    content_type: f.contentType,
    checksum: f.md5,
    sha256: f.sha256,
    version_count: f.versionCount,
    bucket_version: f.bucketVersion,
    created_at: f.createdAt,
    updated_at: f.updatedAt,
    download_url: `${deps.urls.baseUrl}/api/v1/buckets/${f.bucketId}/files/by_path?path=${encodeURIComponent(f.path)}`,
    lock: lock ?? null,
  };
}

/** The answer to a write of one file's content (append, MCP write): the file and the version it made. */
export function presentFileWrite(deps: Deps, f: FileRow, versionId: string | null) {
  return { file: presentFile(deps, f), version_id: versionId };
}
