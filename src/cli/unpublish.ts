// `pier unpublish [DIR]`: take a folder's site offline, the way `pier publish DIR` put it up (the
// same bucket rule, the URL on stdout, what happened on stderr). The main site goes through the
// API's unpublish (it and any preview answer 404 at once); `--preview` ends only the preview by
// moving its expiry to now, the one change the API offers for a preview alone (it answers 410
// Gone, like any expired preview, and the expiry job takes it down).
import { basename } from "node:path";
import { UsageError, type CommandSpec, type Parsed } from "./client/args";
import { listAll, resolveBucket } from "./client/buckets";
import type { Command, RunContext } from "./client/command";
import { resolveTarget, serverOptions } from "./client/credentials";
import { CliError } from "./client/errors";
import { PierClient } from "./client/http";
import { folderArg } from "./publish";

const say = (line: string) => process.stderr.write(`${line}\n`);

const spec: CommandSpec = {
  name: "unpublish",
  summary: "Take a folder's site offline (the main site and any preview), or only its preview with --preview.",
  usage: "unpublish DIR [options]\nunpublish --bucket ID [options]",
  positionals: [{ name: "DIR" }],
  options: [
    ...serverOptions,
    { name: "bucket", value: "ID", help: "The bucket to unpublish (default: the bucket titled like DIR)" },
    { name: "title", value: "TITLE", help: "The bucket's title, when it is not the folder's name" },
    { name: "preview", help: "End only the preview; the main site stays up" },
  ],
  details:
    "The files stay in the bucket: pier publish DIR (or pier preview DIR) puts the site back.\nThe URL taken down goes to stdout. Exit 0 done (or nothing was published), 1 refused, 2 usage.",
};

/** A time the server will accept as "now": its clock when known (Date header), plus a moment. */
function soon(client: PierClient): string {
  const server = client.serverDate?.getTime() ?? 0;
  return new Date(Math.max(Date.now(), server) + 2_000).toISOString();
}

async function run(args: Parsed, ctx: RunContext): Promise<number> {
  const { options } = args;
  const dir = args.positionals.DIR;
  if (!dir && !options.bucket && !options.title) throw new UsageError("say which site: give DIR, --bucket ID or --title TITLE");
  if (options.bucket && options.title) throw new UsageError("give --bucket or --title, not both");
  const title = options.title ?? (dir ? basename(folderArg(dir)) : "");
  const target = await resolveTarget(options);
  ctx.baseUrl = target.baseUrl;
  const client = new PierClient(target.baseUrl, target.apiKey);
  const bucket = await resolveBucket(client, { bucketId: options.bucket, title, create: false });
  const publications = await listAll<any>(client, "/api/v1/publications?include_manifest=false", "publications");
  const live = (kind: string) =>
    publications.find((p) => p.bucket_id === bucket.id && p.kind === kind && (p.status === "published" || p.status === "publishing") && !p.expired);

  if (options.preview) {
    const pub = live("preview");
    if (!pub) {
      say(`"${bucket.title}" has no live preview; nothing to do.`);
      return 0;
    }
    await client.call("PATCH", `/api/v1/publications/${pub.id}`, { expires_at: soon(client) });
    process.stdout.write(`${pub.public_url}\n`);
    say(`Preview of "${bucket.title}" ended: it answers 410 Gone from now on. The main site is unchanged.`);
    return 0;
  }
  const main = live("main"),
    preview = live("preview");
  if (!main && !preview) {
    say(`"${bucket.title}" is not published; nothing to do.`);
    return 0;
  }
  const r = await client.call<{ publication: any; changed: boolean }>("DELETE", `/api/v1/buckets/${bucket.id}/publication`);
  if (!r.changed)
    throw new CliError(
      `"${bucket.title}" could not be unpublished now`,
      "UNPUBLISH_NOT_STARTED",
      "It may be unpublishing already; check GET /api/v1/publications.",
    );
  for (const p of [main, preview]) if (p) process.stdout.write(`${p.public_url}\n`);
  say(
    `Unpublished "${bucket.title}"${main && preview ? " (the site and its preview)" : preview ? " (its preview)" : ""}: it answers 404 from now on. The files stay in the bucket; pier publish puts the site back.`,
  );
  return 0;
}

export const unpublish: Command = { spec, run };
