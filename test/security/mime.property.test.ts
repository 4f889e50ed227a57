// MIME messages are chosen by whoever can reach port 25. Property: any message a sender makes up
// (random headers and encoded words, multipart trees nested deep with odd or missing boundaries,
// broken transfer encodings, hostile attachment names) is answered over real SMTP without a
// crash or a stall, the server keeps answering HTTP meanwhile, and whatever gets filed lands
// under the bucket's `_email/` folder with safe names and a readable message.json.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import nodemailer from "nodemailer";
import { createBucket } from "../helpers/buckets";
import { startTestPier, type TestPier, type TestUser } from "../helpers/pier";

const DOMAIN = "mail.pier.test";
let t: TestPier;
let u: TestUser;

beforeAll(async () => {
  t = await startTestPier({ smtpPort: 0, mailDomain: DOMAIN, smtpRateLimitPerIp: 100_000, smtpRateLimitPerRecipient: 100_000 });
  u = await t.user();
});
afterAll(() => t.stop());

const token = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/);
const headerValue = fc.oneof(
  fc.string({ maxLength: 200 }).map((s) => s.replace(/[\r\n]/g, " ")),
  fc
    .tuple(fc.constantFrom("utf-8", "iso-8859-1", "x-unknown", "", "utf-7"), fc.constantFrom("B", "Q", "X"), fc.string({ maxLength: 60 }))
    .map(([cs, enc, text]) => `=?${cs}?${enc}?${text.replace(/[\r\n?]/g, "")}?=`),
  fc.constant("x".repeat(5000)),
);
const filename = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.constantFrom("../../etc/passwd", "..\\..\\boot.ini", "/abs/path.txt", "a\u0000b.txt", "evil.exe.", "CON", "\u202Etxt.exe", ".env", "_email/x", "...", ""),
);
const encoding = fc.constantFrom("base64", "quoted-printable", "7bit", "8bit", "binary", "x-uuencode", "bogus");
const body = fc.oneof(fc.string({ maxLength: 300 }), fc.constant("=ZZ=\r\n=\r\n"), fc.constant("!!!not base64!!!"), fc.base64String({ maxLength: 400 }));

interface Part {
  headers: string[];
  body: string;
}
/** A MIME tree as text: leaves are parts with random headers; nodes are multiparts whose boundary may be missing or never closed. */
const mimeTree: fc.Arbitrary<Part> = fc.letrec<{ node: Part }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc
      .record({
        type: fc.constantFrom("text/plain", "text/html", "application/octet-stream", "image/png", "message/rfc822"),
        enc: encoding,
        name: fc.option(filename),
        body,
      })
      .map(({ type, enc, name, body }) => ({
        headers: [
          `Content-Type: ${type}${name !== null ? `; name="${name}"` : ""}`,
          `Content-Transfer-Encoding: ${enc}`,
          ...(name !== null ? [`Content-Disposition: attachment; filename="${name}"`] : []),
        ],
        body,
      })),
    fc
      .record({ boundary: fc.oneof(token, fc.constant("")), close: fc.boolean(), parts: fc.array(tie("node"), { maxLength: 4 }) })
      .map(({ boundary, close, parts }) => ({
        headers: [`Content-Type: multipart/mixed; boundary="${boundary}"`],
        body: parts.map((p) => `--${boundary}\r\n${p.headers.join("\r\n")}\r\n\r\n${p.body}\r\n`).join("") + (close ? `--${boundary}--\r\n` : ""),
      })),
  ),
})).node;

/** A multipart nested `depth` levels deep (a recursion bomb for naive parsers). */
const deepNest = fc.integer({ min: 1, max: 400 }).map((depth) => {
  let inner = "Content-Type: text/plain\r\n\r\nbottom\r\n";
  for (let i = 0; i < depth; i++) inner = `Content-Type: multipart/mixed; boundary="b${i}"\r\n\r\n--b${i}\r\n${inner}--b${i}--\r\n`;
  const [headers, ...rest] = inner.split("\r\n\r\n");
  return { headers: headers!.split("\r\n"), body: rest.join("\r\n\r\n") };
});

const message = fc.record({
  extra: fc.array(fc.tuple(token, headerValue), { maxLength: 40 }),
  subject: headerValue,
  tree: fc.oneof(mimeTree, deepNest),
});

test("random MIME messages are answered, never stall the server, and file safely under _email/", async () => {
  const bucket = await createBucket(t, u, { title: "Fuzz inbox", inbound_email: { enabled: true } });
  const to = bucket.inbound_email.address as string;
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port: t.pier.smtp!.port, secure: false, ignoreTLS: true, pool: false });
  let accepted = 0;
  await fc.assert(
    fc.asyncProperty(message, async ({ extra, subject, tree }) => {
      const raw =
        [`From: someone@sender.test`, `To: ${to}`, `Subject: ${subject}`, `MIME-Version: 1.0`, ...extra.map(([k, v]) => `X-${k}: ${v}`), ...tree.headers].join(
          "\r\n",
        ) + `\r\n\r\n${tree.body}\r\n`;
      const started = performance.now();
      const sent = transport.sendMail({ envelope: { from: "someone@sender.test", to: [to] }, raw }).then(
        () => "250",
        (e: { responseCode?: number }) => String(e.responseCode ?? "error"),
      );
      // While the message is parsed and filed, the API answers promptly.
      const status = await t.api("GET", "/api/v1/status");
      expect(status.status).toBe(200);
      const code = await sent;
      expect(performance.now() - started).toBeLessThan(5000);
      expect(code).toMatch(/^(250|5\d\d)$/);
      if (code === "250") accepted++;
    }),
    { numRuns: 40, seed: Number(process.env.PIER_FC_SEED ?? Date.now() % 2 ** 31) },
  );
  transport.close();
  expect(accepted).toBeGreaterThan(0);

  // Every file that was filed sits under _email/ with plain segments, and each message.json reads back.
  const files = (await t.api("GET", `/api/v1/buckets/${bucket.id}/files?limit=1000`, { key: u.key })).body.data.files as Array<{ path: string }>;
  expect(files.length).toBeGreaterThan(0);
  for (const f of files) {
    expect(f.path.startsWith("_email/")).toBe(true);
    for (const segment of f.path.split("/")) {
      expect(segment === "" || segment === "." || segment === ".." || /[\u0000-\u001f\\]/.test(segment)).toBe(false);
    }
  }
  const jsons = files.filter((f) => f.path.endsWith("/message.json"));
  expect(jsons.length).toBe(accepted);
  for (const j of jsons.slice(0, 10)) {
    const r = await t.api("GET", `/api/v1/buckets/${bucket.id}/files/by_path?path=${encodeURIComponent(j.path)}`, { key: u.key });
    const parsed = await (await fetch(r.headers.get("location")!)).json();
    expect(typeof parsed.subject === "string" || parsed.subject === null).toBe(true);
  }
}, 120_000);
