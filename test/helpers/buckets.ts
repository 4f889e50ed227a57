// Small helpers for bucket tests: create buckets over the API and snapshot stored state so
// refused requests can be proven to change nothing.
import { expect } from "bun:test";
import type { TestPier, TestUser } from "./pier";

/** POST /api/v1/buckets as the user (or with the key); the created bucket. */
export async function createBucket(t: TestPier, as: TestUser | string, bucket: Record<string, unknown> = {}): Promise<any> {
  const key = typeof as === "string" ? as : as.key;
  const r = await t.api("POST", "/api/v1/buckets", { key, body: { bucket: { title: "Test bucket", ...bucket } } });
  expect(r.status).toBe(201);
  return r.body.data.bucket;
}

/** Every row that bucket endpoints can change (api_keys.last_used_at is deliberately left out). */
export function snapshot(t: TestPier): string {
  const db = t.pier.deps.sqlite;
  const tables = ["buckets", "bucket_variables", "bucket_locks", "deleted_buckets", "notifications", "jobs"];
  return JSON.stringify(Object.fromEntries(tables.map((name) => [name, db.query(`select * from ${name} order by rowid`).all()])));
}
