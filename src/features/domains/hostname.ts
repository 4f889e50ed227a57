// Which hostnames a custom domain may have. Users type them in every shape (upper case, a
// trailing dot, Unicode): they are normalized to lower-case ASCII (punycode for IDN, as DNS and
// TLS see them) and refused with a stable details.reason when Pier could not serve them.
import { isIP } from "node:net";
import { domainToASCII, domainToUnicode } from "node:url";
import { parse as parseDomain } from "tldts";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";

export interface Hostname {
  /** Lower-case ASCII, punycode for IDN, no trailing dot: what is stored and looked up. */
  ascii: string;
  /** The same name for people (Unicode labels decoded). */
  unicode: string;
  /**
   * A registrable domain itself (example.com, example.co.uk) rather than a name under it: it
   * cannot have a CNAME, so its traffic record is an ALIAS/ANAME/flattened CNAME or A/AAAA.
   * Decided with the Public Suffix List (tldts), so example.co.uk is apex and www.example.com is not.
   */
  apex: boolean;
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

function invalid(reason: string, message: string, hostname: string): ApiError {
  return new ApiError("CUSTOM_DOMAIN_INVALID", message, { reason, hostname });
}

/** Normalize and check the syntax of a hostname; throws CUSTOM_DOMAIN_INVALID. */
export function parseHostname(raw: string): Hostname {
  const input = raw.trim();
  if (input.length > 1000) throw invalid("too_long", "The hostname is longer than 253 characters.", input.slice(0, 100));
  const lower = input.toLowerCase().replace(/\.$/, "");
  if (lower === "") throw invalid("invalid_characters", "The hostname is empty.", input);
  if (lower.includes("*")) throw invalid("wildcard", `Wildcard hostnames such as ${lower} are not supported: add each hostname on its own.`, lower);
  if (isIP(lower) || isIP(lower.replace(/^\[|\]$/g, "")) || /^[0-9.]+$/.test(lower))
    throw invalid("ip_literal", `${lower} is an IP address; a custom domain is a DNS name such as www.example.com.`, lower);
  if (lower.includes("_")) throw invalid("underscore", `${lower} contains an underscore, which is not allowed in a hostname.`, lower);
  if (/\s/.test(lower)) throw invalid("invalid_characters", `A hostname has no spaces ("${lower}"): give one such as www.example.com.`, lower);
  if (/[/:@?#\\]/.test(lower)) throw invalid("invalid_characters", `Give a bare hostname such as www.example.com, not a URL ("${lower}").`, lower);
  const ascii = domainToASCII(lower);
  if (ascii === "") throw invalid("invalid_characters", `${lower} is not a valid hostname.`, lower);
  if (ascii.length > 253)
    throw invalid("too_long", `The hostname is ${ascii.length} characters long (in ASCII); at most 253 are allowed.`, ascii.slice(0, 100));
  const labels = ascii.split(".");
  const long = labels.find((l) => l.length > 63);
  if (long !== undefined)
    throw invalid("label_too_long", `The label "${long.slice(0, 20)}..." is ${long.length} characters long; at most 63 are allowed.`, ascii);
  if (!labels.every((l) => LABEL.test(l)))
    throw invalid("invalid_characters", `${ascii} is not a valid hostname: labels are letters, digits and inner hyphens.`, ascii);
  if (labels.length < 2) throw invalid("single_label", `${ascii} has a single label; give a full name such as www.${ascii}.com.`, ascii);
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) throw invalid("invalid_characters", `${ascii} ends in a numeric label.`, ascii);
  const parsed = parseDomain(ascii);
  if (!parsed.domain || parsed.publicSuffix === ascii)
    throw invalid("public_suffix", `${ascii} is a public suffix (a domain under which anyone registers names), not a name one owner controls.`, ascii);
  return { ascii, unicode: domainToUnicode(ascii) || ascii, apex: parsed.subdomain === "" };
}

/** Pier's own names: the sites domain and anything under it, the API host, the mail host. */
export function assertNotReserved(deps: Deps, host: Hostname): void {
  const name = host.ascii;
  const sites = deps.urls.sitesDomain;
  const reserved = (reason: string, message: string) => new ApiError("CUSTOM_DOMAIN_RESERVED", message, { reason, hostname: name });
  if (name === sites || name.endsWith(`.${sites}`))
    throw reserved("sites_domain", `${name} is under Pier's sites domain ${sites}; managed site addresses cannot be custom domains.`);
  if (name === apiHostname(deps)) throw reserved("api_host", `${name} is this Pier's own API and dashboard host.`);
  if (name === deps.urls.mailDomain) throw reserved("mail_host", `${name} is this Pier's mail domain.`);
}

export const apiHostname = (deps: Deps) => new URL(deps.urls.baseUrl).hostname.replace(/^\[|\]$/g, "");
