// Host routing for the one HTTP listener: the API/dashboard host goes to the Elysia app, site
// hosts (<slug>.<sites-domain>, preview-<slug>.<sites-domain>, later custom domains) to the
// site server, ACME http-01 challenges are answered on any host.
import type { Urls } from "../config";

export type HostKind = { kind: "api" } | { kind: "site"; label: string } | { kind: "custom"; hostname: string } | { kind: "invalid" };

const HOST_RE = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$|^\[[0-9a-f:.]+\]$/;

/** Lower-cased hostname without port, or null when the header is hostile or malformed. */
export function parseHost(raw: string | null): string | null {
  if (!raw || raw.length > 260) return null;
  const host = raw.trim().toLowerCase();
  const m = /^(\[[0-9a-f:.]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(host);
  if (!m || (m[2] !== undefined && Number(m[2]) > 65535)) return null;
  const name = m[1]!.replace(/\.$/, "");
  // A name whose last label is numeric ("a.0", "x.1") is read by URL parsers as a broken IPv4
  // address: the request's own URL cannot be built, so refuse it here, not with a 500 later.
  return HOST_RE.test(name) && URL.canParse(`http://${name}/`) ? name : null;
}

const apiHostnames = new WeakMap<Urls, string>();
/** Parsing the base URL on every request showed up in the site benchmark: once per Urls. */
function apiHostname(urls: Urls): string {
  let h = apiHostnames.get(urls);
  if (h === undefined) apiHostnames.set(urls, (h = new URL(urls.baseUrl).hostname));
  return h;
}

// Classification per raw Host value, remembered (bounded): the same few hosts repeat on every
// request. One table per base-URL mode, so the lookup key is the header value itself (a derived
// key string per request showed in the site server's profile).
const classified = new WeakMap<Urls, [Map<string, HostKind>, Map<string, HostKind>]>();
const MAX_REMEMBERED_HOSTS = 10_000;

export function classifyHost(rawHost: string | null, urls: Urls, baseUrlConfigured: boolean): HostKind {
  if (rawHost === null) return { kind: "invalid" };
  let memos = classified.get(urls);
  if (!memos) classified.set(urls, (memos = [new Map(), new Map()]));
  const memo = memos[baseUrlConfigured ? 1 : 0];
  let kind = memo.get(rawHost);
  if (kind === undefined) {
    kind = classifyHostUncached(rawHost, urls, baseUrlConfigured);
    // Refused values are not kept: distinct junk of up to 16 KB each would hold ~160 MB per process.
    if (kind.kind === "invalid") return kind;
    if (memo.size >= MAX_REMEMBERED_HOSTS) memo.clear();
    memo.set(rawHost, kind);
  }
  return kind;
}

function classifyHostUncached(rawHost: string | null, urls: Urls, baseUrlConfigured: boolean): HostKind {
  const host = parseHost(rawHost);
  if (!host) return { kind: "invalid" };
  const apiHost = apiHostname(urls);
  if (host === apiHost) return { kind: "api" };
  const suffix = `.${urls.sitesDomain}`;
  if (host.endsWith(suffix)) {
    const label = host.slice(0, -suffix.length);
    if (label && !label.includes(".")) return { kind: "site", label };
    return { kind: "invalid" };
  }
  // Without a configured base URL (the zero-config default), any other name or IP reaches the
  // API, so http://127.0.0.1:8080 and http://<lan-ip>:8080 just work.
  if (!baseUrlConfigured) return { kind: "api" };
  return { kind: "custom", hostname: host };
}
