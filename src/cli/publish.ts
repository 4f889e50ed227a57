// `pier publish DIR` and `pier preview DIR`: hash the folder locally, open a publish session,
// upload only the files Pier does not have (12 per sub-batch, progress on stderr), finalize,
// then poll the publication with backoff until it is ready or failed and print its URL.
import { statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { sanitizeSlug } from "../features/publish";
import { MIN_SLUG_LENGTH } from "../features/publish";
import { UsageError, type CommandSpec, type Parsed } from "./client/args";
import type { Command, RunContext } from "./client/command";
import { resolveTarget, serverOptions } from "./client/credentials";
import { ApiFailure, CliError } from "./client/errors";
import { humanBytes, scanFolder, skippedLinksLine, uploadAll, type LocalFile } from "./client/folder";
import { backoff, PierClient } from "./client/http";

const say = (line: string) => process.stderr.write(`${line}\n`);

const siteOptions = (kind: "publish" | "preview") => [
  ...serverOptions,
  { name: "bucket", value: "ID", help: "Publish this bucket (default: the bucket titled like DIR, created when missing)" },
  { name: "title", value: "TITLE", help: "Bucket title to use instead of the folder name" },
  { name: "slug", value: "SLUG", help: `Site name on the first publish (at least ${MIN_SLUG_LENGTH} characters: a-z, 0-9, -)` },
  { name: "spa", help: "Single-page app: deep links answer the index page" },
  { name: "no-clean-urls", help: "Serve about.html only as /about.html (default: /about serves it)" },
  { name: "access", value: "MODE", help: "public, password or require_email" },
  { name: "root", value: "DIR", help: "Folder inside DIR to serve as the site root" },
  { name: "keep-missing", help: "Do not delete bucket files that are not in DIR" },
  ...(kind === "preview" ? [{ name: "expires", value: "MINUTES", help: "Preview lifetime (default 15, at most 43200)" }] : []),
];

const spec = (kind: "publish" | "preview"): CommandSpec => ({
  name: kind,
  summary:
    kind === "publish"
      ? "Publish a folder as a website: upload only what changed, wait until it is live, print its URL."
      : "Publish a folder as a temporary, noindex preview at preview-<slug> (the main site is untouched).",
  usage: `${kind} DIR [options]`,
  positionals: [{ name: "DIR", required: true }],
  options: siteOptions(kind),
  details: "The URL goes to stdout; the summary, progress and share text to stderr. Exit 0 published, 1 refused or failed, 2 usage.",
});

const ACCESS_MODES = ["public", "password", "require_email"];

function checkOptions(options: Record<string, string>): void {
  if (options.access !== undefined && !ACCESS_MODES.includes(options.access)) throw new UsageError(`--access must be one of ${ACCESS_MODES.join(", ")}`);
  if (options.expires !== undefined && !/^\d+$/.test(options.expires)) throw new UsageError("--expires takes whole minutes (1 to 43200)");
  if (options.bucket !== undefined && options.title !== undefined) throw new UsageError("give --bucket or --title, not both");
}

export function folderArg(dir: string): string {
  const root = resolve(dir);
  if (!statSync(root, { throwIfNoEntry: false })?.isDirectory())
    throw new CliError(`${dir} is not a folder`, "NOT_A_FOLDER", "Give the folder to send, e.g. ./site.", 2);
  return root;
}

/**
 * When this run created the site and its name is not the one asked for (or the folder's), say
 * why it changed and how to choose: a silent "mysite-site" looks like a bug.
 */
export function slugNotice(wanted: string, got: string, bucketId = "<bucket id>"): string | null {
  const asked = sanitizeSlug(wanted);
  if (!asked || asked === got) return null;
  const why =
    asked.length < MIN_SLUG_LENGTH && got.startsWith(asked)
      ? `site names need at least ${MIN_SLUG_LENGTH} characters, so "${asked}" was lengthened`
      : got.startsWith(`${asked}-`)
        ? `"${asked}" is taken`
        : `"${asked}" cannot be used as a site name`;
  const rules = `at least ${MIN_SLUG_LENGTH} characters: a-z, 0-9, -`;
  const how =
    `Choose the name with --slug NAME (${rules}) when a folder is published the first time; ` +
    `rename this site with PATCH /api/v1/buckets/${bucketId}/custom_domains/public_slug {"public_slug": "NAME"}.`;
  return `The site is named "${got}": ${why}. ${how}`;
}

async function run(kind: "publish" | "preview", args: Parsed, ctx: RunContext): Promise<number> {
  const { options } = args;
  checkOptions(options);
  const dir = args.positionals.DIR!;
  const root = folderArg(dir);
  const target = await resolveTarget(options);
  ctx.baseUrl = target.baseUrl;
  const client = new PierClient(target.baseUrl, target.apiKey);
  const links: string[] = [];
  const local = scanFolder(root, links);
  const skipped = skippedLinksLine(links);
  if (skipped) say(skipped);
  if (local.length === 0) throw new CliError(`nothing to publish in ${dir}`, "EMPTY_FOLDER", "Put the site's files (an index.html at least) in the folder.", 2);
  const byPath = new Map(local.map((f) => [f.path, f]));
  const title = options.title ?? basename(root);
  const body: Record<string, unknown> = {
    ...(options.bucket ? { bucket_id: options.bucket } : { bucket_title: title }),
    files: local.map((f) => ({ path: f.path, byte_size: f.size, content_type: f.contentType, checksum: f.md5, sha256: f.sha256 })),
    delete_missing: options["keep-missing"] !== "true",
    ...(options.slug ? { slug_suggestions: [options.slug] } : {}),
    ...(options.spa ? { site_mode: "spa" } : {}),
    ...(options["no-clean-urls"] ? { clean_urls: false } : {}),
    ...(options.access ? { access_mode: options.access } : {}),
    ...(options.root !== undefined ? { publication_root_directory: options.root } : {}),
    ...(kind === "preview" ? { preview: true, ...(options.expires ? { expires_in_minutes: Number(options.expires) } : {}) } : {}),
  };

  let finalized: any;
  let session: any;
  try {
    for (let round = 0; ; round++) {
      session = await client.call("POST", "/api/v1/publish_sessions", body);
      say(session.deploy_summary);
      const uploaded = await uploadAll(client, session.publish_session.uploads, byPath);
      try {
        finalized = await finalizeWithRefresh(client, session.publish_session.id, byPath);
        if (session.publish_session.uploads.length)
          say(`Uploaded ${session.publish_session.uploads.length} file${session.publish_session.uploads.length === 1 ? "" : "s"} (${humanBytes(uploaded)}).`);
        break;
      } catch (e) {
        // The spec's advice: a stale or expired session is recreated from the same manifest, once.
        if (round === 0 && e instanceof ApiFailure && (e.code === "PUBLISH_SESSION_STALE" || e.code === "PUBLISH_SESSION_EXPIRED")) continue;
        throw e;
      }
    }
  } catch (e) {
    if (e instanceof ApiFailure && e.code === "PUBLICATION_UPGRADE_REQUIRED") {
      throw new CliError(
        e.message,
        e.code,
        `Your plan has no protected sites: run "pier preview ${dir} --access ${options.access}" for a protected preview, publish with --access public, or ask the operator for a plan with protected sites.`,
      );
    }
    throw e;
  }
  const pub = await waitUntilDone(client, finalized.publication.id);
  if (pub.publish_state === "failed") {
    throw new CliError(`the build failed: ${pub.publish_error}`, "PUBLISH_FAILED", `Fix the files and run pier ${kind} again.`);
  }
  process.stdout.write(`${pub.public_url}\n`);
  if (pub.created_at >= session.publish_session.created_at) {
    const notice = slugNotice(options.slug ?? title, pub.public_slug, pub.bucket_id);
    if (notice) say(notice);
  }
  for (const line of siteRulesLines(pub.site_rules)) say(line);
  if (pub.expires_at) say(`Expires at ${pub.expires_at}.`);
  if (pub.access_mode !== "public") {
    if (pub.share_text) say(`\nShare text:\n${pub.share_text}`);
    else
      say(
        `\nThis site is protected (${pub.access_mode}). The account owner's key reads the password and share text with:\n  curl -H "Authorization: Bearer <owner key>" ${target.baseUrl}/api/v1/publications/${pub.id}?include_manifest=false`,
      );
  }
  return 0;
}

/** What the build made of `_redirects` and `_headers`: counts, then each skipped line and why. */
export function siteRulesLines(
  rules: { redirects: number; headers: number; warnings: Array<{ file: string; line: number; message: string }>; warnings_not_listed?: number } | null,
): string[] {
  if (!rules) return [];
  const lines = [
    `Site rules: ${rules.redirects} redirect rule${rules.redirects === 1 ? "" : "s"}, ${rules.headers} header block${rules.headers === 1 ? "" : "s"}.`,
  ];
  for (const w of rules.warnings) lines.push(`  warning: ${w.file} line ${w.line}: ${w.message}`);
  if (rules.warnings_not_listed) lines.push(`  ...and ${rules.warnings_not_listed} more warnings.`);
  return lines;
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

export async function waitUntilDone(client: PierClient, id: string, timeoutMs = 15 * 60_000): Promise<any> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    const pub = (await client.call("GET", `/api/v1/publications/${id}?include_manifest=false`)).publication;
    if (pub.publish_state === "ready" || pub.publish_state === "failed") return pub;
    if (Date.now() - started > timeoutMs) {
      throw new CliError(
        `the build did not finish within ${timeoutMs / 60_000} minutes`,
        "PUBLISH_TIMEOUT",
        `Check it later with GET /api/v1/publications/${id}; the server keeps building.`,
      );
    }
    await new Promise((r) => setTimeout(r, backoff(attempt, 250, 5_000)));
  }
}

export const publish: Command = { spec: spec("publish"), run: (a, c) => run("publish", a, c) };
export const preview: Command = { spec: spec("preview"), run: (a, c) => run("preview", a, c) };
