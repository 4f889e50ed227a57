// The route table, walked: every route the app serves must declare the credential it needs
// (`x-pier-auth`, from the `auth` macro) and match the expectation below, so a new route
// without an entry here FAILS. Then every route is called with keys of each scope, with a
// key limited to other buckets, with a too-weak per-bucket grant and with another account's
// key, proving each gets exactly what the spec's permission scopes grant.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { scopeRank, type Scope } from "../../../src/core/context";
import type { RouteAuth } from "../../../src/http/auth";
import { createBucket } from "../../helpers/buckets";
import { eq } from "drizzle-orm";
import { buckets } from "../../../src/db/schema";
import { storeSubmission } from "../../../src/features/forms/store";
import { startTestPier, type ApiResult, type TestPier, type TestUser } from "../../helpers/pier";

interface Bucket {
  id: string;
  title: string;
  delete: { confirmation: string };
}

interface Expectation {
  /**
   * The declared auth; "none" only for the API reference pages under /docs; "page" for
   * server-rendered browser pages outside /api, which check the session themselves
   * (`signedIn` ones send anonymous visitors to /signin).
   */
  auth: RouteAuth | "none" | "page";
  signedIn?: boolean;
  /** A valid request body for the route (fresh bucket each call; `params` as resolved below). */
  body?: (b: Bucket, params: Record<string, string>) => unknown;
  /**
   * Values for path parameters other than a bucket `:id`; may create what they name first
   * (e.g. a version of the fresh bucket) through the owner's key.
   */
  params?: (b: Bucket, ctx: { t: TestPier; ownerKey: string; key: string | undefined }) => Record<string, string> | Promise<Record<string, string>>;
  /** Query string appended to the path (e.g. `path=notes.txt`). */
  query?: string;
  /** The bucket is named in the body (`bucket_id`), not the path: treated like a bucket route. */
  bucketInBody?: boolean;
  /** Needs account-wide access (bucket creation): a selected-bucket key gets 403 even at bucket_admin. */
  accountWide?: boolean;
  /** The 404 code when the bucket is hidden from the key (default BUCKET_NOT_FOUND). */
  notFoundCode?: string;
}

const fileBytes = "hello";
const declared = {
  byte_size: 5,
  content_type: "text/plain",
  checksum: new Bun.CryptoHasher("md5").update(fileBytes).digest("base64"),
  sha256: new Bun.CryptoHasher("sha256").update(fileBytes).digest("hex"),
};

/** A text file in the fresh bucket, written with the owner's key: its id and the version made. */
async function seedFile(t: TestPier, ownerKey: string, b: Bucket): Promise<Record<string, string>> {
  const r = await t.api("POST", `/api/v1/buckets/${b.id}/files/append_text`, { key: ownerKey, body: { path: "notes.txt", text: "hi", create: true } });
  if (r.status !== 200) throw new Error(`seed file: ${r.status} ${r.text}`);
  return { file_id: r.body.data.file.id, version_id: r.body.data.version_id };
}

/** An upload session of the calling key when it may open one (sessions belong to their key), else the owner's. */
async function seedSession(t: TestPier, ownerKey: string, key: string | undefined, b: Bucket): Promise<Record<string, string>> {
  for (const k of [key, ownerKey]) {
    if (!k) continue;
    const r = await t.api("POST", `/api/v1/buckets/${b.id}/upload_sessions`, { key: k, body: {} });
    if (r.status < 300) return { sid: r.body.data.upload_session?.id ?? r.body.data.id };
  }
  throw new Error("seed session failed");
}

/** A publication of the fresh bucket, made with the owner's key (`access_mode` as given). */
async function seedPublication(t: TestPier, ownerKey: string, b: Bucket, body: Record<string, unknown> = {}): Promise<Record<string, string>> {
  const r = await t.api("POST", `/api/v1/buckets/${b.id}/publication`, { key: ownerKey, body });
  if (r.status !== 202) throw new Error(`seed publication: ${r.status} ${r.text}`);
  return { id: r.body.data.publication.id };
}
/** A published fresh bucket with a pending custom domain (owner's key): its id as domain_id. */
async function seedDomain(t: TestPier, ownerKey: string, b: Bucket): Promise<Record<string, string>> {
  await seedPublication(t, ownerKey, b);
  const r = await t.api("POST", `/api/v1/buckets/${b.id}/custom_domains`, { key: ownerKey, body: { hostname: `www.${b.id.replace("_", "-")}.example.com` } });
  if (r.status !== 201 && r.status !== 200) throw new Error(`seed custom domain: ${r.status} ${r.text}`);
  return { domain_id: r.body.data.custom_domain.id };
}
/** A publication of the fresh bucket with one built deploy (owner's key): its id and deploy_id. */
async function seedDeploy(t: TestPier, ownerKey: string, b: Bucket): Promise<Record<string, string>> {
  await seedFile(t, ownerKey, b);
  const id = (await seedPublication(t, ownerKey, b)).id!;
  await t.pier.runner.drain();
  const r = await t.api("GET", `/api/v1/publications/${id}/deploys`, { key: ownerKey });
  const deployId = r.body?.data?.deploys?.[0]?.id;
  if (!deployId) throw new Error(`seed deploy: ${r.status} ${r.text}`);
  return { id, deploy_id: deployId };
}
const deployRoute = {
  bucketInBody: true,
  notFoundCode: "PUBLICATION_NOT_FOUND",
  params: (b: Bucket, c: { t: TestPier; ownerKey: string }) => seedDeploy(c.t, c.ownerKey, b),
};
const pubRoute = {
  bucketInBody: true,
  notFoundCode: "PUBLICATION_NOT_FOUND",
  params: (b: Bucket, c: { t: TestPier; ownerKey: string }) => seedPublication(c.t, c.ownerKey, b),
};

