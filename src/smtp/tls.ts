// The certificate STARTTLS presents. Operators give a key and certificate (PEM files); without
// them Pier generates a self-signed one for the mail domain once and keeps it in the data dir.
// Sending servers use opportunistic TLS and do not verify MX certificates unless the domain
// publishes MTA-STS or DANE, so a self-signed certificate still encrypts mail in transit
// (RFC 7435); it is documented as a development/default fallback in docs/inbound-email.md.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generate } from "selfsigned";
import { ConfigError } from "../config";

export interface TlsMaterial {
  key: string;
  cert: string;
  /** "configured" = operator files, "self-signed" = generated fallback. */
  source: "configured" | "self-signed";
}

export interface SmtpTlsSettings {
  /** Path to the PEM certificate, "off" to not offer STARTTLS, or null for the self-signed fallback. */
  certFile: string | null;
  keyFile: string | null;
  dataDir: string;
  serverName: string;
}

/** A ConfigError, so `pier serve` reports it as a configuration problem (exit 2). */
export class SmtpTlsError extends ConfigError {}

export async function loadSmtpTls(s: SmtpTlsSettings): Promise<TlsMaterial | null> {
  if (s.certFile === "off") return null;
  if (s.certFile || s.keyFile) {
    if (!s.certFile || !s.keyFile) throw new SmtpTlsError("set both --smtp-tls-cert and --smtp-tls-key (or neither, for a self-signed certificate)");
    const read = (p: string, what: string) => {
      try {
        return readFileSync(p, "utf8");
      } catch (e) {
        throw new SmtpTlsError(`cannot read the SMTP TLS ${what} ${p}: ${(e as Error).message}`);
      }
    };
    return { cert: read(s.certFile, "certificate"), key: read(s.keyFile, "key"), source: "configured" };
  }
  return selfSigned(s.dataDir, s.serverName);
}

async function selfSigned(dataDir: string, serverName: string): Promise<TlsMaterial> {
  const dir = join(dataDir, "smtp-tls");
  const certFile = join(dir, `self-signed-${serverName}.crt`);
  const keyFile = join(dir, `self-signed-${serverName}.key`);
  if (existsSync(certFile) && existsSync(keyFile))
    return { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8"), source: "self-signed" };
  const pems = await generate([{ name: "commonName", value: serverName }], {
    keySize: 2048,
    days: 3650,
    algorithm: "sha256",
    extensions: [{ name: "subjectAltName", altNames: [{ type: 2, value: serverName }] }],
  } as Parameters<typeof generate>[1]);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(keyFile, pems.private, { mode: 0o600 });
  chmodSync(keyFile, 0o600);
  writeFileSync(certFile, pems.cert);
  return { cert: pems.cert, key: pems.private, source: "self-signed" };
}
