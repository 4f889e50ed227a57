// Publish a site straight through the publish services (the build job will do the same from a
// bucket version) and fetch its pages over real HTTP with a Host header.
import { expect } from "bun:test";
import type { AccessMode, SiteMode } from "../../src/db/schema";
import { activateDeploy, writeDeploy, type DeployFileInput } from "../../src/features/publish/deploys";
import { createPublication, setPublicationAccess, type PublicationRow } from "../../src/features/publish/publications";
import type { TestPier, TestUser } from "./pier";

let n = 0;

export interface PublishedSite {
  pub: PublicationRow;
  host: string;
  user: TestUser;
  password: string | null;
  deployId: string;
}

export async function publishSite(
  t: TestPier,
  o: {
    files: DeployFileInput[];
    slug?: string;
    kind?: "main" | "preview";
    siteMode?: SiteMode;
    access?: AccessMode;
    password?: string;
    expiresAt?: string | null;
    title?: string;
    /**
     * A title the API now refuses (line breaks, control characters), written to the database
     * as a bucket created before titles were checked still holds it.
     */
    storedTitle?: string;
    user?: TestUser;
  },
): Promise<PublishedSite> {
  const user = o.user ?? (await t.user());
  const b = await t.api("POST", "/api/v1/buckets", { key: user.key, body: { bucket: { title: o.title ?? "Site" } } });
  if (b.status !== 201) throw new Error(`bucket: ${b.text}`);
  if (o.storedTitle !== undefined) t.pier.deps.sqlite.query("UPDATE buckets SET title = ? WHERE id = ?").run(o.storedTitle, b.body.data.bucket.id);
  const slug = o.slug ?? `testsite-${Date.now().toString(36)}-${++n}`;
  const pub = createPublication(t.pier.deps, {
    bucketId: b.body.data.bucket.id,
    accountId: user.accountId,
    kind: o.kind ?? "main",
    slug,
    siteMode: o.siteMode,
    expiresAt: o.expiresAt,
    title: o.storedTitle ?? o.title,
  });
  let password: string | null = null;
  if (o.access && o.access !== "public") {
    const r = await setPublicationAccess(t.pier.deps, pub.id, { mode: o.access, password: o.password });
    password = o.password ?? r.generatedPassword;
  }
  const d = await writeDeploy(t.pier.deps, pub.id, o.files);
  activateDeploy(t.pier.deps, pub.id, d.deployId);
  const label = (o.kind ?? "main") === "preview" ? `preview-${slug}` : slug;
  return { pub, host: `${label}.${t.pier.deps.urls.sitesDomain}`, user, password, deployId: d.deployId };
}

/** GET (or any method) a path on a site host; redirects are not followed. */
export type SiteInit = Omit<RequestInit, "headers"> & { headers?: Record<string, string>; decompress?: boolean };
export function siteFetch(t: TestPier, host: string, path: string, init: SiteInit = {}): Promise<Response> {
  return fetch(`${t.url}${path}`, { redirect: "manual", ...init, headers: { host, ...init.headers } } as RequestInit);
}

/**
 * A site change (publish, rollback, access) reaches the answers of this process at once and
 * those of a serving worker (PIER_TEST_WORKERS) within its poll interval (docs/deployment.md §9):
 * without workers the first answer must already be `expected`; with them, one within 20 s.
 */
export async function expectServedBody(t: TestPier, host: string, path: string, expected: string): Promise<void> {
  const until = Date.now() + (t.servingWorkers > 1 ? 20_000 : 0);
  let body = await (await siteFetch(t, host, path)).text();
  while (body !== expected && Date.now() < until) {
    await Bun.sleep(50);
    body = await (await siteFetch(t, host, path)).text();
  }
  expect(body).toBe(expected);
}