/** A publish session of the fresh bucket (owner's key) whose one file is already stored. */
async function seedPublishSession(t: TestPier, ownerKey: string, b: Bucket): Promise<Record<string, string>> {
  const r = await t.api("POST", "/api/v1/publish_sessions", { key: ownerKey, body: { bucket_id: b.id, files: [{ path: "index.html", ...declared }] } });
  if (r.status !== 201) throw new Error(`seed publish session: ${r.status} ${r.text}`);
  for (const u of r.body.data.publish_session.uploads) {
    const put = await fetch(u.upload.url, { method: "PUT", headers: u.upload.headers, body: fileBytes });
    if (!put.ok) throw new Error(`upload: ${put.status}`);
  }
  return { id: r.body.data.publish_session.id };
}
const sessionRoute = {
  bucketInBody: true,
  notFoundCode: "PUBLISH_SESSION_NOT_FOUND",
  params: (b: Bucket, c: { t: TestPier; ownerKey: string }) => seedPublishSession(c.t, c.ownerKey, b),
};

const closedGitRemote = "https://127.0.0.1:9/repo.git";
/** The fresh bucket connected (export) to a repository with the owner's key. */
async function seedGitSync(b: Bucket, c: { t: TestPier; ownerKey: string }): Promise<Record<string, string>> {
  const r = await c.t.api("POST", `/api/v1/buckets/${b.id}/github_sync`, { key: c.ownerKey, body: { direction: "export", repository_url: closedGitRemote } });
  // The "no credential" walk calls every route on one bucket: connected once is enough.
  if (r.status !== 202 && r.body?.error?.code !== "GIT_SYNC_ALREADY_CONNECTED") throw new Error(`seed git sync: ${r.status} ${r.text}`);
  return {};
}

// method + path -> what it needs. Adding a route means adding its line here.
/** A visitor's submission stored in the fresh bucket (as the site endpoint stores one). */
function seedSubmission(b: Bucket, { t }: { t: TestPier }): Record<string, string> {
  const bucket = t.pier.deps.db.select().from(buckets).where(eq(buckets.id, b.id)).get()!;
  const { row } = storeSubmission(t.pier.deps, {
    bucketId: b.id,
    accountId: bucket.accountId,
    formName: "contact",
    value: { fields: { email: "v@example.com", message: "hi" }, context: { document_path: null, document_page: null, document_selection: null } },
  });
  return { submission_id: row.id };
}

