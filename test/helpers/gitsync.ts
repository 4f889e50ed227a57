// What the git sync tests read back from a bucket, and the signed-in browser the GitHub App's
// pages need: shared by their files.
import { Browser } from "./browser";
import type { TestPier, TestUser } from "./pier";

/** A file's text as the API serves it; null when the path is not in the bucket. */
export async function bucketText(t: TestPier, key: string, bucketId: string, path: string): Promise<string | null> {
  const r = await t.api("GET", `/api/v1/buckets/${bucketId}/files/by_path?path=${encodeURIComponent(path)}`, { key });
  if (r.status !== 302) return null;
  const res = await fetch(new URL(r.headers.get("location")!, t.url));
  return res.status === 200 ? res.text() : null;
}

/** How many versions the bucket has (one per sync that changed it). */
export async function versionCount(t: TestPier, key: string, bucketId: string): Promise<number> {
  const r = await t.api("GET", `/api/v1/buckets/${bucketId}/versions?limit=500`, { key });
  return r.body.data.versions.length;
}

/** A browser signed in to the dashboard as `user`. */
export async function signedInBrowser(t: TestPier, user: TestUser): Promise<Browser> {
  const browser = new Browser(t.url);
  const signin = await browser.submit("/signin", "/signin", { email: user.email, password: user.password });
  if (signin.status !== 303) throw new Error(`sign-in failed: ${signin.status}`);
  return browser;
}

/** The bucket's github_sync as the API answers it. */
export async function syncOf(t: TestPier, key: string, bucketId: string) {
  return (await t.api("GET", `/api/v1/buckets/${bucketId}/github_sync`, { key })).body.data.github_sync;
}

/** Ask for a sync, run the queued jobs, and answer the github_sync after it. */
export async function syncNowAndWait(t: TestPier, key: string, bucketId: string) {
  const r = await t.api("POST", `/api/v1/buckets/${bucketId}/github_sync/sync`, { key, body: {} });
  if (r.status !== 202) throw new Error(`sync request: ${r.status} ${r.text}`);
  await t.pier.runner.drain();
  return syncOf(t, key, bucketId);
}
