// `pier admin mail test ADDRESS`: send a small message (text, HTML, one attachment) to the
// local receiver over SMTP with nodemailer, upgrading with STARTTLS when offered, exactly as a
// sending server would. The operator then sees it arrive in the bucket.
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import type { Config, Urls } from "../../config";

export interface TestMessageResult {
  to: string;
  server: string;
  accepted: string[];
  rejected: string[];
  response: string;
  message_id: string;
}

/** Where the local receiver listens: --host unless it is a wildcard, then loopback. */
export function localSmtpServer(config: Config): { host: string; port: number } | null {
  if (config.smtpPort === null) return null;
  const host = config.host === "0.0.0.0" || config.host === "::" || config.host === "" ? "127.0.0.1" : config.host;
  return { host, port: config.smtpPort };
}

export async function sendTestMessage(config: Config, urls: Urls, to: string, server = localSmtpServer(config)): Promise<TestMessageResult> {
  if (!server) throw new Error("the SMTP receiver is off (--smtp-port off); nothing to send to");
  const nodemailer = await import("nodemailer");
  const transport = nodemailer.createTransport({
    host: server.host,
    port: server.port,
    secure: false,
    // The local receiver's certificate is usually self-signed; encryption still happens.
    tls: { rejectUnauthorized: false },
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    name: `pier-admin.${urls.mailDomain}`,
  } as SMTPTransport.Options);
  const sentAt = new Date().toISOString();
  const info = await transport.sendMail({
    from: `Pier test <postmaster@${urls.mailDomain}>`,
    to,
    subject: `Pier test message ${sentAt}`,
    text: `This is a test message sent by \`pier admin mail test\` at ${sentAt}.\nIf you can read it in the bucket, inbound email works.\n`,
    html: `<p>This is a test message sent by <code>pier admin mail test</code> at ${sentAt}.</p><p>If you can read it in the bucket, inbound email works.</p>`,
    attachments: [{ filename: "pier-test.txt", content: `Pier inbound email test attachment, ${sentAt}\n`, contentType: "text/plain" }],
  });
  transport.close();
  return {
    to,
    server: `${server.host}:${server.port}`,
    accepted: info.accepted.map(String),
    rejected: info.rejected.map(String),
    response: info.response,
    message_id: info.messageId,
  };
}
