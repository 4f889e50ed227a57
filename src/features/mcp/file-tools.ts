// MCP file tools: list, read and write bucket files through the files services (the same ones
// REST uses). Hosted MCP writes text only: binary files go through `pier push` or the REST
// direct-upload and upload-session endpoints, never through JSON-RPC.
import { t } from "elysia";
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { getFile, presentFileWrite, TEXT_WRITE_MAX_CHARS, writeTextFile } from "../files";
import { downloadUrl, FILE_PAGE_MAX, listFiles, readFileBytes } from "../files";
import { recordMessageRead } from "../mail";
import type { McpTool } from "./tools";
import { MAX_OFFSET } from "../../http/paging";

/** Largest file bucket_file_read returns inline (bigger ones: download_url). */
export const MCP_READ_MAX_BYTES = 512 * 1024;
/** Largest text bucket_file_write accepts (characters; the request body limit also applies). */
export const MCP_WRITE_MAX_CHARS = TEXT_WRITE_MAX_CHARS;

const BucketId = t.String({ pattern: "^bkt_[a-z0-9]{1,40}$", description: "Bucket id (bkt_...), from bucket_list." });
const Path = t.String({
  minLength: 1,
  maxLength: 1024,
  description: "Bucket-relative path such as `index.html` or `docs/intro.md` (no `..`, no leading slash).",
});

const binaryHint =
  "Hosted MCP writes text files only. Upload binary files from a computer with the Pier CLI, `pier push DIR --bucket <bucket_id>` (copies a local folder into the bucket without publishing), or with POST /api/v1/direct_uploads (see /docs/guides/files#uploading-one-file).";

export const fileTools: McpTool[] = [
  {
    name: "bucket_file_list",
    scope: "bucket_read",
    description: `List a bucket's current files (path order) with size, content type, checksum and lock state. Filter with \`q\` (substring of the path); page with limit (max ${FILE_PAGE_MAX}) and offset (see pagination.next_offset). Needs bucket_read on the bucket.`,
    inputSchema: t.Object(
      {
        bucket_id: BucketId,
        q: t.Optional(t.String({ maxLength: 1024, description: "Only paths containing this text, e.g. `_email/`." })),
        limit: t.Optional(t.Integer({ minimum: 1, maximum: FILE_PAGE_MAX })),
        offset: t.Optional(t.Integer({ minimum: 0, maximum: MAX_OFFSET })),
      },
      { additionalProperties: false },
    ),
    mutates: false,
    run: (deps, actor, a: { bucket_id: string; q?: string; limit?: number; offset?: number }) => listFiles(deps, actor, a.bucket_id, a),
  },
  {
    name: "bucket_file_read",
    scope: "bucket_read",
    description: `Read a file by path. UTF-8 text up to ${MCP_READ_MAX_BYTES} bytes comes back as \`content\`; binary or larger files come back as metadata plus a short-lived \`download_url\`. Needs bucket_read on the bucket.`,
    inputSchema: t.Object({ bucket_id: BucketId, path: Path }, { additionalProperties: false }),
    mutates: false,
    run: async (deps: Deps, actor: Actor, a: { bucket_id: string; path: string }) => {
      try {
        const { file, bytes } = await readFileBytes(deps, actor, a.bucket_id, a.path, MCP_READ_MAX_BYTES);
        try {
          const content = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
          // Like GET /files/by_path: reading an inbound message's message.json marks it read for
          // everyone (the download_url answers below record it through downloadUrl).
          recordMessageRead(deps, actor, file.bucketId, file.path);
          // getFile presents the file with its lock, as GET /files/:id does.
          return { file: getFile(deps, actor, a.bucket_id, file.id), encoding: "utf-8", content };
        } catch {
          return {
            file: getFile(deps, actor, a.bucket_id, file.id),
            binary: true,
            download_url: downloadUrl(deps, actor, a.bucket_id, a.path),
            note: "Binary file: fetch download_url (expires soon) to get the bytes.",
          };
        }
      } catch (e) {
        if (!(e instanceof ApiError) || e.code !== "FILE_TOO_LARGE") throw e;
        return {
          too_large: true,
          max_inline_bytes: MCP_READ_MAX_BYTES,
          download_url: downloadUrl(deps, actor, a.bucket_id, a.path),
          note: "The file is too large to return inline: fetch download_url (expires soon).",
        };
      }
    },
  },
  {
    name: "bucket_file_write",
    scope: "bucket_write",
    description: `Create or replace a TEXT file (UTF-8, up to ${MCP_WRITE_MAX_CHARS} characters) as a new bucket version. The content type comes from the path's extension (or content_type) and must be textual (HTML, CSS, JS, JSON, Markdown, SVG, ...). Binary files are refused: use \`pier push DIR --bucket <bucket_id>\` (the Pier CLI) or the REST upload endpoints. Refused on archived buckets and on files locked by another credential. Needs bucket_write on the bucket.`,
    inputSchema: t.Object(
      {
        bucket_id: BucketId,
        path: Path,
        content: t.String({ maxLength: MCP_WRITE_MAX_CHARS, description: "The whole new file content (UTF-8 text)." }),
        content_type: t.Optional(t.String({ maxLength: 200, description: "Override the type guessed from the extension (must be textual)." })),
        comment: t.Optional(t.String({ maxLength: 500, description: "Note stored with the new bucket version." })),
      },
      { additionalProperties: false },
    ),
    mutates: true,
    run: async (deps: Deps, actor: Actor, a: { bucket_id: string; path: string; content: string; content_type?: string; comment?: string }) => {
      const r = await writeTextFile(deps, actor, a.bucket_id, {
        path: a.path,
        content: a.content,
        contentType: a.content_type,
        comment: a.comment ?? `write ${a.path} (MCP)`,
        binaryHint,
      });
      return { ...presentFileWrite(deps, r.written[0]!, r.version?.id ?? null), changed: r.version !== null };
    },
  },
];
