// Which hosts a repository URL may reach. A user types the URL and Pier's server fetches it, so
// without a check a user could make Pier talk to what only the server reaches (loopback, the
// private network, a cloud's metadata service at 169.254.169.254). Names are resolved and every
// address checked; the operator opts in with --git-allow-private-network for a git server on
// the same host or network. https://owasp.org/www-community/attacks/Server_Side_Request_Forgery
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { isLoopbackHost } from "../../core/hosts";
import { SyncFailure } from "./failure";

/**
 * Loopback, private, link-local, multicast or otherwise not a public unicast address (ipaddr.js's
 * ranges). An IPv4 address inside IPv6 (mapped, NAT64 as DNS64 answers for IPv6-only hosts,
 * 6to4) is judged by that IPv4 address.
 */
export function isPrivateAddress(address: string): boolean {
  const bare = address.split("%")[0]!;
  if (!ipaddr.isValid(bare)) return true;
  const ip = ipaddr.process(bare); // an IPv4-mapped address becomes its IPv4
  const range = ip.range();
  if (ip.kind() === "ipv6") {
    const bytes = ip.toByteArray();
    if (range === "rfc6052") return isPrivateAddress(bytes.slice(12).join("."));
    if (range === "6to4") return isPrivateAddress(bytes.slice(2, 6).join("."));
  }
  return range !== "unicast";
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, "");

/** What can be told without DNS: an address literal or a localhost name. */
export function isPrivateLiteral(url: URL): boolean {
  const host = hostOf(url).toLowerCase();
  return isLoopbackHost(host) || (isIP(host) !== 0 && isPrivateAddress(host));
}

/**
 * Before each request to a user's git server: every address its name resolves to must be public.
 * The connection resolves the name again (a DNS answer could change in between); a remote that
 * answers with a redirect is refused anyway (boundedHttp).
 */
export async function assertPublicRemote(raw: string): Promise<void> {
  const url = new URL(raw);
  const host = hostOf(url);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch {
      throw new SyncFailure("remote_unreachable", "The git server's name could not be resolved.");
    }
  }
  if (isPrivateLiteral(url) || addresses.some(isPrivateAddress))
    throw new SyncFailure(
      "private_address_refused",
      "The repository's host is a loopback, private or link-local address; this instance reaches only public git servers (the operator allows others with --git-allow-private-network).",
    );
}
