// Table-driven HTTP scenarios against an in-process Pier, in the spirit of PocketBase's
// tests/api.go (https://github.com/pocketbase/pocketbase/blob/master/tests/api.go): one row
// holds the request (method, URL, body, which credential) and what a client must see (status,
// error code, part of the JSON or a check). Rows that expect an error also prove that nothing
// was written when the table gives a `snapshot` of the stored state.
import { expect, test } from "bun:test";
import type { ApiResult, TestPier } from "./pier";

/** A value, or a function giving it once the server and its fixtures exist (after beforeAll). */
export type Later<T> = T | (() => T);

export interface Scenario {
  name: string;
  method: string;
  url: Later<string>;
  /** Sent as JSON. */
  body?: Later<unknown>;
  /** Sent as is, with a JSON content type unless `headers` say otherwise. */
  rawBody?: string;
  headers?: Record<string, string>;
  /** Which credential of the table's `credentials` sends the request; none when left out. */
  as?: string;
  status: number;
  /** `error.code` of the envelope; the envelope's request_id must also match X-Request-Id. */
  code?: string;
  /** Part of the JSON body that must match (toMatchObject), or a check of the whole answer. */
  expect?: Record<string, unknown> | ((r: ApiResult) => void | Promise<void>);
}

export interface ScenarioTable {
  /** The server (called at test time, after the file's beforeAll started it). */
  pier: () => TestPier;
  /** Named credentials rows refer to with `as`: API keys (sent as a Bearer token). */
  credentials?: () => Record<string, string>;
  /** Stored state that a refused request (status >= 400) must leave exactly as it was. */
  snapshot?: () => string;
}

const resolve = <T>(v: Later<T>): T => (typeof v === "function" ? (v as () => T)() : v);

/** Send one row's request and check the answer; the row's result for further checks. */
export async function runScenario(table: ScenarioTable, row: Scenario): Promise<ApiResult> {
  const t = table.pier();
  const credentials = table.credentials?.() ?? {};
  if (row.as !== undefined && !(row.as in credentials)) throw new Error(`scenario "${row.name}": no credential named "${row.as}"`);
  const url = resolve(row.url);
  const refused = row.status >= 400;
  const before = refused ? table.snapshot?.() : undefined;
  const r = await t.api(row.method, url, {
    key: row.as === undefined ? undefined : credentials[row.as],
    body: resolve(row.body),
    rawBody: row.rawBody,
    headers: row.headers,
  });
  // The row's name and request lead every comparison so a failure says which row broke.
  const where = `${row.name}: ${row.method} ${url}`;
  expect([where, r.status]).toEqual([where, row.status]);
  if (row.code !== undefined) {
    expect([where, r.body?.error?.code]).toEqual([where, row.code]);
    expect([where, r.body.error.request_id]).toEqual([where, r.headers.get("x-request-id")]);
  }
  if (typeof row.expect === "function") await row.expect(r);
  else if (row.expect !== undefined) expect(r.body).toMatchObject(row.expect);
  if (before !== undefined) expect([where, "stored state unchanged", table.snapshot!()]).toEqual([where, "stored state unchanged", before]);
  return r;
}

/** One bun test per row, named after it, inside the current describe. */
export function scenarios(table: ScenarioTable, rows: Scenario[]): void {
  for (const row of rows) test(row.name, async () => void (await runScenario(table, row)));
}
