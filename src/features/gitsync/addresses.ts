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

/** A host name's addresses, in the resolver's order. */
export type HostLookup = (host: string) => Promise<string[]>;

export const systemLookup: HostLookup = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Before each request to a user's git server: every address its name resolves to must be public,
 * and the one returned is the one the request connects to (pinnedRequest). Resolving again to
 * connect would let a name answer a public address to the check and 127.0.0.1 to the
 * connection (DNS rebinding). A remote that answers with a redirect is refused (boundedHttp),
 * so every request, and so every hop, is checked here.
 */
export async function publicAddressOf(raw: string, lookupHost: HostLookup = systemLookup): Promise<string> {
  const url = new URL(raw);
  const host = hostOf(url);
  let addresses: string[];
  if (isIP(host)) addresses = [host];
  else {
    try {
      addresses = await lookupHost(host);
    } catch {
      addresses = [];
    }
    if (!addresses.length) throw new SyncFailure("remote_unreachable", "The git server's name could not be resolved.");
  }
  if (isPrivateLiteral(url) || addresses.some(isPrivateAddress))
    throw new SyncFailure(
      "private_address_refused",
      "The repository's host is a loopback, private or link-local address; this instance reaches only public git servers (the operator allows others with --git-allow-private-network).",
    );
  // The resolver's order (getaddrinfo's, RFC 6724) already puts a family this host cannot reach last.
  return addresses[0]!;
}

/**
 * A request to `raw` that connects to `address` and nowhere else: the URL names the address,
 * while the Host header and the TLS server name (SNI, and the name the certificate must carry)
 * stay the host's.
 */
export function pinnedRequest(raw: string, address: string): { url: string; host: string | null; serverName: string | null } {
  const url = new URL(raw);
  if (isIP(hostOf(url))) return { url: raw, host: null, serverName: null };
  const host = url.host;
  const serverName = url.protocol === "https:" ? url.hostname.replace(/\.$/, "") : null;
  url.hostname = isIP(address) === 6 ? `[${address}]` : address;
  return { url: url.href, host, serverName };
}
