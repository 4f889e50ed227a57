// require_email with PIER_SMTP_RELAY_URL set: the code travels over real SMTP (nodemailer) to a
// minimal SMTP receiver on loopback, and nothing lands in the outbox.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server } from "node:net";
import { listOutbox, relayTimeouts, SmtpRelayMailer } from "../../../src/features/mail/outbound";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch } from "../../helpers/sites";

let t: TestPier;
let smtp: Server;
const received: { from: string; to: string[]; data: string }[] = [];

/** Just enough of RFC 5321 to accept messages: no TLS, no AUTH. */
function startReceiver(): Promise<number> {
  smtp = createServer((sock) => {
    let buf = "";
    let inData = false;
    let msg = { from: "", to: [] as string[], data: "" };
    sock.write("220 test ESMTP\r\n");
    sock.on("data", (chunk) => {
      buf += chunk.toString("utf8");
      for (;;) {
        if (inData) {
          const end = buf.indexOf("\r\n.\r\n");
          if (end === -1) return;
          msg.data = buf.slice(0, end);
          buf = buf.slice(end + 5);
          inData = false;
          received.push(msg);
          msg = { from: "", to: [], data: "" };
          sock.write("250 queued\r\n");
          continue;
        }
        const nl = buf.indexOf("\r\n");
        if (nl === -1) return;
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 2);
        const cmd = line.slice(0, 4).toUpperCase();
        if (cmd === "EHLO" || cmd === "HELO") sock.write("250-test\r\n250 8BITMIME\r\n");
        else if (cmd === "MAIL") (msg.from = line), sock.write("250 ok\r\n");
        else if (cmd === "RCPT") msg.to.push(line), sock.write("250 ok\r\n");
        else if (cmd === "DATA") (inData = true), sock.write("354 go\r\n");
        else if (cmd === "QUIT") sock.end("221 bye\r\n");
        else sock.write("250 ok\r\n");
      }
    });
    sock.on("error", () => {});
  });
  return new Promise((res) => smtp.listen(0, "127.0.0.1", () => res((smtp.address() as { port: number }).port)));
}

beforeAll(async () => {
  const port = await startReceiver();
  t = await startTestPier({ smtpRelayUrl: `smtp://127.0.0.1:${port}` });
});
afterAll(async () => {
  await t.stop();
  smtp.close();
});

describe("outbound mail through an SMTP relay", () => {
  test("the email gate's code arrives over SMTP and opens the site", async () => {
    const site = await publishSite(t, { access: "require_email", title: "Relay site", files: [{ path: "index.html", bytes: "relayed in" }] });
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const asked = await siteFetch(t, site.host, "/_pier/gate/email", { method: "POST", headers: form, body: "email=reader%40example.com&next=%2F" });
    expect(asked.status).toBe(200);
    const request = /name="request" value="([^"]+)"/.exec(await asked.text())![1]!;
    expect(received).toHaveLength(1);
    expect(received[0]!.to[0]).toContain("reader@example.com");
    expect(received[0]!.from).toContain("no-reply@");
    const code = /\b(\d{6})\b/.exec(received[0]!.data)![1]!;
    const ok = await siteFetch(t, site.host, "/_pier/gate/code", { method: "POST", headers: form, body: `request=${request}&code=${code}&next=%2F` });
    expect(ok.status).toBe(303);
    const page = await siteFetch(t, site.host, "/", { headers: { cookie: ok.headers.get("set-cookie")!.split(";")[0]! } });
    expect(await page.text()).toBe("relayed in");
    expect(listOutbox(t.pier.deps)).toHaveLength(0);
  });
});

describe("a relay that stops answering", () => {
  test("a send fails within the relay timeouts instead of waiting minutes (mail is sent from the one job lane)", async () => {
    // Accepts connections and never says a word.
    const silent = createServer((sock) => sock.on("error", () => {}));
    const port = await new Promise<number>((res) => silent.listen(0, "127.0.0.1", () => res((silent.address() as { port: number }).port)));
    const saved = { ...relayTimeouts };
    Object.assign(relayTimeouts, { connectMs: 500, greetingMs: 500, silenceMs: 500 });
    try {
      const mailer = new SmtpRelayMailer(t.pier.deps, `smtp://127.0.0.1:${port}`, "no-reply@pier.test");
      const started = Date.now();
      const outcome = await mailer.send({ to: "someone@example.com", kind: "test", subject: "s", text: "t" }).then(
        () => "sent",
        (e: Error) => e.message,
      );
      expect(outcome).toMatch(/greeting|timeout|timed out/i);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      Object.assign(relayTimeouts, saved);
      silent.close();
    }
  });
});
