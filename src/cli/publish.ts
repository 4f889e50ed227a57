// `pier publish DIR` and `pier preview DIR`: hash the folder locally, open a publish session,
// upload only the files Pier does not have (12 per sub-batch, progress on stderr), finalize,
// then poll the publication with backoff until it is ready or failed and print its URL.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, relative, resolve, sep } from "node:path";
import { isExcludedFromPublish } from "../features/publish/exclusions";
import { UsageError, parseArgs } from "./args";
import { ApiFailure, backoff, PierClient, resolveCredentials } from "./client";

const SUB_BATCH = 12;

const usage = (cmd: string) => `Usage: pier ${cmd} DIR [options]

  --url URL            Pier server (default: credentials file, else PIER_URL)
  --key KEY            API key (default: credentials file, else PIER_API_KEY)
  --bucket ID          Publish into this bucket (default: the bucket titled like DIR, created when missing)
  --title TITLE        Bucket title to use instead of the folder name
  --slug SLUG          Preferred site name (first publish only)
  --spa                Single-page app: deep links answer the index page
  --access MODE        public, password or require_email
  --root DIR           Folder inside DIR to serve as the site root
  --keep-missing       Do not delete bucket files that are not in DIR
${cmd === "preview" ? "  --expires MINUTES    Preview lifetime (default 15, at most 43200)\n" : ""}`;

export interface LocalFile {
  path: string;
  abs: string;
  size: number;
  sha256: string;
  md5: string;
  contentType: string;
}

/** Every publishable file under `dir` (dot-git and never-published files are skipped). */
export function scanFolder(dir: string): LocalFile[] {
  const out: LocalFile[] = [];
  const walk = (d: string) => {
    for (const ent of readdirSync(d, { withFileTypes: true })) {
      const abs = join(d, ent.name);
      if (ent.isDirectory()) {
        if (ent.name === ".git" || ent.name === "node_modules") continue;
        walk(abs);
      } else if (ent.isFile()) {
        const path = relative(dir, abs).split(sep).join("/");
        if (isExcludedFromPublish(path) || ent.name === ".DS_Store") continue;
        const bytes = readFileSync(abs);
        out.push({
          path, abs, size: bytes.byteLength,
          sha256: new Bun.CryptoHasher("sha256").update(bytes).digest("hex"),
          md5: new Bun.CryptoHasher("md5").update(bytes).digest("base64"),
          contentType: Bun.file(abs).type || "application/octet-stream",
        });
      }
    }
  };
  walk(dir);
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}

function progress(done: number, total: number, bytes: number, totalBytes: number): void {
  if (!process.stderr.isTTY && done !== total && done % SUB_BATCH !== 0) return;
  const width = 30;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  const line = `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total} files, ${(bytes / 1024).toFixed(0)}/${(totalBytes / 1024).toFixed(0)} KB`;
  process.stderr.write(process.stderr.isTTY ? `\r${line}` : `${line}\n`);
}

async function uploadAll(client: PierClient, uploads: Array<{ path: string; upload: { url: string; headers: Record<string, string> } }>, byPath: Map<string, LocalFile>): Promise<number> {
  const totalBytes = uploads.reduce((n, u) => n + (byPath.get(u.path)?.size ?? 0), 0);
  let done = 0, bytes = 0;
  progress(0, uploads.length, 0, totalBytes);
  for (let i = 0; i < uploads.length; i += SUB_BATCH) {
    await Promise.all(uploads.slice(i, i + SUB_BATCH).map(async (u) => {
      const f = byPath.get(u.path)!;
      await client.put(u.upload, readFileSync(f.abs));
      done++;
      bytes += f.size;
      progress(done, uploads.length, bytes, totalBytes);
    }));
  }
  if (process.stderr.isTTY) process.stderr.write("\n");
  return bytes;
}

