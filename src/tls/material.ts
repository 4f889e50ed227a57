// TLS material for Pier's listeners (SMTP STARTTLS, the HTTPS listener). Operators give a key
// and certificate (PEM files); without them Pier generates a self-signed one once and keeps it
// in the data dir. For SMTP that is a sound default: sending servers use opportunistic TLS and
// do not verify MX certificates unless the domain publishes MTA-STS or DANE (RFC 7435). For
// HTTPS it is a development fallback (browsers warn): production uses operator certificates.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../config";

export interface TlsMaterial {
  key: string;
  cert: string;
  /** "configured" = operator files, "self-signed" = generated fallback. */
  source: "configured" | "self-signed";
}

export interface TlsSettings {
  /** Path to the PEM certificate, "off" for no TLS, or null for the self-signed fallback. */
  certFile: string | null;
  keyFile: string | null;
  dataDir: string;
  /** DNS names the self-signed certificate covers (the first is its common name). */
  names: string[];
  /** Folder under the data dir for the generated certificate, e.g. "smtp-tls". */
  dirName: string;
  /** The flags, for error messages: ["--smtp-tls-cert", "--smtp-tls-key"]. */
  flags: [string, string];
}

/** A ConfigError, so `pier serve` reports it as a configuration problem (exit 2). */
export class TlsConfigError extends ConfigError {}

export async function loadTlsMaterial(s: TlsSettings): Promise<TlsMaterial | null> {
  if (s.certFile === "off") return null;
  if (s.certFile || s.keyFile) {
    if (!s.certFile || !s.keyFile) throw new TlsConfigError(`set both ${s.flags[0]} and ${s.flags[1]} (or neither, for a self-signed certificate)`);
    const read = (p: string, what: string) => {
      try {
        return readFileSync(p, "utf8");
      } catch (e) {
        throw new TlsConfigError(`cannot read the TLS ${what} ${p} (${s.flags[0]}): ${(e as Error).message}`);
      }
    };
    return { cert: read(s.certFile, "certificate"), key: read(s.keyFile, "key"), source: "configured" };
  }
  return selfSigned(join(s.dataDir, s.dirName), s.names);
}

/** The SMTP receiver's certificate: for the mail domain, kept in <data-dir>/smtp-tls. */
export const loadSmtpTls = (s: { certFile: string | null; keyFile: string | null; dataDir: string; serverName: string }) =>
  loadTlsMaterial({ ...s, names: [s.serverName], dirName: "smtp-tls", flags: ["--smtp-tls-cert", "--smtp-tls-key"] });

async function selfSigned(dir: string, names: string[]): Promise<TlsMaterial> {
  const label = names[0]!.replace(/^\*\./, "wildcard.");
  const certFile = join(dir, `self-signed-${label}.crt`);
  const keyFile = join(dir, `self-signed-${label}.key`);
  if (existsSync(certFile) && existsSync(keyFile)) return { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8"), source: "self-signed" };
  // Loaded only here: the generator (node-forge underneath) is ~9,000 functions, which every
  // process would otherwise carry on its heap for a certificate made once (bench/README.md).
  const { generate } = await import("selfsigned");
  const pems = await generate([{ name: "commonName", value: names[0]! }], {
    keySize: 2048,
    days: 3650,
    algorithm: "sha256",
    extensions: [{ name: "subjectAltName", altNames: names.map((value) => ({ type: 2, value })) }],
  } as Parameters<typeof generate>[1]);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(keyFile, pems.private, { mode: 0o600 });
  chmodSync(keyFile, 0o600);
  writeFileSync(certFile, pems.cert);
  return { cert: pems.cert, key: pems.private, source: "self-signed" };
}