const expectations: Record<string, Expectation> = {
  "GET /docs": { auth: "none" },
  "GET /docs/json": { auth: "none" },
  "GET /docs/assets/scalar.js": { auth: "none" },
  "GET /docs/errors": { auth: "none" },
  "GET /docs/guides": { auth: "none" },
  "GET /docs/guides/:name": { auth: "none" },
  "GET /": { auth: "public" },
  "GET /api/v1/status": { auth: "public" },
  "GET /api/v1/agent_auth/status": { auth: "any" },
  "GET /api/v1/buckets": { auth: "bucket_read" },
  "POST /api/v1/buckets": { auth: "bucket_admin", accountWide: true, body: () => ({ bucket: { title: "made by scope test" } }) },
  "POST /api/v1/buckets/bulk": { auth: "bucket_admin", body: (b) => ({ operation: "archive", bucket_ids: [b.id] }) },
  "GET /api/v1/buckets/:id": { auth: "bucket_read" },
  "PATCH /api/v1/buckets/:id": { auth: "bucket_admin", body: () => ({ bucket: { description: "changed" } }) },
  "DELETE /api/v1/buckets/:id": { auth: "bucket_admin", body: (b) => ({ confirmation: b.delete.confirmation }) },
  "POST /api/v1/buckets/:id/archive": { auth: "bucket_admin" },
  "POST /api/v1/buckets/:id/unarchive": { auth: "bucket_admin" },
  "POST /api/v1/buckets/:id/lock": { auth: "bucket_write", body: () => ({ message: "scope test", duration_seconds: 60 }) },
  "DELETE /api/v1/buckets/:id/lock": { auth: "bucket_write" },
  "POST /api/v1/buckets/:id/visibility_change_lock": { auth: "bucket_admin", body: () => ({ reason: "scope test" }) },
  "GET /api/v1/buckets/:id/variables": { auth: "bucket_read" },
  "GET /api/v1/buckets/:id/inbound_email": { auth: "bucket_read" },
  "GET /api/v1/buckets/:id/inbound_email/messages": { auth: "bucket_read" },
  "PATCH /api/v1/buckets/:id/variables": { auth: "bucket_admin", body: () => ({ variables: { A: "1" }, secrets: { S: "2" } }) },
  "GET /api/v1/tags": { auth: "bucket_read" },
  "GET /api/v1/api_keys": { auth: "bucket_admin", accountWide: true },
  "POST /api/v1/api_keys": { auth: "bucket_admin", accountWide: true, body: () => ({ label: "scope test", permission_scope: "bucket_read" }) },
  "DELETE /api/v1/api_keys/:id": {
    auth: "bucket_admin",
    accountWide: true,
    params: async (_b, { t, ownerKey }) => {
      const r = await t.api("POST", "/api/v1/api_keys", { key: ownerKey, body: { label: "to revoke" } });
      return { id: r.body.data.key.id };
    },
  },
  "GET /api/v1/buckets/templates": { auth: "bucket_read" },
  "POST /api/v1/buckets/from_template": { auth: "bucket_admin", accountWide: true, body: () => ({ template: "landing" }) },
  "GET /api/v1/buckets/:id/files": { auth: "bucket_read" },
  "POST /api/v1/buckets/:id/files": {
    auth: "bucket_write",
    params: async (b, { t, ownerKey }) => {
      // Bytes of this bucket's own, PUT every time: content deduplicated from another bucket
      // would not count for a key limited to this one.
      const bytes = `hello ${b.id}`;
      const blob = {
        byte_size: Buffer.byteLength(bytes),
        content_type: "text/plain",
        checksum: new Bun.CryptoHasher("md5").update(bytes).digest("base64"),
        sha256: new Bun.CryptoHasher("sha256").update(bytes).digest("hex"),
      };
      const d = await t.api("POST", "/api/v1/direct_uploads", { key: ownerKey, body: { bucket_id: b.id, path: "up.txt", blob } });
      const put = await fetch(d.body.data.upload.url, { method: "PUT", headers: d.body.data.upload.headers, body: bytes });
      if (!put.ok) throw new Error(`upload: ${put.status}`);
      return { signed_blob_id: d.body.data.signed_blob_id };
    },
    body: (_b, p) => ({ signed_blob_id: p.signed_blob_id }),
  },
  "GET /api/v1/buckets/:id/files/by_path": { auth: "bucket_read", params: (b, c) => seedFile(c.t, c.ownerKey, b), query: "path=notes.txt" },
  "POST /api/v1/buckets/:id/files/reorganize": {
    auth: "bucket_write",
    params: (b, c) => seedFile(c.t, c.ownerKey, b),
    body: () => ({ operations: [{ op: "copy", from: "notes.txt", to: "notes-copy.txt" }] }),
  },
  "POST /api/v1/buckets/:id/files/append_text": { auth: "bucket_write", body: () => ({ path: "log.txt", text: "line\n", create: true }) },
  "POST /api/v1/buckets/:id/files/lock": {
    auth: "bucket_write",
    params: (b, c) => seedFile(c.t, c.ownerKey, b),
    body: () => ({ paths: ["notes.txt"], message: "scope test" }),
  },
  "GET /api/v1/buckets/:id/files/:file_id": { auth: "bucket_read", params: (b, c) => seedFile(c.t, c.ownerKey, b) },
  "GET /api/v1/buckets/:id/files/:file_id/versions": { auth: "bucket_read", params: (b, c) => seedFile(c.t, c.ownerKey, b) },
  "DELETE /api/v1/buckets/:id/files/:file_id": { auth: "bucket_write", params: (b, c) => seedFile(c.t, c.ownerKey, b) },
  "POST /api/v1/buckets/:id/files/:file_id/rename": {
    auth: "bucket_write",
    params: (b, c) => seedFile(c.t, c.ownerKey, b),
    body: () => ({ path: "renamed.txt" }),
  },
  "POST /api/v1/buckets/:id/files/:file_id/copy": {
    auth: "bucket_write",
    params: (b, c) => seedFile(c.t, c.ownerKey, b),
    body: () => ({ path: "copied.txt" }),
  },
  "POST /api/v1/buckets/:id/files/:file_id/move": { auth: "bucket_write", params: (b, c) => seedFile(c.t, c.ownerKey, b), body: () => ({ path: "moved.txt" }) },
  "DELETE /api/v1/buckets/:id/files/:file_id/lock": { auth: "bucket_write", params: (b, c) => seedFile(c.t, c.ownerKey, b) },
  "POST /api/v1/direct_uploads": { auth: "bucket_write", bucketInBody: true, body: (b) => ({ bucket_id: b.id, path: "direct.txt", blob: declared }) },
  "POST /api/v1/buckets/:id/upload_sessions": { auth: "bucket_write", body: () => ({ delete_missing: false, expected_file_count: 1 }) },
  "GET /api/v1/buckets/:id/upload_sessions/:sid": { auth: "bucket_write", params: (b, c) => seedSession(c.t, c.ownerKey, c.key, b) },
  "POST /api/v1/buckets/:id/upload_sessions/:sid/uploads": {
    auth: "bucket_write",
    params: (b, c) => seedSession(c.t, c.ownerKey, c.key, b),
    body: () => ({ files: [{ path: "s.txt", ...declared }] }),
  },
  "POST /api/v1/buckets/:id/upload_sessions/:sid/finalize_batch": {
    auth: "bucket_write",
    params: (b, c) => seedSession(c.t, c.ownerKey, c.key, b),
    body: () => ({}),
  },
  "POST /api/v1/buckets/:id/upload_sessions/:sid/finalize": {
    auth: "bucket_write",
    params: (b, c) => seedSession(c.t, c.ownerKey, c.key, b),
    body: () => ({ complete: false }),
  },
  "GET /api/v1/buckets/:id/versions": { auth: "bucket_read" },
  "POST /api/v1/buckets/:id/versions/restore": {
    auth: "bucket_write",
    params: (b, c) => seedFile(c.t, c.ownerKey, b),
    body: (_b, p) => ({ version_id: p.version_id, comment: "scope test" }),
  },
  "GET /api/v1/buckets/:id/versions/:version_id": { auth: "bucket_read", params: (b, c) => seedFile(c.t, c.ownerKey, b) },
  "GET /api/v1/buckets/:id/versions/:version_id/files": { auth: "bucket_read", params: (b, c) => seedFile(c.t, c.ownerKey, b) },
  "POST /api/v1/buckets/:id/publication": { auth: "bucket_admin", body: () => ({ site_mode: "static" }) },
  "POST /api/v1/buckets/:id/publication/preview": { auth: "bucket_admin", body: () => ({ expires_in_minutes: 5 }) },
  "POST /api/v1/buckets/:id/publication/retry": {
    auth: "bucket_admin",
    // An empty bucket's build fails: retry is then allowed.
    params: async (b, c) => {
      await seedPublication(c.t, c.ownerKey, b);
      await c.t.pier.runner.drain();
      return {};
    },
  },
  "DELETE /api/v1/buckets/:id/publication": {
    auth: "bucket_admin",
    params: async (b, c) => {
      await seedPublication(c.t, c.ownerKey, b);
      return {};
    },
  },
  "PATCH /api/v1/buckets/:id/custom_domains/public_slug": {
    auth: "bucket_admin",
    params: async (b, c) => {
      await seedPublication(c.t, c.ownerKey, b);
      return {};
    },
    body: () => ({ public_slug: `renamed-${Math.random().toString(36).slice(2, 12)}` }),
  },
  "GET /api/v1/buckets/:id/custom_domains": { auth: "bucket_read" },
  "POST /api/v1/buckets/:id/custom_domains": {
    auth: "bucket_admin",
    params: async (b, c) => {
      await seedPublication(c.t, c.ownerKey, b);
      return {};
    },
    body: (b) => ({ hostname: `shop.${b.id.replace("_", "-")}.example.com` }),
  },
  "GET /api/v1/buckets/:id/custom_domains/:domain_id": {
    auth: "bucket_read",
    params: (b, c) => seedDomain(c.t, c.ownerKey, b),
    notFoundCode: "BUCKET_NOT_FOUND",
  },
  "POST /api/v1/buckets/:id/custom_domains/:domain_id/refresh": { auth: "bucket_admin", params: (b, c) => seedDomain(c.t, c.ownerKey, b) },
  "DELETE /api/v1/buckets/:id/custom_domains/:domain_id": { auth: "bucket_admin", params: (b, c) => seedDomain(c.t, c.ownerKey, b) },
  "GET /api/v1/publications": { auth: "bucket_read" },
  "GET /api/v1/publications/:id": { auth: "bucket_read", ...pubRoute },
  "GET /api/v1/publications/:id/manifest": { auth: "bucket_read", ...pubRoute },
  "PATCH /api/v1/publications/:id": { auth: "bucket_admin", ...pubRoute, body: () => ({ title: "changed by scope test" }) },
  "GET /api/v1/publications/:id/access": { auth: "bucket_admin", ...pubRoute },
  "PATCH /api/v1/publications/:id/access": { auth: "bucket_admin", ...pubRoute, body: () => ({ access_mode: "public" }) },
  "POST /api/v1/publications/:id/recipient_links": {
    auth: "bucket_admin",
    ...pubRoute,
    params: (b, c) => seedPublication(c.t, c.ownerKey, b, { access_mode: "require_email" }),
    body: () => ({ emails: ["reader@example.com"] }),
  },
  "POST /api/v1/publish_sessions": {
    auth: "bucket_admin",
    bucketInBody: true,
    body: (b) => ({ bucket_id: b.id, files: [{ path: "index.html", ...declared }] }),
  },
  "POST /api/v1/publish_sessions/:id/finalize": { auth: "bucket_admin", ...sessionRoute },
  "POST /api/v1/publish_sessions/:id/uploads/refresh": { auth: "bucket_admin", ...sessionRoute },
  "PUT /_storage/:token": { auth: "signed" },
  "GET /_storage/:token": { auth: "signed" },
  "HEAD /_storage/:token": { auth: "signed" },
  "GET /livez": { auth: "probe" },
  "GET /readyz": { auth: "probe" },
  "GET /metrics": { auth: "signed" },
  // OAuth and hosted MCP (docs/agents.md). The JSON endpoints follow the OAuth RFCs and are public;
  // /mcp checks its bearer credential itself (401 with WWW-Authenticate) and serves any scope.
  "GET /.well-known/oauth-authorization-server": { auth: "public" },
  "GET /.well-known/oauth-protected-resource": { auth: "public" },
  "GET /.well-known/oauth-protected-resource/mcp": { auth: "public" },
  "POST /oauth/register": { auth: "public" },
  "POST /oauth/device_authorization": { auth: "public" },
  "POST /oauth/token": { auth: "public" },
  "POST /oauth/revoke": { auth: "public" },
  "OPTIONS /.well-known/oauth-authorization-server": { auth: "public" },
  "OPTIONS /.well-known/oauth-protected-resource": { auth: "public" },
  "OPTIONS /.well-known/oauth-protected-resource/mcp": { auth: "public" },
  "OPTIONS /oauth/register": { auth: "public" },
  "OPTIONS /oauth/token": { auth: "public" },
  "OPTIONS /oauth/device_authorization": { auth: "public" },
  "OPTIONS /oauth/revoke": { auth: "public" },
  "OPTIONS /mcp": { auth: "public" },
  "POST /mcp": { auth: "any", body: () => ({ jsonrpc: "2.0", id: 1, method: "tools/list" }) },
  "GET /mcp": { auth: "public" },
  "DELETE /mcp": { auth: "public" },
  "GET /oauth/device": { auth: "page", signedIn: true },
  "POST /oauth/device": { auth: "page", signedIn: true },
  "GET /oauth/authorize": { auth: "page" },
  "POST /oauth/authorize": { auth: "page", signedIn: true },
  "GET /oauth/connections": { auth: "page", signedIn: true },
  "POST /oauth/connections/:id/revoke": { auth: "page", signedIn: true },
  "GET /api/v1/oauth/connections": { auth: "session" },
  "DELETE /api/v1/oauth/connections/:id": { auth: "session", params: () => ({ id: "cxn_doesnotexist0000000" }) },
  "GET /api/v1/agent_auth/capabilities": { auth: "public" },
  "POST /api/v1/agent_auth/request_code": { auth: "public" },
  "POST /api/v1/agent_auth/verify_code": { auth: "public" },
  "POST /api/v1/agent_auth/browser_login_link": { auth: "bucket_admin", accountWide: true, body: () => ({ redirect_path: "/dashboard" }) },
  "GET /login_link/:token": { auth: "page", params: () => ({ token: "not-a-real-token" }) },
  "POST /login_link/:token": { auth: "page", params: () => ({ token: "not-a-real-token" }) },
  "GET /api/v1/agent_auth/activity": { auth: "bucket_admin", accountWide: true },
  "GET /api/v1/notifications": { auth: "bucket_read", accountWide: true },
  "GET /api/v1/account": { auth: "bucket_read" },
  "PATCH /api/v1/account": { auth: "bucket_admin", accountWide: true, body: () => ({ time_zone: "UTC" }) },
  "POST /dashboard/account/time-zone": { auth: "page", signedIn: true },
  "POST /dashboard/account/switch": { auth: "page", signedIn: true },
  "GET /signin": { auth: "page" },
  "POST /signin": { auth: "page" },
  "GET /signin/two-factor": { auth: "page" },
  "POST /signin/two-factor": { auth: "page" },
  "GET /signup": { auth: "page" },
  "POST /signup": { auth: "page" },
  "POST /signout": { auth: "page" },
  "GET /dashboard": { auth: "page", signedIn: true },
  "GET /dashboard/*": { auth: "page", signedIn: true },
  "GET /account/access": { auth: "page", signedIn: true },
  "GET /account/security": { auth: "page", signedIn: true },
  "POST /account/security/totp/enroll": { auth: "page", signedIn: true },
  "POST /account/security/totp/confirm": { auth: "page", signedIn: true },
  "POST /account/security/totp/disable": { auth: "page", signedIn: true },
  "GET /account/confirm-password": { auth: "page", signedIn: true },
  "POST /account/confirm-password": { auth: "page", signedIn: true },
  "GET /dashboard/buckets": { auth: "page", signedIn: true },
  "POST /dashboard/buckets": { auth: "page", signedIn: true },
  "GET /dashboard/buckets/:id": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/inbound": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/archive": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/unarchive": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/delete": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/bulk": { auth: "page", signedIn: true },
  "GET /dashboard/buckets/:id/settings": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/settings/details": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/settings/metadata": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/settings/tags/add": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/settings/tags/remove": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/settings/variables/set": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/settings/variables/delete": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/settings/lock": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/settings/lock/remove": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/settings/visibility/lock": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/settings/visibility/unlock": { auth: "page", signedIn: true },
  "GET /dashboard/assets/:name": { auth: "page", params: () => ({ name: "dashboard.js" }) },
  "GET /dashboard/buckets/:id/domains": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/domains": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/domains/:domain_id/refresh": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/domains/:domain_id/delete": { auth: "page", signedIn: true },

  "GET /dashboard/buckets/:id/files": { auth: "page", signedIn: true },
  "GET /dashboard/buckets/:id/files/:fileId": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/files/entries": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/files/new": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/files/:fileId/rename": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/files/:fileId/copy": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/files/:fileId/delete": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/files/:fileId/lock": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/files/:fileId/unlock": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/files/:fileId/append": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/files/:fileId/edit": { auth: "page", signedIn: true },
  "GET /dashboard/buckets/:id/versions": { auth: "page", signedIn: true },
  "GET /dashboard/buckets/:id/versions/:versionId": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/versions/:versionId/restore": { auth: "page", signedIn: true },

  "GET /dashboard/buckets/:id/site": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/site/publish": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/site/preview": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/site/preview-end": { auth: "page", signedIn: true },
  "GET /dashboard/buckets/:id/site/leads.csv": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/site/unpublish": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/site/retry": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/site/mode": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/site/settings": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/site/expiry": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/site/slug": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/site/access": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/site/password": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/site/recipient-links": { auth: "page", signedIn: true },
  "GET /dashboard/buckets/:id/email": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/email/address": { auth: "page", signedIn: true },
  "GET /dashboard/buckets/:id/email/:message": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/email/:message/read": { auth: "page", signedIn: true },
  "GET /dashboard/buckets/:id/email/:message/body": { auth: "page", signedIn: true },
  "GET /dashboard/buckets/:id/email/:message/original": { auth: "page", signedIn: true },
  "GET /dashboard/buckets/:id/email/:message/attachments/:n": { auth: "page", signedIn: true },

  "GET /dashboard/account": { auth: "page", signedIn: true },
  "GET /dashboard/account/keys": { auth: "page", signedIn: true },
  "POST /dashboard/account/keys": { auth: "page", signedIn: true },
  "POST /dashboard/account/keys/:id/revoke": { auth: "page", signedIn: true },
  "GET /dashboard/account/agents": { auth: "page", signedIn: true },
  "POST /dashboard/account/agents/:id/revoke": { auth: "page", signedIn: true },
  "GET /dashboard/account/notifications": { auth: "page", signedIn: true },
  "GET /dashboard/account/security": { auth: "page", signedIn: true },
  "POST /dashboard/account/security/password": { auth: "page", signedIn: true },
  "POST /dashboard/account/security/sign-out-everywhere": { auth: "page", signedIn: true },
  "GET /dashboard/admin": { auth: "page", signedIn: true },
  "POST /dashboard/admin/invites": { auth: "page", signedIn: true },
  "POST /dashboard/admin/users/:id/admin-on": { auth: "page", signedIn: true },
  "POST /dashboard/admin/users/:id/admin-off": { auth: "page", signedIn: true },
  "POST /dashboard/admin/users/:id/reset-2fa": { auth: "page", signedIn: true },
  "POST /dashboard/admin/users/:id/disable": { auth: "page", signedIn: true },
  "POST /dashboard/admin/users/:id/enable": { auth: "page", signedIn: true },
  "GET /dashboard/admin/plans": { auth: "page", signedIn: true },
  "POST /dashboard/admin/plans/accounts/:id": { auth: "page", signedIn: true },
  "GET /dashboard/admin/outbox": { auth: "page", signedIn: true },
  "GET /dashboard/admin/outbox/:id": { auth: "page", signedIn: true },
  "GET /dashboard/admin/health": { auth: "page", signedIn: true },
  "POST /dashboard/admin/health/jobs/:id/retry": { auth: "page", signedIn: true },

  "GET /api/v1/analytics": { auth: "bucket_read", query: "range=7d" },
  "GET /api/v1/publications/:id/analytics": { auth: "bucket_read", ...pubRoute, query: "range=24h" },
  "GET /dashboard/buckets/:id/analytics": { auth: "page", signedIn: true },
  "GET /dashboard/analytics": { auth: "page", signedIn: true },

  "GET /api/v1/publications/:id/deploys": { auth: "bucket_read", ...pubRoute },
  "GET /api/v1/publications/:id/deploys/:deploy_id": { auth: "bucket_read", ...deployRoute },
  "POST /api/v1/publications/:id/rollback": { auth: "bucket_admin", ...deployRoute, body: (_b, params) => ({ deploy_id: params.deploy_id }) },
  "POST /dashboard/buckets/:id/site/rollback": { auth: "page", signedIn: true },

  "GET /api/v1/buckets/:id/form_submissions": { auth: "bucket_write" },
  "GET /api/v1/buckets/:id/form_submissions/:submission_id": { auth: "bucket_write", params: seedSubmission },
  "PATCH /api/v1/buckets/:id/form_submissions/:submission_id": {
    auth: "bucket_write",
    params: seedSubmission,
    body: () => ({ fields: { message: "edited" } }),
  },
  "POST /api/v1/buckets/:id/form_submissions/:submission_id/reply": { auth: "bucket_write", params: seedSubmission, body: () => ({ message: "Thanks" }) },
  "DELETE /api/v1/buckets/:id/form_submissions/:submission_id": { auth: "bucket_write", params: seedSubmission },
  "GET /dashboard/buckets/:id/forms": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/forms/settings": { auth: "page", signedIn: true },
  "GET /dashboard/buckets/:id/forms/submissions.csv": { auth: "page", signedIn: true },
  "GET /dashboard/buckets/:id/forms/:sid": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/forms/:sid/reply": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/forms/:sid/fields": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/forms/:sid/delete": { auth: "page", signedIn: true },

  // Git sync (docs/git-sync.md). The repository is a closed loopback port: a queued sync fails
  // there without leaving the machine.
  "GET /api/v1/buckets/:id/github_sync": { auth: "bucket_read" },
  "GET /api/v1/buckets/:id/github_sync/setup": { auth: "bucket_read" },
  "POST /api/v1/buckets/:id/github_sync": { auth: "bucket_admin", body: () => ({ direction: "export", repository_url: closedGitRemote }) },
  "POST /api/v1/buckets/:id/github_sync/export": { auth: "bucket_admin", body: () => ({ repository_url: closedGitRemote }) },
  "PATCH /api/v1/buckets/:id/github_sync": { auth: "bucket_admin", params: seedGitSync, body: () => ({ auto_publish: true }) },
  "POST /api/v1/buckets/:id/github_sync/sync": { auth: "bucket_write", params: seedGitSync, body: () => ({}) },
  "DELETE /api/v1/buckets/:id/github_sync": { auth: "bucket_admin", params: seedGitSync },
  "POST /api/v1/git_sync/webhooks/:connection_id": { auth: "public", params: () => ({ connection_id: "gsc_unknown" }) },
  "GET /dashboard/buckets/:id/git": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/git/connect": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/git/credential": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/git/sync": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/git/resolve": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/git/publish": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/git/disconnect": { auth: "page", signedIn: true },
  // The GitHub App (off in this test server: the webhook answers GITHUB_NOT_CONFIGURED).
  "POST /api/v1/git_sync/github/webhook": { auth: "public" },
  "GET /dashboard/buckets/:id/git/github/install": { auth: "page", signedIn: true },
  "GET /dashboard/buckets/:id/git/github/authorize": { auth: "page", signedIn: true },
  "GET /dashboard/git/github/callback": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/git/github/connect": { auth: "page", signedIn: true },
  "POST /dashboard/buckets/:id/git/github/export": { auth: "page", signedIn: true },
};