export async function publishCommand(argv: string[], kind: "publish" | "preview"): Promise<number> {
  const [dir, ...rest] = argv;
  if (!dir || dir === "--help" || dir === "-h") {
    process.stdout.write(usage(kind));
    return dir ? 0 : 2;
  }
  let options: Record<string, string>;
  try {
    options = parseArgs(rest, { values: ["url", "key", "bucket", "title", "slug", "access", "root", ...(kind === "preview" ? ["expires"] : [])], flags: ["spa", "keep-missing"] }).options;
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`pier ${kind}: ${e.message}\n\n${usage(kind)}`);
      return 2;
    }
    throw e;
  }
  const root = resolve(dir);
  if (!statSync(root, { throwIfNoEntry: false })?.isDirectory()) {
    process.stderr.write(`pier ${kind}: ${dir} is not a folder\n`);
    return 2;
  }
  const client = new PierClient(resolveCredentials(options));
  const local = scanFolder(root);
  if (local.length === 0) {
    process.stderr.write(`pier ${kind}: nothing to publish in ${dir}\n`);
    return 2;
  }
  const byPath = new Map(local.map((f) => [f.path, f]));
  const body: Record<string, unknown> = {
    ...(options.bucket ? { bucket_id: options.bucket } : { bucket_title: options.title ?? basename(root) }),
    files: local.map((f) => ({ path: f.path, byte_size: f.size, content_type: f.contentType, checksum: f.md5, sha256: f.sha256 })),
    delete_missing: options["keep-missing"] !== "true",
    ...(options.slug ? { slug_suggestions: [options.slug] } : {}),
    ...(options.spa ? { site_mode: "spa" } : {}),
    ...(options.access ? { access_mode: options.access } : {}),
    ...(options.root !== undefined ? { publication_root_directory: options.root } : {}),
    ...(kind === "preview" ? { preview: true, ...(options.expires ? { expires_in_minutes: Number(options.expires) } : {}) } : {}),
  };

  try {
    let finalized: any;
    for (let round = 0; ; round++) {
      const session = await client.call("POST", "/api/v1/publish_sessions", body);
      process.stderr.write(`${session.deploy_summary}\n`);
      const uploaded = await uploadAll(client, session.publish_session.uploads, byPath);
      try {
        finalized = await finalizeWithRefresh(client, session.publish_session.id, byPath);
        process.stderr.write(`Uploaded ${uploaded} bytes.\n`);
        break;
      } catch (e) {
        // The spec's advice: a stale or expired session is recreated from the same manifest, once.
        if (round === 0 && e instanceof ApiFailure && (e.code === "PUBLISH_SESSION_STALE" || e.code === "PUBLISH_SESSION_EXPIRED")) continue;
        throw e;
      }
    }
    const pub = await waitUntilDone(client, finalized.publication.id);
    if (pub.publish_state === "failed") {
      process.stderr.write(`pier ${kind}: the build failed: ${pub.publish_error}\nFix the files and run pier ${kind} again.\n`);
      return 1;
    }
    process.stdout.write(`${pub.public_url}\n`);
    if (pub.expires_at) process.stderr.write(`Expires at ${pub.expires_at}.\n`);
    if (pub.access_mode !== "public") {
      if (pub.share_text) process.stderr.write(`\nShare text:\n${pub.share_text}\n`);
      else process.stderr.write(`\nThis site is protected (${pub.access_mode}). The account owner's key reads the password and share text with:\n  curl -H "Authorization: Bearer <owner key>" ${client.creds.baseUrl}/api/v1/publications/${pub.id}?include_manifest=false\n`);
    }
    return 0;
  } catch (e) {
    if (e instanceof ApiFailure) {
      process.stderr.write(`pier ${kind}: ${e.code}: ${e.message}\n`);
      if (e.code === "PUBLICATION_UPGRADE_REQUIRED") process.stderr.write(`Your plan has no protected sites: run "pier preview ${dir} --access ${options.access}" for a protected preview, upgrade, or publish with --access public.\n`);
      return 1;
    }
    process.stderr.write(`pier ${kind}: ${(e as Error).message}\n`);
    return 1;
  }
}

/** Finalize; when storage reports missing bytes, upload them again (fresh URLs) and retry once. */
async function finalizeWithRefresh(client: PierClient, sessionId: string, byPath: Map<string, LocalFile>): Promise<any> {
  try {
    return await client.call("POST", `/api/v1/publish_sessions/${sessionId}/finalize`, {}, { noRetry: ["PUBLISH_FILES_MISSING"] });
  } catch (e) {
    if (!(e instanceof ApiFailure) || e.code !== "PUBLISH_FILES_MISSING") throw e;
    const fresh = await client.call("POST", `/api/v1/publish_sessions/${sessionId}/uploads/refresh`, {});
    await uploadAll(client, fresh.publish_session.uploads, byPath);
    return client.call("POST", `/api/v1/publish_sessions/${sessionId}/finalize`, {});
  }
}

async function waitUntilDone(client: PierClient, id: string, timeoutMs = 15 * 60_000): Promise<any> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    const pub = (await client.call("GET", `/api/v1/publications/${id}?include_manifest=false`)).publication;
    if (pub.publish_state === "ready" || pub.publish_state === "failed") return pub;
    if (Date.now() - started > timeoutMs) throw new Error(`the build did not finish within ${timeoutMs / 60_000} minutes; check GET /api/v1/publications/${id}`);
    await new Promise((r) => setTimeout(r, backoff(attempt, 250, 5_000)));
  }
}
