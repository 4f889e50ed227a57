// The self-signed fallback certificate is made once and kept in the data dir. A pair damaged on
// disk (a crash while it was written, before writes were atomic) must not be served for ever:
// it is made again, and the files are written whole.
import { afterAll, expect, test } from "bun:test";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSmtpTls } from "../../src/tls/material";

const dataDir = mkdtempSync(join(tmpdir(), "pier-tls-material-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const settings = { certFile: null, keyFile: null, dataDir, serverName: "mail.example.com" };
const dir = join(dataDir, "smtp-tls");
const usable = (m: { cert: string; key: string }) => new X509Certificate(m.cert).checkPrivateKey(createPrivateKey(m.key));

test("made once, kept, and a truncated certificate on disk is made again rather than served", async () => {
  const first = (await loadSmtpTls(settings))!;
  expect(first.source).toBe("self-signed");
  expect(usable(first)).toBe(true);
  expect((await loadSmtpTls(settings))!.cert).toBe(first.cert);
  expect(readdirSync(dir).sort()).toEqual(["self-signed-mail.example.com.crt", "self-signed-mail.example.com.key"]);
  expect(statSync(join(dir, "self-signed-mail.example.com.key")).mode & 0o777).toBe(0o600);

  // What a crash in the middle of the old writeFileSync left behind.
  const certFile = join(dir, "self-signed-mail.example.com.crt");
  writeFileSync(certFile, first.cert.slice(0, first.cert.length / 2));
  const again = (await loadSmtpTls(settings))!;
  expect(usable(again)).toBe(true);
  expect(again.cert).not.toBe(first.cert);
  expect(readFileSync(certFile, "utf8")).toBe(again.cert);
  expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
});
