// The agent activity log: requests made with API keys and OAuth tokens, grouped by credential and
// by how the agent identified itself (User-Agent `<client>/<version> (<agent>)`, X-Pier-Agent,
// -Client, -Version, -Run-Id, -Project, -Task). Counts are buffered in memory and written at most
// every 30 s per identity, so busy agents do not turn every read into a database write.
import { and, desc, eq, sql } from "drizzle-orm";
import { LRUCache } from "lru-cache";
import type { Actor, Deps } from "../../core/context";
import { sha256Hex } from "../../core/crypto";
import { ApiError } from "../../core/errors";
import { newId } from "../../core/ids";
import { agentActivity } from "../../db/schema";
import { hasAccountWideAdmin } from "../buckets";

const FLUSH_MS = 30_000;
const field = (req: Request, name: string) =>
  (req.headers.get(name) ?? "")
    .replace(/[\x00-\x1f\x7f]/g, "")
    .trim()
    .slice(0, 200);

export interface Identity {
  userAgent: string;
  agent: string;
  agentClient: string;
  agentVersion: string;
  runId: string;
  project: string;
  task: string;
}

export function identityOf(req: Request): Identity {
  return {
    userAgent: field(req, "user-agent"),
    agent: field(req, "x-pier-agent"),
    agentClient: field(req, "x-pier-agent-client"),
    agentVersion: field(req, "x-pier-agent-version"),
    runId: field(req, "x-pier-agent-run-id"),
    project: field(req, "x-pier-agent-project"),
    task: field(req, "x-pier-agent-task"),
  };
}

export class ActivityRecorder {
  private readonly pending = new LRUCache<string, { n: number; flushedAt: number }>({
    max: 10_000,
    // An identity pushed out of the cache still gets its buffered count written.
    dispose: (v, k, reason) => {
      if (reason === "evict" && v.n > 0) this.evicted.push([k, v.n]);
    },
  });
  private evicted: [string, number][] = [];

  constructor(private readonly deps: Deps) {}

  /** Note one request by a bearer credential (sessions are people, not agents). */
  record(actor: Actor | null | undefined, req: Request): void {
    if (!actor || (actor.kind !== "api_key" && actor.kind !== "oauth")) return;
    const id = identityOf(req);
    const fingerprint = sha256Hex([actor.credentialId, actor.accountId, ...Object.values(id)].join("\n"));
    const now = this.deps.clock.now();
    const entry = this.pending.get(fingerprint) ?? { n: 0, flushedAt: 0 };
    entry.n += 1;
    this.pending.set(fingerprint, entry);
    if (now.getTime() - entry.flushedAt < FLUSH_MS) return;
    const url = new URL(req.url);
    this.write(actor, id, fingerprint, entry.n, req.method, url.pathname, now.toISOString());
    entry.n = 0;
    entry.flushedAt = now.getTime();
  }

  private write(actor: Actor, id: Identity, fingerprint: string, n: number, method: string, path: string, at: string): void {
    this.deps.db
      .insert(agentActivity)
      .values({
        id: newId("act"),
        accountId: actor.accountId,
        credentialKind: actor.kind as "api_key" | "oauth",
        credentialId: actor.credentialId,
        userId: actor.userId,
        fingerprint,
        ...id,
        requestCount: n,
        lastMethod: method,
        lastPath: path.slice(0, 300),
        firstSeenAt: at,
        lastSeenAt: at,
      })
      .onConflictDoUpdate({
        target: agentActivity.fingerprint,
        set: { requestCount: sql`${agentActivity.requestCount} + ${n}`, lastMethod: method, lastPath: path.slice(0, 300), lastSeenAt: at },
      })
      .run();
    for (const [fp, count] of this.evicted.splice(0)) {
      this.deps.db
        .update(agentActivity)
        .set({ requestCount: sql`${agentActivity.requestCount} + ${count}` })
        .where(eq(agentActivity.fingerprint, fp))
        .run();
    }
  }
}

/** One recorder per running Pier, built with Deps (REST hook and MCP endpoint share its buffer). */
export function activityRecorder(deps: Deps): ActivityRecorder {
  return deps.agentActivity;
}

/** The account's agent activity, newest first; only the account owner may read it. */
export function listActivity(deps: Deps, actor: Actor, limit = 100, offset = 0) {
  if (!actor.isAccountOwner || !hasAccountWideAdmin(actor))
    throw new ApiError("FORBIDDEN", "Only the account owner (with account-wide access) can read the agent activity log.");
  return deps.db
    .select()
    .from(agentActivity)
    .where(and(eq(agentActivity.accountId, actor.accountId)))
    .orderBy(desc(agentActivity.lastSeenAt), desc(agentActivity.id))
    .limit(limit)
    .offset(offset)
    .all()
    .map((r) => ({
      credential_kind: r.credentialKind,
      credential_id: r.credentialId,
      user_id: r.userId,
      user_agent: r.userAgent,
      agent: r.agent,
      agent_client: r.agentClient,
      agent_version: r.agentVersion,
      run_id: r.runId,
      project: r.project,
      task: r.task,
      request_count: r.requestCount,
      last_request: `${r.lastMethod} ${r.lastPath}`,
      first_seen_at: r.firstSeenAt,
      last_seen_at: r.lastSeenAt,
    }));
}