const scopes: Scope[] = ["bucket_read", "bucket_write", "bucket_admin"];
const isScope = (a: string): a is Scope => (scopes as string[]).includes(a);

interface Route {
  method: string;
  path: string;
  declared: unknown;
}

let t: TestPier;
let owner: TestUser;
let stranger: TestUser;
let routes: Route[];
const keys = {} as Record<Scope, string>;
let selectedElsewhere: string;

beforeAll(async () => {
  // Every route call may publish a fresh bucket: lift the plan's live-site cap for this walk.
  const plansFile = join(mkdtempSync(join(tmpdir(), "pier-plans-")), "plans.json");
  writeFileSync(
    plansFile,
    JSON.stringify([{ id: "pro", entitlements: { max_live_sites: 100_000, max_protected_sites: 100_000, max_custom_domains: 100_000 } }]),
  );
  // The git sync routes are seeded with a closed loopback remote: private addresses allowed.
  t = await startTestPier({
    rateLimitPerMinute: 1_000_000,
    publishRateLimitPerMinute: 1_000_000,
    uploadRateLimitPerMinute: 1_000_000,
    plansFile,
    gitAllowPrivateNetwork: "on",
  });
  owner = await t.user({ plan: "pro" });
  stranger = await t.user({ plan: "pro" });
  for (const s of scopes) keys[s] = t.key(owner, { scope: s });
  const elsewhere = await newBucket();
  selectedElsewhere = t.key(owner, { scope: "bucket_admin", bucketAccess: "selected", bucketPermissions: { [elsewhere.id]: "admin" } });
  routes = (t.pier.app.routes as Array<{ method: string; path: string; hooks?: { detail?: Record<string, unknown> } }>).map((r) => ({
    method: r.method,
    path: r.path,
    declared: r.hooks?.detail?.["x-pier-auth"],
  }));
});
afterAll(() => t.stop());

