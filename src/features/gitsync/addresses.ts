// Which hosts a repository URL may reach. A user types the URL and Pier's server fetches it, so
// without a check a user could make Pier talk to what only the server reaches (loopback, the
// private network, a cloud's metadata service at 169.254.169.254). Names are resolved and every
// address checked; the operator opts in with --git-allow-private-network for a git server on
// the same host or network. https://owasp.org/www-community/attacks/Server_Side_Request_Forgery
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { SyncFailure } from "./failure";

// [network, prefix length]: "this" network, RFC 1918, shared (CGNAT), loopback, link-local,
// IETF protocol assignments, benchmarking, multicast, reserved and broadcast.
const PRIVATE_V4: [string, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];

const v4 = (a: string): number => a.split(".").reduce((n, part) => n * 256 + Number(part), 0);
const inV4 = (n: number, [net, bits]: [string, number]) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(v4(net) / 2 ** (32 - bits));

function privateV4(a: string): boolean {
  const n = v4(a);
  return PRIVATE_V4.some((r) => inV4(n, r));
}

/** The eight 16-bit groups of an IPv6 address (an IPv4 tail becomes two groups). */
function groupsOf(a: string): number[] {
  let s = a.split("%")[0]!;
  const tail = s.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (tail) {
    const n = v4(tail[1]!);
    s = `${s.slice(0, -tail[1]!.length)}${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`;
  }
  const [head, rest] = s.split("::") as [string, string | undefined];
  const h = head ? head.split(":") : [];
  const r = rest ? rest.split(":") : [];
  const fill = rest === undefined ? [] : Array(8 - h.length - r.length).fill("0");
  return [...h, ...fill, ...r].map((g) => Number.parseInt(g, 16) || 0);
}

function privateV6(a: string): boolean {
  const g = groupsOf(a);
  const embedded = () => `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  if (g.slice(0, 6).every((x) => x === 0)) return g[6] === 0 ? g[7]! <= 1 : privateV4(embedded()); // ::, ::1, IPv4-compatible
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return privateV4(embedded()); // IPv4-mapped
  if (g[0] === 0x64 && g[1] === 0xff9b) return privateV4(embedded()); // NAT64
  if (g[0] === 0x2002) return privateV4(`${g[1]! >> 8}.${g[1]! & 255}.${g[2]! >> 8}.${g[2]! & 255}`); // 6to4
  return (g[0]! & 0xfe00) === 0xfc00 || (g[0]! & 0xffc0) === 0xfe80 || (g[0]! & 0xffc0) === 0xfec0 || (g[0]! & 0xff00) === 0xff00;
}

/** Loopback, private, link-local, multicast or otherwise not a public unicast address. */
export function isPrivateAddress(address: string): boolean {
  const kind = isIP(address);
  if (kind === 4) return privateV4(address);
  if (kind === 6) return privateV6(address);
  return true;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, "");

/** What can be told without DNS: an address literal or a localhost name. */
export function isPrivateLiteral(url: URL): boolean {
  const host = hostOf(url).toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  return isIP(host) !== 0 && isPrivateAddress(host);
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
