// A text file written whole from typed content: the MCP tool bucket_file_write and the dashboard's
// New text file and Edit. Only textual types are written (a binary file comes from an upload),
// and a writer that shows the content first says what it was based on, so it never overwrites a
// change it has not shown (Change.basedOn).
import type { Actor, Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import type { CommitResult } from "./commit";
import { normalizeContentType } from "./forbidden";
import { isTextType } from "./ops";
import { guessContentType, writeFiles } from "./write";

/** The most characters one typed write takes (the MCP tool's and the dashboard editor's limit). */
export const TEXT_WRITE_MAX_CHARS = 512 * 1024;

export interface TextWrite {
  path: string;
  content: string;
  /** Override the type guessed from the path's extension (must be textual). */
  contentType?: string;
  comment: string;
  /** null: create only; a SHA-256: replace only that content; absent: create or replace. */
  basedOn?: string | null;
  /** Appended to the NOT_TEXT_FILE message: where this caller's users send binary files. */
  binaryHint?: string;
}

/** Create or replace one text file as a new bucket version. */
export async function writeTextFile(deps: Deps, actor: Actor, bucketId: string, w: TextWrite): Promise<CommitResult> {
  if (w.content.length > TEXT_WRITE_MAX_CHARS)
    throw new ApiError("FILE_TOO_LARGE", `A text written here has at most ${TEXT_WRITE_MAX_CHARS.toLocaleString("en")} characters.`, {
      max_chars: TEXT_WRITE_MAX_CHARS,
    });
  const contentType = normalizeContentType(w.contentType ?? guessContentType(w.path));
  // An unknown extension is written as plain text; a known binary type is not.
  const textual = isTextType(contentType) || contentType.startsWith("application/octet-stream");
  if (!textual || w.content.includes("\u0000")) {
    const hint = w.binaryHint ? ` ${w.binaryHint}` : "";
    throw new ApiError("NOT_TEXT_FILE", `${w.path} would be ${contentType}, not text.${hint}`, { path: w.path, content_type: contentType });
  }
  const type = isTextType(contentType) ? contentType : "text/plain; charset=utf-8";
  return writeFiles(deps, actor, bucketId, [{ path: w.path, bytes: w.content, contentType: type, basedOn: w.basedOn }], { kind: "write", comment: w.comment });
}