let n = 0;
const newBucket = (): Promise<Bucket> => createBucket(t, owner, { title: `scope-bucket-${++n}-${Math.random().toString(36).slice(2)}` });

const routeKey = (r: Route) => `${r.method} ${r.path}`;
const isBucketRoute = (path: string, method = "") => path.startsWith("/api/v1/buckets/:id") || !!expectations[`${method} ${path}`]?.bucketInBody;

async function call(r: Route, key: string | undefined, b: Bucket): Promise<ApiResult> {
  const e = expectations[routeKey(r)]!;
  const params: Record<string, string> = {
    ...(isBucketRoute(r.path, r.method) ? { id: b.id } : {}),
    ...(await e.params?.(b, { t, ownerKey: owner.key, key })),
  };
  const path = r.path.replace(/:(\w+)/g, (_, name: string) => {
    if (params[name] === undefined) throw new Error(`${routeKey(r)}: the expectation table must give a value for :${name}`);
    return encodeURIComponent(params[name]!);
  });
  return t.api(r.method, e.query ? `${path}?${e.query}` : path, { key, body: e.body?.(b, params) });
}

const show = (r: Route, who: string, res: ApiResult) => `${routeKey(r)} as ${who}: ${res.status} ${res.body?.error?.code ?? ""}`;

