// --smtp-relay-tls against a real SMTP server (smtp-server) that offers no STARTTLS, as a relay
// looks to Pier when someone on the path strips the offer: with TLS required nothing is sent,
// not even the relay's password; opportunistic (and auto on this machine) sends in clear.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { networkInterfaces } from "node:os";
import { startupBanner } from "../../../src/cli/serve";
import { mailerFor } from "../../../src/features/mail";
import { SmtpRelayMailer } from "../../../src/features/mail/outbound";
import { relayRequiresStartTls } from "../../../src/features/mail/relay-tls";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { startRelay, type TestRelay } from "../../helpers/smtp-relay";
import { publishSite, siteFetch } from "../../helpers/sites";

const msg = { to: "reader@example.com", kind: "test", subject: "hello", text: "the body" };
let relay: TestRelay;
let t: TestPier;
let relayUrl: string;

beforeAll(async () => {
  relay = await startRelay();
  relayUrl = `smtp://pier:relay-secret@127.0.0.1:${relay.port}`;
  t = await startTestPier({ smtpRelayUrl: relayUrl, smtpRelayTls: "required" });
});
afterAll(async () => {
  await t.stop();
  await relay.stop();
});

describe("--smtp-relay-tls", () => {
  test("required: a relay without STARTTLS gets neither the password nor the message, and the error says why", async () => {
    const outcome = await mailerFor(t.pier.deps)
      .send(msg)
      .then(
        () => null,
        (e: Error & { code?: string }) => e,
      );
    expect(startupBanner(t.pier)).toMatch(/^  Outbound mail +relay smtp:\/\/127\.0\.0\.1:\d+ \(STARTTLS required\)$/m);
    expect(outcome).not.toBeNull();
    expect(outcome!.code).toBe("RELAY_TLS_REQUIRED");
    expect(outcome!.message).toContain(`SMTP relay 127.0.0.1:${relay.port} did not give an encrypted connection`);
    expect(outcome!.message).toContain("--smtp-relay-tls");
    expect(outcome!.message).not.toContain("relay-secret");
    expect(relay.passwords).toEqual([]);
    expect(relay.messages).toEqual([]);

    // A visitor asking for a site's email code is told it could not be sent; nothing leaves in clear.
    const site = await publishSite(t, { access: "require_email", title: "TLS site", files: [{ path: "index.html", bytes: "x" }] });
    const asked = await siteFetch(t, site.host, "/_pier/gate/email", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "email=reader%40example.com&next=%2F",
    });
    expect(asked.status).toBe(503);
    expect(relay.passwords).toEqual([]);
    expect(relay.messages).toEqual([]);
  });

  test("opportunistic (the operator's opt-out), and auto for a relay on this machine: sent", async () => {
    for (const mode of ["opportunistic", "auto"] as const) {
      const before = relay.messages.length;
      await new SmtpRelayMailer(t.pier.deps, relayUrl, "no-reply@pier.test", mode).send(msg);
      expect(relay.messages.length).toBe(before + 1);
      expect(relay.messages.at(-1)!.data).toContain("the body");
    }
    expect(relay.passwords).toEqual(["relay-secret", "relay-secret"]);
  });

  // A relay reached over the network: auto requires TLS once credentials travel, even to a LAN address.
  const lanAddress = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && !i.internal && i.family === "IPv4")?.address;
  test.skipIf(!lanAddress)("auto: a relay at a network address with credentials must give STARTTLS", async () => {
    const lan = await startRelay({ host: lanAddress! });
    try {
      const url = `smtp://pier:relay-secret@${lanAddress}:${lan.port}`;
      const refused = await new SmtpRelayMailer(t.pier.deps, url, "no-reply@pier.test", "auto").send(msg).then(
        () => "sent",
        (e: { code?: string }) => e.code,
      );
      expect(refused).toBe("RELAY_TLS_REQUIRED");
      expect(lan.passwords).toEqual([]);
      expect(lan.messages).toEqual([]);
    } finally {
      await lan.stop();
    }
  });

  test("auto: which relays must give STARTTLS", () => {
    const cases: [string, boolean][] = [
      ["smtp://smtp.example.com:587", true],
      ["smtp://user:pass@smtp.example.com:587", true],
      ["smtp://relay.lan:25", true], // a name: DNS does not relax the rule
      ["smtp://user:pass@192.168.1.10:25", true],
      ["smtp://192.168.1.10:25", false],
      ["smtp://[fd00::25]:25", false],
      ["smtp://user:pass@127.0.0.1:25", false],
      ["smtp://user:pass@localhost:25", false],
      ["smtp://[::1]:25", false],
      ["smtps://user:pass@smtp.example.com:465", false], // TLS from the first byte
    ];
    for (const [url, required] of cases) expect([url, relayRequiresStartTls(url, "auto")]).toEqual([url, required]);
    expect(relayRequiresStartTls("smtp://127.0.0.1:25", "required")).toBe(true);
    expect(relayRequiresStartTls("smtp://smtp.example.com:25", "opportunistic")).toBe(false);
  });
});
