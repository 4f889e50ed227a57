// The hosted MCP tools. Each calls the same service function as the matching REST route, with
// the same actor, so scopes and bucket grants are enforced exactly as on REST. Input schemas are
// TypeBox (JSON Schema), published in tools/list and checked before a tool runs.
import { t, type TSchema } from "elysia";
import type { Actor, Deps, Scope } from "../../core/context";
import { serverVersion } from "../../core/version";
import { BucketInput, BucketPatch } from "../buckets";
import { presentBucket, presentDeleteOutcome, presentLifecycleResult } from "../buckets";
import { deleteBucket } from "../buckets";
import { archiveBucket, unarchiveBucket } from "../buckets";
import { createBucket, getBucket, listBucketPage, updateBucket } from "../buckets";
import { getStatus } from "../status";
import { fileTools } from "./file-tools";
import { mailTools } from "./mail-tools";
import { publishTools } from "./publish-tools";
import { domainTools } from "./domain-tools";
import { formTools } from "./form-tools";
import { MAX_OFFSET } from "../../http/paging";

export interface McpTool {
  name: string;
  description: string;
  inputSchema: TSchema;
  /** The route-level scope of the matching REST route (the services check bucket grants). */
  scope: Scope;
  /** Mutating tools are refused on read-only accounts, like REST writes. */
  mutates: boolean;
  run(deps: Deps, actor: Actor, args: any): unknown | Promise<unknown>;
}

const BucketId = t.String({ pattern: "^bkt_[a-z0-9]{1,40}$", description: "Bucket id (bkt_...), from bucket_list." });

const bucketTools: McpTool[] = [
  {
    name: "pier_status",
    scope: "bucket_read",
    description:
      "Server and client versions, the MCP server version (mcp.server_version), publishing guidance, and this credential's account, scope and state. Call it first to learn what the connection may do.",
    inputSchema: t.Object({}, { additionalProperties: false }),
    mutates: false,
    run: (deps, actor) => ({ ...getStatus(deps, actor), mcp: { server_version: serverVersion } }),
  },
  {
    name: "bucket_list",
    scope: "bucket_read",
    description:
      "List the buckets this connection can see, newest first (active ones by default; archived=true for archived; tag=<label> for one label), one page at a time: limit (default 100, max 1000) and offset, with pagination.has_more and next_offset. Each bucket includes its id, title, tags, metadata, website/publication state, lifecycle action metadata (archive, unarchive, delete), github_sync and github_sync_setup.settings_url. Needs bucket_read.",
    inputSchema: t.Object(
      {
        archived: t.Optional(t.Boolean({ description: "true lists archived buckets instead of active ones." })),
        tag: t.Optional(t.String({ minLength: 1, maxLength: 200, description: "Only buckets carrying this tag label." })),
        limit: t.Optional(t.Integer({ minimum: 1, maximum: 1000, description: "Page size (default 100)." })),
        offset: t.Optional(t.Integer({ minimum: 0, maximum: MAX_OFFSET, description: "Buckets to skip (pagination.next_offset of the previous page)." })),
      },
      { additionalProperties: false },
    ),
    mutates: false,
    run: (deps, actor, a: { archived?: boolean; tag?: string; limit?: number; offset?: number }) => {
      const page = listBucketPage(deps, actor, { archived: a.archived === true, tagPath: a.tag, limit: a.limit, offset: a.offset });
      return { buckets: page.buckets.map((b) => presentBucket(deps, b)), pagination: page.pagination };
    },
  },
  {
    name: "bucket_get",
    scope: "bucket_read",
    description:
      "Get one bucket by id, with website metadata, publication lifecycle state, action metadata (archive/unarchive/delete with required_action and confirmation), github_sync and github_sync_setup.settings_url. Needs bucket_read on that bucket.",
    inputSchema: t.Object({ bucket_id: BucketId }, { additionalProperties: false }),
    mutates: false,
    run: (deps, actor, a: { bucket_id: string }) => ({ bucket: presentBucket(deps, getBucket(deps, actor, a.bucket_id)) }),
  },
  {
    name: "bucket_create",
    scope: "bucket_admin",
    description:
      "Create a bucket in the connection's account. tag_paths are reusable labels such as `website` (never derived from local folders, titles or domains); metadata is free-form context. Needs account-wide bucket_admin and room in the plan.",
    inputSchema: BucketInput,
    mutates: true,
    run: (deps, actor, a: typeof BucketInput.static) => ({ bucket: presentBucket(deps, createBucket(deps, actor, a)) }),
  },
  {
    name: "bucket_update",
    scope: "bucket_admin",
    description:
      "Change a bucket's title, description, tag_paths or metadata (only the fields given). Needs bucket_admin on the bucket; refused on archived or locked buckets.",
    inputSchema: t.Object({ bucket_id: BucketId, ...BucketPatch.properties }, { additionalProperties: false }),
    mutates: true,
    run: (deps, actor, { bucket_id, ...patch }: { bucket_id: string } & typeof BucketPatch.static) => ({
      bucket: presentBucket(deps, updateBucket(deps, actor, bucket_id, patch)),
    }),
  },
  {
    name: "bucket_archive",
    scope: "bucket_admin",
    description:
      "Archive a bucket: it becomes read-only and leaves the default bucket_list. Refused with UNPUBLISH_FIRST while a publication is active (see the bucket's archive.required_action). Archiving an archived bucket is a no-op (changed: false). Needs bucket_admin on the bucket.",
    inputSchema: t.Object({ bucket_id: BucketId }, { additionalProperties: false }),
    mutates: true,
    run: (deps, actor, a: { bucket_id: string }) => presentLifecycleResult(deps, archiveBucket(deps, actor, a.bucket_id)),
  },
  {
    name: "bucket_unarchive",
    scope: "bucket_admin",
    description: "Unarchive a bucket so it can be changed again. Unarchiving an active bucket is a no-op (changed: false). Needs bucket_admin on the bucket.",
    inputSchema: t.Object({ bucket_id: BucketId }, { additionalProperties: false }),
    mutates: true,
    run: (deps, actor, a: { bucket_id: string }) => presentLifecycleResult(deps, unarchiveBucket(deps, actor, a.bucket_id)),
  },
  {
    name: "bucket_delete",
    scope: "bucket_admin",
    description:
      "Permanently delete a bucket with all its files and history. Pass the exact confirmation phrase from bucket_get's delete.confirmation (ask the user first; this cannot be undone). Refused with UNPUBLISH_FIRST while a publication is active. Large buckets are deleted in the background: the answer then has deleted: false and delete_progress. Needs bucket_admin on the bucket.",
    inputSchema: t.Object(
      {
        bucket_id: BucketId,
        confirmation: t.String({ minLength: 1, maxLength: 200, description: "The bucket's delete.confirmation phrase, verbatim." }),
      },
      { additionalProperties: false },
    ),
    mutates: true,
    run: (deps, actor, a: { bucket_id: string; confirmation: string }) =>
      presentDeleteOutcome(deps, deleteBucket(deps, actor, a.bucket_id, { confirmation: a.confirmation })),
  },
];

export const tools: McpTool[] = [...bucketTools, ...fileTools, ...mailTools, ...publishTools, ...domainTools, ...formTools];