describe("route table", () => {
  test("every route declares x-pier-auth and it matches the expectation table", () => {
    expect(routes.length).toBeGreaterThan(10);
    const problems: string[] = [];
    for (const r of routes) {
      const e = expectations[routeKey(r)];
      if (!e) problems.push(`${routeKey(r)}: no entry in the expectation table (declares ${String(r.declared)})`);
      else if (e.auth === "none") {
        if (!r.path.startsWith("/docs")) problems.push(`${routeKey(r)}: only /docs pages may skip the auth macro`);
        if (r.declared !== undefined) problems.push(`${routeKey(r)}: declares ${String(r.declared)}, table says none`);
      } else if (e.auth === "page") {
        if (r.path.startsWith("/api/")) problems.push(`${routeKey(r)}: API routes must use the auth macro, not page auth`);
        if (r.declared !== undefined) problems.push(`${routeKey(r)}: declares ${String(r.declared)}, table says page`);
      } else if (r.declared !== e.auth) problems.push(`${routeKey(r)}: declares ${String(r.declared)}, table says ${e.auth}`);
    }
    const served = new Set(routes.map(routeKey));
    for (const k of Object.keys(expectations)) if (!served.has(k)) problems.push(`${k}: in the table but not served (stale entry)`);
    expect(problems).toEqual([]);
  });

  test("signed-in pages send anonymous visitors to sign in and never act for them", async () => {
    const problems: string[] = [];
    for (const r of routes) {
      const e = expectations[routeKey(r)];
      if (e?.auth !== "page" || !e.signedIn) continue;
      const path = r.path.replace("*", "anything").replace(/:(\w+)/g, "x");
      const res = await fetch(t.url + path, {
        method: r.method,
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: r.method === "GET" ? undefined : "",
      });
      const location = res.headers.get("location") ?? "";
      if (r.method === "GET" ? !(res.status === 303 || res.status === 302) || !location.startsWith("/signin") : res.status < 300 || res.status === 200)
        problems.push(`${routeKey(r)} anonymous: ${res.status} ${location}`);
    }
    expect(problems).toEqual([]);
  });

  test("without a credential, every non-public route is 401 UNAUTHORIZED", async () => {
    const b = await newBucket();
    const problems: string[] = [];
    for (const r of routes) {
      const auth = expectations[routeKey(r)]?.auth;
      if (!auth || auth === "none" || auth === "public" || auth === "signed" || auth === "probe" || auth === "page") continue;
      const res = await call(r, undefined, b);
      if (res.status !== 401 || res.body?.error?.code !== "UNAUTHORIZED") problems.push(show(r, "anonymous", res));
    }
    expect(problems).toEqual([]);
  });

  test("each scope gets exactly what it needs: too low is 403 FORBIDDEN, enough is never 401/403", async () => {
    const problems: string[] = [];
    for (const r of routes) {
      const auth = expectations[routeKey(r)]?.auth;
      if (!auth || auth === "none" || auth === "public" || auth === "signed" || auth === "probe" || auth === "page") continue;
      for (const s of scopes) {
        const res = await call(r, keys[s], await newBucket());
        const allowed = auth === "any" || (isScope(auth) && scopeRank[s] >= scopeRank[auth]);
        if (auth === "session" || !allowed) {
          if (res.status !== 403 || res.body?.error?.code !== "FORBIDDEN") problems.push(`${show(r, s, res)} (expected 403 FORBIDDEN)`);
        } else if (res.status >= 400) {
          // The table's bodies are valid and each call gets a fresh bucket: anything but
          // success means the scope was not enough (or the table's request is wrong).
          problems.push(`${show(r, s, res)} (expected success)`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test("a key limited to other buckets cannot see or touch this one", async () => {
    const problems: string[] = [];
    for (const r of routes) {
      const e = expectations[routeKey(r)];
      if (!e || !isScope(e.auth)) continue;
      const b = await newBucket();
      const res = await call(r, selectedElsewhere, b);
      if (isBucketRoute(r.path, r.method)) {
        const code = e.notFoundCode ?? "BUCKET_NOT_FOUND";
        if (res.status !== 404 || res.body.error.code !== code) problems.push(`${show(r, "selected elsewhere", res)} (expected 404 ${code})`);
      } else if (e.accountWide) {
        if (res.status !== 403 || res.body.error.code !== "FORBIDDEN") problems.push(`${show(r, "selected elsewhere", res)} (expected 403 FORBIDDEN)`);
      } else if (res.status >= 400 || res.text.includes(b.title)) {
        problems.push(`${show(r, "selected elsewhere", res)} (expected success without the bucket)`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("a per-bucket grant caps the key's scope on that bucket", async () => {
    const problems: string[] = [];
    for (const r of routes) {
      const e = expectations[routeKey(r)];
      if (!e || !isScope(e.auth) || !isBucketRoute(r.path, r.method)) continue;
      for (const [permission, grants] of [
        ["read", "bucket_read"],
        ["write", "bucket_write"],
        ["admin", "bucket_admin"],
      ] as const) {
        const b = await newBucket();
        const key = t.key(owner, { scope: "bucket_admin", bucketAccess: "selected", bucketPermissions: { [b.id]: permission } });
        const res = await call(r, key, b);
        if (scopeRank[grants] < scopeRank[e.auth]) {
          if (res.status !== 403 || res.body.error.code !== "FORBIDDEN") problems.push(`${show(r, `selected:${permission}`, res)} (expected 403 FORBIDDEN)`);
        } else if (res.status >= 400) {
          problems.push(`${show(r, `selected:${permission}`, res)} (expected success)`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  test("another account's key never reaches this account's buckets", async () => {
    const problems: string[] = [];
    for (const r of routes) {
      const e = expectations[routeKey(r)];
      if (!e || !isScope(e.auth)) continue;
      const b = await newBucket();
      const res = await call(r, stranger.key, b);
      if (isBucketRoute(r.path, r.method)) {
        const code = e.notFoundCode ?? "BUCKET_NOT_FOUND";
        if (res.status !== 404 || res.body.error.code !== code) problems.push(`${show(r, "stranger", res)} (expected 404 ${code})`);
      } else if (res.text.includes(b.title)) {
        problems.push(`${show(r, "stranger", res)} leaks the bucket`);
      }
      const still = await t.api("GET", `/api/v1/buckets/${b.id}`, { key: owner.key });
      if (still.status !== 200 || JSON.stringify(still.body.data.bucket).includes("changed") || still.body.data.bucket.archived) {
        problems.push(`${routeKey(r)} as stranger changed the bucket`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe("API reference", () => {
  test("/docs/json lists every API route with its scope and its JSON request body", async () => {
    const spec = (await (await fetch(`${t.url}/docs/json`)).json()) as any;
    const problems: string[] = [];
    for (const r of routes) {
      const e = expectations[routeKey(r)];
      if (!e || e.auth === "none" || e.auth === "page") continue; // browser pages are hidden from the API reference
      if (r.method === "OPTIONS") continue; // CORS preflights are not operations (the OpenAPI plugin leaves them out)
      const op = spec.paths[r.path.replace(/:(\w+)/g, "{$1}")]?.[r.method.toLowerCase()];
      if (!op) {
        problems.push(`${routeKey(r)}: missing from /docs/json`);
        continue;
      }
      if (op["x-pier-auth"] !== e.auth) problems.push(`${routeKey(r)}: x-pier-auth ${op["x-pier-auth"]}`);
      if (e.body && !op.requestBody?.content?.["application/json"]?.schema) problems.push(`${routeKey(r)}: no JSON request body schema`);
    }
    expect(problems).toEqual([]);
  });
});
