// `pier push DIR`: copy a folder into a bucket's files without publishing anything, through a
// bucket upload session (the spec's path for many files): declare 12 files at a time, PUT only
// the bytes Pier does not have, then finalize (repeated while it answers finalize_pending).
// Unchanged files make no new version. Files missing from the folder stay in the bucket unless
// --delete-missing, which deletes them once, at the final finalize (kept in version history).
import { basename } from "node:path";
import type { CommandSpec, Parsed } from "./client/args";
import { UsageError } from "./client/args";
import { resolveBucket } from "./client/buckets";
import type { Command, RunContext } from "./client/command";
import { resolveTarget, serverOptions } from "./client/credentials";
import { CliError } from "./client/errors";
import { humanBytes, scanFolder, skippedLinksLine, SUB_BATCH, uploadAll } from "./client/folder";
import { PierClient } from "./client/http";
import { folderArg } from "./publish";

const say = (line: string) => process.stderr.write(`${line}\n`);

const spec: CommandSpec = {
  name: "push",
  summary: "Copy a folder into a bucket's files without publishing (only changed bytes are uploaded).",
  usage: "push DIR [options]",
  positionals: [{ name: "DIR", required: true }],
  options: [
    ...serverOptions,
    { name: "bucket", value: "ID", help: "Push into this bucket (default: the bucket titled like DIR, created when missing)" },
    { name: "title", value: "TITLE", help: "Bucket title to use instead of the folder name" },
    { name: "delete-missing", help: "Also delete bucket files that are not in DIR (off by default)" },
  ],
  details:
    "Files that are never published (.git, node_modules, .env*, lockfiles, executables) are not sent; symbolic links are not followed.\n" +
    "The bucket id goes to stdout; the summary and progress to stderr. Exit 0 pushed, 1 refused or failed, 2 usage.",
};

async function run(args: Parsed, ctx: RunContext): Promise<number> {
  const { options } = args;
  if (options.bucket && options.title) throw new UsageError("give --bucket or --title, not both");
  const dir = args.positionals.DIR!;
  const root = folderArg(dir);
  const target = await resolveTarget(options);
  ctx.baseUrl = target.baseUrl;
  const client = new PierClient(target.baseUrl, target.apiKey);
  const links: string[] = [];
  const local = scanFolder(root, links);
  const skipped = skippedLinksLine(links);
  if (skipped) say(skipped);
  const deleteMissing = options["delete-missing"] === "true";
  if (local.length === 0) throw new CliError(`nothing to push in ${dir}`, "EMPTY_FOLDER", "The folder has no files Pier would keep.", 2);
  const byPath = new Map(local.map((f) => [f.path, f]));
  const bucket = await resolveBucket(client, { bucketId: options.bucket, title: options.title ?? basename(root), create: true });
  if (bucket.created) say(`Created the bucket "${bucket.title}" (${bucket.id}).`);

  const base = `/api/v1/buckets/${bucket.id}/upload_sessions`;
  const { upload_session: session } = await client.call("POST", base, { delete_missing: deleteMissing, expected_file_count: local.length });
  try {
    // Declare everything first: the server answers which bytes it lacks, so the progress line
    // counts only what really travels.
    const uploads: Array<{ path: string; upload: { url: string; headers: Record<string, string> } }> = [];
    for (let i = 0; i < local.length; i += SUB_BATCH) {
      const files = local
        .slice(i, i + SUB_BATCH)
        .map((f) => ({ path: f.path, name: basename(f.path), byte_size: f.size, checksum: f.md5, content_type: f.contentType, sha256: f.sha256 }));
      const declared = await client.call<{ uploads: typeof uploads }>("POST", `${base}/${session.id}/uploads`, { files });
      uploads.push(...declared.uploads);
    }
    say(
      `Push of ${local.length} file${local.length === 1 ? "" : "s"} to "${bucket.title}": ${uploads.length} to upload (${humanBytes(uploads.reduce((n, u) => n + (byPath.get(u.path)?.size ?? 0), 0))})${deleteMissing ? ", files not in the folder will be deleted" : ""}.`,
    );
    await uploadAll(client, uploads, byPath);
    let done: any;
    for (;;) {
      done = await client.call("POST", `${base}/${session.id}/finalize`, { complete: true });
      if (!done.finalize_pending) break;
      await new Promise((r) => setTimeout(r, Math.min(Number(done.retry_after) || 1, 30) * 1000));
    }
    const s = done.upload_session;
    say(
      `Pushed "${bucket.title}": ${local.length} file${local.length === 1 ? "" : "s"} in the folder, ${uploads.length} uploaded${deleteMissing ? `, ${s.deleted_files_count} deleted` : ""}. Nothing was published.`,
    );
    process.stdout.write(`${bucket.id}\n`);
    return 0;
  } catch (e) {
    // Release the bucket's write lock now rather than when the session expires in an hour.
    await client.call("POST", `${base}/${session.id}/finalize`, { complete: false }).catch(() => {});
    throw e;
  }
}

export const push: Command = { spec, run };
