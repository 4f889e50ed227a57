// The custom-domain MCP tools with the official SDK client, against real DNS (challtestsrv):
// the same services and presenter as REST, so the agent sees the same records and states.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startChallTestSrv, type ChallTestSrv } from "../../helpers/challtestsrv";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";

let cts: ChallTestSrv;
let t: TestPier;
beforeAll(async () => {
  cts = await startChallTestSrv({ defaultIPv4: "" });
  t = await startTestPier({ dnsResolver: cts.dns });
});
afterAll(async () => {
  await t.stop();
  await cts.stop();
});

const json = (r: any) => JSON.parse(r.content[0].text);
async function connect(key: string) {
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(t.pier.deps.urls.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

test("custom_domain_add / get / refresh / list / remove: records to create, which one is found, active, removed", async () => {
  const user = await t.user({ plan: "pro" });
  const s = await publishSite(t, { user, files: [{ path: "index.html", bytes: new TextEncoder().encode("mcp"), contentType: "text/html" }] });
  const client = await connect(user.key);
  const tools = new Map((await client.listTools()).tools.map((x) => [x.name, x]));
  for (const name of ["custom_domain_list", "custom_domain_add", "custom_domain_get", "custom_domain_refresh", "custom_domain_remove"])
    expect(tools.has(name)).toBe(true);
  expect(tools.get("custom_domain_add")!.description).toContain("ALIAS");

  const added = json(await client.callTool({ name: "custom_domain_add", arguments: { bucket_id: s.pub.bucketId, hostname: "Docs.MCP-Test.com" } }));
  const d = added.custom_domain;
  expect(d.hostname).toBe("docs.mcp-test.com");
  expect(d.status).toBe("pending_validation");
  expect(added.limits.max_custom_domains).toBe(20);
  const args = { bucket_id: s.pub.bucketId, custom_domain_id: d.id };

  const txt = d.required_dns_records.find((r: any) => r.purpose === "ownership");
  await cts.setTxt(txt.name, txt.value);
  let r = json(await client.callTool({ name: "custom_domain_refresh", arguments: args }));
  expect(r.custom_domain.required_dns_records.map((x: any) => [x.purpose, x.found])).toEqual([
    ["ownership", true],
    ["traffic", false],
  ]);
  await cts.setCname("docs.mcp-test.com", "localhost");
  r = json(await client.callTool({ name: "custom_domain_refresh", arguments: args }));
  expect(r.custom_domain.status).toBe("active");
  expect(json(await client.callTool({ name: "custom_domain_get", arguments: args })).custom_domain.public_url).toBe(
    t.pier.deps.urls.siteUrl("docs.mcp-test.com"),
  );
  const list = json(await client.callTool({ name: "custom_domain_list", arguments: { bucket_id: s.pub.bucketId } }));
  expect(list.publication.public_url).toBe(t.pier.deps.urls.siteUrl("docs.mcp-test.com"));

  const removed = json(await client.callTool({ name: "custom_domain_remove", arguments: args }));
  expect(removed.removed).toBe(true);
  const gone = await client.callTool({ name: "custom_domain_get", arguments: args });
  expect(gone.isError).toBe(true);
  expect((gone.structuredContent as any).error.code).toBe("CUSTOM_DOMAIN_NOT_FOUND");
});

test("a read-only key lists domains but cannot add one", async () => {
  const user = await t.user({ plan: "pro" });
  const s = await publishSite(t, { user, files: [{ path: "index.html", bytes: new TextEncoder().encode("ro"), contentType: "text/html" }] });
  const client = await connect(t.key(user, { scope: "bucket_read" }));
  expect(json(await client.callTool({ name: "custom_domain_list", arguments: { bucket_id: s.pub.bucketId } })).custom_domains).toEqual([]);
  const refused = await client.callTool({ name: "custom_domain_add", arguments: { bucket_id: s.pub.bucketId, hostname: "www.ro-test.com" } });
  expect(refused.isError).toBe(true);
  expect((refused.structuredContent as any).error.code).toBe("FORBIDDEN");
});
