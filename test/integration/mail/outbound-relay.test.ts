// require_email with PIER_SMTP_RELAY_URL set: the code travels over real SMTP (nodemailer) to a
// relay on loopback (smtp-server), and nothing lands in the outbox.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import { listOutbox, relayTimeouts, SmtpRelayMailer } from "../../../src/features/mail/outbound";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { startRelay, type TestRelay } from "../../helpers/smtp-relay";
import { publishSite, siteFetch } from "../../helpers/sites";

let t: TestPier;
let relay: TestRelay;

beforeAll(async () => {
  relay = await startRelay();
  t = await startTestPier({ smtpRelayUrl: relay.url });
});
afterAll(async () => {
  await t.stop();
  await relay.stop();
});

describe("outbound mail through an SMTP relay", () => {
  test("the email gate's code arrives over SMTP and opens the site", async () => {
    const site = await publishSite(t, { access: "require_email", title: "Relay site", files: [{ path: "index.html", bytes: "relayed in" }] });
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const asked = await siteFetch(t, site.host, "/_pier/gate/email", { method: "POST", headers: form, body: "email=reader%40example.com&next=%2F" });
    expect(asked.status).toBe(200);
    const request = /name="request" value="([^"]+)"/.exec(await asked.text())![1]!;
    expect(relay.messages).toHaveLength(1);
    expect(relay.messages[0]!.to).toEqual(["reader@example.com"]);
    expect(relay.messages[0]!.from).toStartWith("no-reply@");
    const code = /\b(\d{6})\b/.exec(relay.messages[0]!.data)![1]!;
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
