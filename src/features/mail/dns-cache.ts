// A bounded cache in front of the DNS lookups of SPF, DKIM and DMARC. Mail from one sending
// domain asks the same questions again and again (its SPF record, its _dmarc record, the DKIM
// key of its selector); a stub resolver without a local cache pays a round trip for each.
// Answers are kept for their TTL where the system resolver reports one (A/AAAA), otherwise
// for a short fixed time: node's TXT/MX/CNAME lookups do not expose TTLs, and a minute of
// staleness is what a caching resolver in front of Pier would give anyway. Names that do not
// exist are cached like answers (RFC 2308 negative caching); temporary failures (SERVFAIL,
// timeouts) are never cached, so the next message asks again.
import { promises as dns } from "node:dns";
import type { DNSResolver } from "mailauth";

/** How long an answer without a known TTL is kept. */
export const FALLBACK_TTL_MS = 60_000;
/** Longest any answer is kept, whatever its TTL. */
export const MAX_TTL_MS = 300_000;
/** Distinct questions remembered (least recently used out). */
export const MAX_ENTRIES = 5_000;

const NEGATIVE = new Set(["ENOTFOUND", "ENODATA"]);

/** Each caller gets its own copy: a checker that edits an answer in place cannot spoil the cache. */
const copy = <T>(answer: T): T => structuredClone(answer);

interface Entry {
  expires: number;
  answer: Promise<unknown>;
}

/** The system resolver, with real TTLs for address lookups. */
const systemResolver = async (name: string, rrtype: string): Promise<{ answer: unknown; ttlMs: number }> => {
  if (rrtype === "A" || rrtype === "AAAA") {
    const rows = rrtype === "A" ? await dns.resolve4(name, { ttl: true }) : await dns.resolve6(name, { ttl: true });
    const ttl = rows.length ? Math.min(...rows.map((r) => r.ttl)) * 1000 : FALLBACK_TTL_MS;
    return { answer: rows.map((r) => r.address), ttlMs: ttl };
  }
  return { answer: await dns.resolve(name, rrtype as "TXT"), ttlMs: FALLBACK_TTL_MS };
};

/** `innerTtlMs`: how long answers of `inner` are kept (it reports no TTLs). */
export function cachingResolver(inner?: DNSResolver, now: () => number = Date.now, innerTtlMs = FALLBACK_TTL_MS): DNSResolver {
  const lookup = inner ? async (name: string, rrtype: string) => ({ answer: await inner(name, rrtype), ttlMs: innerTtlMs }) : systemResolver;
  const cache = new Map<string, Entry>();
  const remember = (key: string, entry: Entry) => {
    cache.delete(key);
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(key, entry);
  };
  const resolver = (name: string, rrtype: string): Promise<unknown> => {
    const key = `${name.toLowerCase().replace(/\.$/, "")}/${rrtype.toUpperCase()}`;
    const hit = cache.get(key);
    if (hit && hit.expires > now()) {
      cache.delete(key); // most recently used goes last
      cache.set(key, hit);
      return hit.answer.then(copy);
    }
    // Concurrent messages asking the same question share one lookup while it runs.
    const entry: Entry = { expires: Number.POSITIVE_INFINITY, answer: Promise.resolve() };
    entry.answer = lookup(name, rrtype).then(
      ({ answer, ttlMs }) => {
        entry.expires = now() + Math.min(Math.max(ttlMs, 0), MAX_TTL_MS);
        return answer;
      },
      (e: { code?: string }) => {
        if (e?.code && NEGATIVE.has(e.code)) entry.expires = now() + FALLBACK_TTL_MS;
        else if (cache.get(key) === entry) cache.delete(key);
        throw e;
      },
    );
    entry.answer.catch(() => {}); // every caller gets the rejection; none is left unhandled
    remember(key, entry);
    return entry.answer.then(copy);
  };
  return resolver as DNSResolver;
}
