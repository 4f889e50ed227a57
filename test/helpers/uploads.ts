// Client-side upload helpers, doing exactly what a client does: hash, declare, PUT with the
// returned headers (no bearer), finalize.
import { createHash } from "node:crypto";
import { createBucket } from "./buckets";
import type { TestPier } from "./pier";

export interface LocalFile {
  path: string;
  bytes: Uint8Array;
  contentType: string;
}

export const textFile = (path: string, text: string, contentType = "text/plain; charset=utf-8"): LocalFile => ({
  path,
  bytes: new TextEncoder().encode(text),
  contentType,
});

export function declared(f: LocalFile) {
  return {
    path: f.path,
    name: f.path.split("/").pop(),
    byte_size: f.bytes.byteLength,
    checksum: createHash("md5").update(f.bytes).digest("base64"),
    content_type: f.contentType,
    sha256: createHash("sha256").update(f.bytes).digest("hex"),
  };
}

export async function putBytes(upload: { url: string; headers: Record<string, string> }, body: Uint8Array | string): Promise<Response> {
  return fetch(upload.url, { method: "PUT", headers: upload.headers, body: body as BodyInit });
}

/** Direct upload + PUT + attach; returns the attach response. */
export async function directUpload(t: TestPier, key: string, bucketId: string, f: LocalFile) {
  const d = declared(f);
  const r = await t.api("POST", "/api/v1/direct_uploads", {
    key,
    body: {
      bucket_id: bucketId,
      path: f.path,
      blob: { filename: d.name, byte_size: d.byte_size, checksum: d.checksum, content_type: d.content_type, sha256: d.sha256, purpose: "bucket_file" },
    },
  });
  if (r.status !== 201) throw new Error(`direct_uploads ${r.status} ${r.text}`);
  if (r.body.data.upload_required) {
    const put = await putBytes(r.body.data.upload, f.bytes);
    if (put.status !== 200) throw new Error(`PUT ${put.status} ${await put.text()}`);
  }
  return t.api("POST", `/api/v1/buckets/${bucketId}/files`, { key, body: { signed_blob_id: r.body.data.signed_blob_id } });
}

/** A whole session: create, declare in sub-batches of 12, PUT, finalize until done. */
export async function syncFiles(t: TestPier, key: string, bucketId: string, files: LocalFile[], opts: { deleteMissing?: boolean } = {}) {
  const s = await t.api("POST", `/api/v1/buckets/${bucketId}/upload_sessions`, {
    key,
    body: { delete_missing: opts.deleteMissing ?? false, expected_file_count: files.length },
  });
  if (s.status !== 201) throw new Error(`session ${s.status} ${s.text}`);
  const sid = s.body.data.upload_session.id;
  for (let i = 0; i < files.length; i += 12) {
    const batch = files.slice(i, i + 12);
    const r = await t.api("POST", `/api/v1/buckets/${bucketId}/upload_sessions/${sid}/uploads`, { key, body: { files: batch.map(declared) } });
    if (r.status !== 200) throw new Error(`uploads ${r.status} ${r.text}`);
    for (const u of r.body.data.uploads) {
      const f = batch.find((x) => x.path === u.path)!;
      const put = await putBytes(u.upload, f.bytes);
      if (put.status !== 200) throw new Error(`PUT ${put.status} ${await put.text()}`);
    }
  }
  let fin;
  for (let n = 0; n < 1000; n++) {
    fin = await t.api("POST", `/api/v1/buckets/${bucketId}/upload_sessions/${sid}/finalize`, { key, body: { complete: true } });
    if (fin.status !== 202) break;
  }
  return { sid, finalize: fin! };
}

/** A new bucket's id. */
export async function newBucket(t: TestPier, key: string, title = "Files test"): Promise<string> {
  return (await createBucket(t, key, { title })).id;
}
