// Keys, tokens and passwords never reach the log: a Pier logging everything at debug level is
// driven through sign-in, key creation, key use (good, wrong scope, revoked), MCP and the agent
// email-code flow, and no captured line contains any of the secrets.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createLogger } from "../../../src/core/log";
import { Browser } from "../../helpers/browser";
import { startTestPier, type TestPier } from "../../helpers/pier";

const lines: string[] = [];
let t: TestPier;
beforeAll(async () => {
  t = await startTestPier({}, { log: createLogger("debug", (l) => lines.push(l)) });
});
afterAll(() => t.stop());

test("no log line carries a key, token or password", async () => {
  const u = await t.user({ plan: "pro" });
  const secrets = [u.key, u.password];

  // Browser sign-in with the password, then a named key created over REST.
  const b = new Browser(t.url);
  expect((await b.submit("/signin", "/signin", { email: u.email, password: u.password })).status).toBe(303);
  expect((await new Browser(t.url).submit("/signin", "/signin", { email: u.email, password: `${u.password}-wrong` })).status).toBe(401);
  secrets.push(`${u.password}-wrong`);
  const created = await t.api("POST", "/api/v1/api_keys", { key: u.key, body: { label: "ci", permission_scope: "bucket_read" } });
  expect(created.status).toBe(201);
  const reader = created.body.data.api_key as string;
  secrets.push(reader);

  // Use: success, too low a scope, malformed body, unknown key, then revoked.
  expect((await t.api("GET", "/api/v1/buckets", { key: reader })).status).toBe(200);
  expect((await t.api("POST", "/api/v1/buckets", { key: reader, body: { bucket: { title: "x" } } })).status).toBe(403);
  expect((await t.api("POST", "/api/v1/buckets", { key: u.key, rawBody: "{" })).status).toBe(400);
  const forged = `${reader.slice(0, -4)}zzzz`;
  secrets.push(forged);
  expect((await t.api("GET", "/api/v1/buckets", { key: forged })).status).toBe(401);
  expect((await t.api("DELETE", `/api/v1/api_keys/${created.body.data.key.id}`, { key: u.key })).status).toBe(200);
  expect((await t.api("GET", "/api/v1/buckets", { key: reader })).status).toBe(401);

  // MCP with the key in the Authorization header.
  const mcp = await fetch(t.pier.deps.urls.mcpUrl.replace(t.pier.deps.urls.baseUrl, t.url), {
    method: "POST",
    headers: { authorization: `Bearer ${u.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "bucket_list", arguments: {} } }),
  });
  expect(mcp.status).toBe(200);

  // The email-code flow: the code goes to the outbox (a log line says so), never into the log.
  expect((await t.api("POST", "/api/v1/agent_auth/request_code", { body: { email: u.email } })).status).toBe(200);
  await Bun.sleep(50);
  const row = t.pier.deps.sqlite.query<{ text_body: string }, []>("SELECT text_body FROM mail_outbox ORDER BY rowid DESC LIMIT 1").get()!;
  const code = /\b(\d{8})\b/.exec(row.text_body)![1]!;
  secrets.push(code);
  const agent = await t.api("POST", "/api/v1/agent_auth/verify_code", { body: { email: u.email, code, label: "agent" } });
  expect(agent.status).toBe(200);
  secrets.push(agent.body.data.api_key);

  // The logger did capture: the outbox notice is there.
  expect(lines.some((l) => l.includes("outbound message stored in the outbox"))).toBe(true);
  const log = lines.join("\n");
  for (const s of secrets) expect(log.includes(s)).toBe(false);
});
