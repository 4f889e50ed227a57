// Inbound email over hosted MCP: a message arrives over real SMTP, then an agent with the MCP
// SDK client finds it with inbound_email_get and reads message.json with bucket_file_read,
// which marks it read exactly like GET /files/by_path. Also: analytics_get answers the REST
// endpoint's figures, and neither tool reaches another account's bucket.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import { startTestPier, type TestPier, type TestUser } from "../../helpers/pier";
import { publishSite } from "../../helpers/sites";

const DOMAIN = "mail.pier.test";
let t: TestPier;
let u: TestUser;
beforeAll(async () => {
  t = await startTestPier({ smtpPort: 0, mailDomain: DOMAIN });
  u = await t.user();
});
afterAll(() => t.stop());

async function connect(key: string) {
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(t.pier.deps.urls.mcpUrl), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}
const json = (r: any) => JSON.parse(r.content[0].text);
const errorCode = (r: any) => (r.structuredContent as any)?.error?.code;

const send = (to: string, subject: string) =>
  nodemailer
    .createTransport({
      host: "127.0.0.1",
      port: t.pier.smtp!.port,
      secure: false,
      requireTLS: true,
      tls: { rejectUnauthorized: false },
    } as SMTPTransport.Options)
    .sendMail({ from: "Sender <someone@sender.test>", to, subject, text: `Body of ${subject}` });

describe("inbound email over MCP", () => {
  test("inbound_email_get shows the address and messages; bucket_file_read of message.json marks it read", async () => {
    const b = (await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "Inbox", inbound_email: { enabled: true } } } })).body.data.bucket;
    const client = await connect(t.key(u, { scope: "bucket_read" }));

    const before = json(await client.callTool({ name: "inbound_email_get", arguments: { bucket_id: b.id } }));
    expect(before).toEqual({ inbound_email: b.inbound_email });
    expect(before.inbound_email).toMatchObject({ ready: true, received_count: 0, last_received_path: null });

    await send(b.inbound_email.address, "First");
    await send(b.inbound_email.address, "Second");

    const state = json(await client.callTool({ name: "inbound_email_get", arguments: { bucket_id: b.id, messages: true } }));
    // The same state and list as REST.
    const rest = (await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email`, { key: u.key })).body.data;
    expect(state.inbound_email).toEqual(rest);
    expect(state.inbound_email.received_count).toBe(2);
    expect(state.messages.map((m: any) => [m.subject, m.read])).toEqual([
      ["First", false],
      ["Second", false],
    ]);
    expect(state.pagination).toMatchObject({ total_count: 2, has_more: false });
    const [first, second] = state.messages;
    expect(state.inbound_email.last_received_path).toBe(second.folder);

    const read = json(await client.callTool({ name: "bucket_file_read", arguments: { bucket_id: b.id, path: first.message_json_path } }));
    expect(JSON.parse(read.content)).toMatchObject({ subject: "First", text: expect.stringContaining("Body of First") });

    // Read status is shared with REST: the first message is read, the second is not.
    const listed = (await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email/messages`, { key: u.key })).body.data.messages;
    expect(listed[0]).toMatchObject({ id: first.id, read: true, read_count: 1, read_at: expect.any(String) });
    expect(listed[1]).toMatchObject({ id: second.id, read: false, read_count: 0 });
    const unread = json(await client.callTool({ name: "inbound_email_get", arguments: { bucket_id: b.id, messages: true, unread: true } }));
    expect(unread.messages.map((m: any) => m.id)).toEqual([second.id]);

    // Reading another file of the folder (the raw message) is not a read of the message.
    await client.callTool({ name: "bucket_file_read", arguments: { bucket_id: b.id, path: `${second.folder}message.eml` } });
    expect((await t.api("GET", `/api/v1/buckets/${b.id}/inbound_email/messages?unread=true`, { key: u.key })).body.data.messages.map((m: any) => m.id)).toEqual(
      [second.id],
    );

    // Paging arguments as on REST; bad ones are validation errors.
    const page = json(await client.callTool({ name: "inbound_email_get", arguments: { bucket_id: b.id, messages: true, limit: 1, offset: 1 } }));
    expect(page.messages.map((m: any) => m.id)).toEqual([second.id]);
    expect(errorCode(await client.callTool({ name: "inbound_email_get", arguments: { bucket_id: b.id, messages: true, limit: 0 } }))).toBe("VALIDATION_FAILED");
    expect(errorCode(await client.callTool({ name: "inbound_email_get", arguments: { bucket_id: b.id, extra: 1 } }))).toBe("VALIDATION_FAILED");
    await client.close();
  });

  test("a bucket without an address answers not_enabled; foreign buckets are not found and nothing is marked read", async () => {
    const plain = (await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "Plain" } } })).body.data.bucket;
    const inbox = (await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "Inbox 2", inbound_email: { enabled: true } } } })).body.data
      .bucket;
    await send(inbox.inbound_email.address, "Private");
    const path = (await t.api("GET", `/api/v1/buckets/${inbox.id}/inbound_email/messages`, { key: u.key })).body.data.messages[0].message_json_path;

    const client = await connect(u.key);
    const off = json(await client.callTool({ name: "inbound_email_get", arguments: { bucket_id: plain.id } }));
    expect(off.inbound_email).toMatchObject({ enabled: false, ready: false, address: null, blocked_reason: "not_enabled" });
    await client.close();

    const stranger = await connect((await t.user()).key);
    for (const call of [
      { name: "inbound_email_get", arguments: { bucket_id: inbox.id, messages: true } },
      { name: "bucket_file_read", arguments: { bucket_id: inbox.id, path } },
      { name: "analytics_get", arguments: { bucket_id: inbox.id } },
    ]) {
      const r = await stranger.callTool(call);
      expect(r.isError).toBe(true);
      expect(errorCode(r)).toBe("BUCKET_NOT_FOUND");
    }
    await stranger.close();
    expect((await t.api("GET", `/api/v1/buckets/${inbox.id}/inbound_email/messages`, { key: u.key })).body.data.messages[0]).toMatchObject({
      read: false,
      read_count: 0,
    });
  });
});

