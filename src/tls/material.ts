// TLS material for Pier's listeners (SMTP STARTTLS, the HTTPS listener). Operators give a key
// and certificate (PEM files); without them Pier generates a self-signed one once and keeps it
// in the data dir. For SMTP that is a sound default: sending servers use opportunistic TLS and
// do not verify MX certificates unless the domain publishes MTA-STS or DANE (RFC 7435). For
// HTTPS it is a development fallback (browsers warn): production uses operator certificates.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../config";
import { writeAtomically } from "../core/atomic-file";

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
  const stored = readPair(certFile, keyFile);
  if (stored) return { ...stored, source: "self-signed" };
  // Loaded only here: the generator (node-forge underneath) is ~9,000 functions, which every
  // process would otherwise carry on its heap for a certificate made once (bench/README.md).
  const { generate } = await import("selfsigned");
  const pems = await generate([{ name: "commonName", value: names[0]! }], {
    keySize: 2048,
    days: 3650,
    algorithm: "sha256",
    extensions: [{ name: "subjectAltName", altNames: names.map((value) => ({ type: 2, value })) }],
  } as Parameters<typeof generate>[1]);
  // Whole files only, key first: a crash leaves the old pair, or a pair readPair refuses (made again).
  writeAtomically(keyFile, pems.private, 0o600);
  writeAtomically(certFile, pems.cert, 0o644);
  return { cert: pems.cert, key: pems.private, source: "self-signed" };
}

/** The stored pair when both files exist, parse and belong together; otherwise null (a damaged pair is made again). */
function readPair(certFile: string, keyFile: string): { cert: string; key: string } | null {
  try {
    const pair = { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") };
    return new X509Certificate(pair.cert).checkPrivateKey(createPrivateKey(pair.key)) ? pair : null;
  } catch {
    return null;
  }
}
