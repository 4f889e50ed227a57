// Whether the outbound relay connection must be encrypted (--smtp-relay-tls, D252). With an
// smtp:// URL nodemailer upgrades with STARTTLS only when the relay offers it, so anyone on the
// path who strips the offer from the relay's EHLO answer reads the credentials and the mail
// (https://datatracker.ietf.org/doc/html/rfc3207#section-6). smtps:// is TLS from the first byte.
import ipaddr from "ipaddr.js";
import { isLoopbackHost } from "../../core/hosts";

export type RelayTlsMode = "auto" | "required" | "opportunistic";

/** Private-network ranges a LAN relay is found at: RFC 1918, IPv6 unique-local, link-local. */
const LAN_RANGES = new Set(["private", "uniqueLocal", "linkLocal"]);

function isLanLiteral(host: string): boolean {
  return ipaddr.isValid(host) && LAN_RANGES.has(ipaddr.process(host).range());
}

/**
 * STARTTLS is required on an smtp:// relay unless the operator said `opportunistic`, or (`auto`)
 * the relay is on this machine, or at a private-network address written as an IP literal with no
 * credentials in the URL. Names are not resolved for this: a DNS answer must not relax it.
 */
export function relayRequiresStartTls(relayUrl: string, mode: RelayTlsMode): boolean {
  const u = new URL(relayUrl);
  if (u.protocol === "smtps:") return false;
  if (mode !== "auto") return mode === "required";
  const host = u.hostname.replace(/^\[|\]$/g, "");
  if (isLoopbackHost(host)) return false;
  return !(isLanLiteral(host) && !u.username && !u.password);
}

/** How the relay connection is protected, for the start banner and the health page. */
export function relayTlsLabel(relayUrl: string, mode: RelayTlsMode): string {
  if (new URL(relayUrl).protocol === "smtps:") return "TLS";
  return relayRequiresStartTls(relayUrl, mode) ? "STARTTLS required" : "STARTTLS if the relay offers it";
}

/** A send refused because the relay connection could not be encrypted; nothing was sent. */
export class RelayTlsRequiredError extends Error {
  readonly code = "RELAY_TLS_REQUIRED";
}

/** nodemailer's failures of a STARTTLS it was told to require (refused, not offered, or a bad certificate). */
export function isStartTlsFailure(e: unknown): boolean {
  const err = e as { code?: string; command?: string; message?: string } | null;
  return !!err && (err.code === "ETLS" || err.command === "STARTTLS" || /STARTTLS/.test(err.message ?? ""));
}