describe("analytics over MCP", () => {
  test("analytics_get answers the same real figures as the REST endpoint", async () => {
    const site = await publishSite(t, { user: u, files: [{ path: "index.html", bytes: "<h1>hi</h1>" }] });
    for (const ua of ["Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", "Mozilla/5.0 (compatible; Googlebot/2.1)"])
      await t.primaryFetch(site.host, "/", { headers: { "user-agent": ua } }).then((r) => r.arrayBuffer()); // counted where flush() runs
    t.pier.deps.analytics.flush();
    const client = await connect(t.key(u, { scope: "bucket_read" }));
    const r = await client.callTool({ name: "analytics_get", arguments: { bucket_id: site.pub.bucketId, range: "24h" } });
    expect(r.isError).toBeFalsy();
    const body = json(r);
    expect(body.publication_id).toBe(site.pub.id);
    expect(body.analytics.totals).toMatchObject({ hits: 2, views: 1, hits_bots: 1, visitors: 1 });
    const rest = await t.api("GET", `/api/v1/publications/${site.pub.id}/analytics?range=24h`, { key: u.key });
    expect(body.analytics).toEqual(rest.body.data.analytics);
    const b = (await t.api("POST", "/api/v1/buckets", { key: u.key, body: { bucket: { title: "Unpublished" } } })).body.data.bucket;
    expect(errorCode(await client.callTool({ name: "analytics_get", arguments: { bucket_id: b.id } }))).toBe("PUBLICATION_NOT_FOUND");
    expect(errorCode(await client.callTool({ name: "analytics_get", arguments: {} }))).toBe("VALIDATION_FAILED");
    expect(errorCode(await client.callTool({ name: "analytics_get", arguments: { bucket_id: site.pub.bucketId, from: "2026-05-02", to: "2026-05-01" } }))).toBe(
      "VALIDATION_FAILED",
    );
    await client.close();
  });
});
