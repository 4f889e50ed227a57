// Agent identification headers end up in the account owner's activity log, from REST and MCP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t.stop());

const agentHeaders = {
  "user-agent": "pier-skill/2.1.0 (claude-code)",
  "x-pier-agent": "claude-code",
  "x-pier-agent-client": "pier-skill",
  "x-pier-agent-version": "2.1.0",
  "x-pier-agent-run-id": "run-42",
  "x-pier-agent-project": "website",
  "x-pier-agent-task": "publish docs",
};

describe("agent activity log", () => {
  test("REST and MCP requests are recorded per credential and identity; owner-only", async () => {
    const u = await t.user();
    for (let i = 0; i < 3; i++) expect((await t.api("GET", "/api/v1/buckets", { key: u.key, headers: agentHeaders })).status).toBe(200);
    await Bun.sleep(20); // the hook runs after the response is sent: let it see the old time
    t.clock.advance(31_000);
    await t.api("GET", "/api/v1/agent_auth/status", { key: u.key, headers: agentHeaders });

    const client = new Client({ name: "activity-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(t.pier.deps.urls.mcpUrl), {
        requestInit: { headers: { authorization: `Bearer ${u.key}`, "x-pier-agent": "cursor", "x-pier-agent-run-id": "run-7" } },
      }),
    );
    await client.callTool({ name: "pier_status", arguments: {} });
    await client.close();
    await Bun.sleep(20); // the hook runs after the response is sent

    const r = await t.api("GET", "/api/v1/agent_auth/activity", { key: u.key });
    expect(r.status).toBe(200);
    const rest = r.body.data.activity.find((a: any) => a.run_id === "run-42");
    expect(rest).toMatchObject({
      credential_kind: "api_key",
      agent: "claude-code",
      agent_client: "pier-skill",
      agent_version: "2.1.0",
      project: "website",
      task: "publish docs",
      user_agent: "pier-skill/2.1.0 (claude-code)",
      request_count: 4,
      last_request: "GET /api/v1/agent_auth/status",
    });
    const mcp = r.body.data.activity.find((a: any) => a.run_id === "run-7");
    expect(mcp).toMatchObject({ agent: "cursor", last_request: "POST /mcp" });
    expect(mcp.request_count).toBeGreaterThanOrEqual(1);

    const reader = t.key(u, { scope: "bucket_read" });
    const denied = await t.api("GET", "/api/v1/agent_auth/activity", { key: reader });
    expect(denied.status).toBe(403);
    // Another account sees nothing of it.
    const other = await t.user();
    const theirs = await t.api("GET", "/api/v1/agent_auth/activity", { key: other.key });
    expect(theirs.body.data.activity.filter((a: any) => a.run_id === "run-42")).toEqual([]);
  });
});
