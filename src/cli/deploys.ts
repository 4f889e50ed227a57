// `pier deploys [DIR]` and `pier rollback [DEPLOY_ID]`: a folder's site history and the instant
// switch back to an earlier deploy, meeting the same bucket `pier publish DIR` used (--bucket,
// else the bucket titled like the folder). Like publish: the URL on stdout, what happened on
// stderr. A rollback rebuilds nothing and changes no bucket files.
import { basename } from "node:path";
import { UsageError, type CommandSpec, type Parsed } from "./client/args";
import { listAll, resolveBucket } from "./client/buckets";
import type { Command, RunContext } from "./client/command";
import { resolveTarget, serverOptions } from "./client/credentials";
import { CliError } from "./client/errors";
import { humanBytes } from "./client/folder";
import { PierClient } from "./client/http";
import { folderArg } from "./publish";

const say = (line: string) => process.stderr.write(`${line}\n`);

const siteOptions = [
  ...serverOptions,
  { name: "bucket", value: "ID", help: "The site's bucket (default: the bucket titled like the folder)" },
  { name: "title", value: "TITLE", help: "The bucket's title, when it is not the folder's name" },
];

const deploysSpec: CommandSpec = {
  name: "deploys",
  summary: "List a folder's site deploys, newest first: which one is live and which can be rolled back to.",
  usage: "deploys [DIR] [options]",
  positionals: [{ name: "DIR" }],
  options: [...siteOptions, { name: "limit", value: "N", help: "How many deploys to show (default 20, at most 100)" }],
  details:
    "DIR defaults to the current folder. One deploy per line on stdout: id, created, files, size, trigger, live / rolled back from / pruned.\nExit 0 listed, 1 refused, 2 usage.",
};

const rollbackSpec: CommandSpec = {
  name: "rollback",
  summary: "Serve an earlier deploy of a folder's site at once (no rebuild; the bucket's files are unchanged).",
  usage: "rollback [DEPLOY_ID] [options]",
  positionals: [{ name: "DEPLOY_ID" }],
  options: [...siteOptions, { name: "dir", value: "DIR", help: "The site's folder (default: the current folder)" }],
  details:
    "DEPLOY_ID defaults to the deploy before the live one (pier deploys lists them); give a newer id to roll forward again.\n" +
    "The bucket keeps its files: the next pier publish builds from them again.\nThe URL goes to stdout. Exit 0 switched (or already live), 1 refused, 2 usage.",
};

interface SiteRef {
  bucket: { id: string; title: string };
  pub: { id: string; public_url: string; deploy_id: string | null };
}

async function findSite(client: PierClient, options: Record<string, string>, dir: string | undefined): Promise<SiteRef> {
  if (options.bucket && options.title) throw new UsageError("give --bucket or --title, not both");
  const title = options.title ?? basename(dir ? folderArg(dir) : process.cwd());
  const bucket = await resolveBucket(client, { bucketId: options.bucket, title, create: false });
  const publications = await listAll<any>(client, "/api/v1/publications?include_manifest=false", "publications");
  const pub = publications.find((p) => p.bucket_id === bucket.id && p.kind === "main");
  if (!pub) throw new CliError(`"${bucket.title}" was never published`, "PUBLICATION_NOT_FOUND", `Publish it first: pier publish ${dir ?? "DIR"}.`);
  return { bucket, pub };
}

function describe(d: any, rolledBackFrom: string | undefined): string {
  const state = d.live ? "live" : d.id === rolledBackFrom ? "rolled back from" : d.rollback_available ? "" : "pruned";
  return [d.id, d.created_at, `${d.files_count} file${d.files_count === 1 ? "" : "s"}`, humanBytes(d.total_bytes), d.trigger, state].join("  ").trimEnd();
}

async function runDeploys(args: Parsed, ctx: RunContext): Promise<number> {
  const { options } = args;
  if (options.limit !== undefined && !/^\d+$/.test(options.limit)) throw new UsageError("--limit takes a whole number (1 to 100)");
  const target = await resolveTarget(options);
  ctx.baseUrl = target.baseUrl;
  const client = new PierClient(target.baseUrl, target.apiKey);
  const { bucket, pub } = await findSite(client, options, args.positionals.DIR);
  const read = (await client.call<any>("GET", `/api/v1/publications/${pub.id}?include_manifest=false`)).publication;
  const r = await client.call<any>("GET", `/api/v1/publications/${pub.id}/deploys${options.limit ? `?limit=${options.limit}` : ""}`);
  for (const d of r.deploys) process.stdout.write(`${describe(d, read.rolled_back_from)}\n`);
  say(
    `${r.pagination.total_count} deploy${r.pagination.total_count === 1 ? "" : "s"} of "${bucket.title}" (${read.public_url}); the newest ${r.deploy_history_limit} can be rolled back to with pier rollback DEPLOY_ID.`,
  );
  if (read.rolled_back_from) say(`Rolled back: the live deploy is ${read.deploy_id}, not the newest (${read.rolled_back_from}).`);
  return 0;
}

async function runRollback(args: Parsed, ctx: RunContext): Promise<number> {
  const { options } = args;
  const deployId = args.positionals.DEPLOY_ID;
  if (deployId !== undefined && !/^dpl_[a-z0-9]+$/.test(deployId)) throw new UsageError(`"${deployId}" is not a deploy id (dpl_...); pier deploys lists them`);
  const target = await resolveTarget(options);
  ctx.baseUrl = target.baseUrl;
  const client = new PierClient(target.baseUrl, target.apiKey);
  const { bucket, pub } = await findSite(client, options, options.dir);
  const r = await client.call<any>("POST", `/api/v1/publications/${pub.id}/rollback`, deployId ? { deploy_id: deployId } : {});
  process.stdout.write(`${r.publication.public_url}\n`);
  const d = r.deploy;
  const what = `deploy ${d.id} (built ${d.created_at}, ${d.files_count} file${d.files_count === 1 ? "" : "s"}, ${humanBytes(d.total_bytes)})`;
  if (!r.changed) say(`"${bucket.title}" already serves ${what}; nothing changed.`);
  else
    say(
      `Rolled back "${bucket.title}" to ${what}; it was serving ${r.previous_deploy_id}. Visitors get it now.\n` +
        `The bucket's files are unchanged: the next pier publish builds from them again.`,
    );
  return 0;
}

export const deploys: Command = { spec: deploysSpec, run: runDeploys };
export const rollback: Command = { spec: rollbackSpec, run: runRollback };
