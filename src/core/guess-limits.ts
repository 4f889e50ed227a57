// Limits on guessing a secret (a password, a code) that one target holds: a user's password, a
// site's gate password, a Connection ID on the approval page. Never a lock on the target: that
// would let anyone lock the rightful user out by failing on purpose. Instead:
//   - each client address gets a few failures per target, then waits until the oldest leaves
//     the window (the attacker's address is locked out, nobody else);
//   - each address gets a larger number of failures over all targets (a scanner is locked out);
//   - while a target collects failures from many addresses, the per-address allowance on it
//     halves for every `attackStep` failures, down to `floor` (spread guessing slows down), yet a
//     fresh address always gets its `floor` tries, so the right secret from it still works.
// IPv6 clients are grouped by /64: one host usually holds the whole prefix.
import ipaddr from "ipaddr.js";
import { LRUCache } from "lru-cache";

export interface GuessPolicy {
  /** Failures one address may make against one target in the window. */
  perPair: number;
  /** Failures one address may make against all targets in the window. */
  perAddress: number;
  /** Every this many failures against a target (from anyone) halves `perPair` for it. */
  attackStep: number;
  /** `perPair` never drops below this. */
  floor: number;
  windowMs: number;
}

/** The allowance of one address on a target that has seen `targetFailures` failures in the window. */
export function pairAllowance(p: GuessPolicy, targetFailures: number): number {
  const halvings = Math.min(30, Math.floor(targetFailures / p.attackStep));
  return Math.max(p.floor, p.perPair >> halvings);
}

/**
 * The address a limit is kept for: IPv4 as is, IPv6 by its /64 prefix, every spelling of one
 * address the same key (IPv4-mapped IPv6 is its IPv4; a port or an IPv6 zone is dropped). A
 * value that is no IP address at all is its own key, never merged with anything else.
 */
export function addressKey(raw: string): string {
  let ip = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(ip);
  if (bracketed) ip = bracketed[1]!;
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(ip)) ip = ip.slice(0, ip.lastIndexOf(":"));
  ip = ip.replace(/%.*$/, "");
  if (!ipaddr.isValid(ip)) return raw;
  const parsed = ipaddr.process(ip); // an IPv4-mapped IPv6 address becomes its IPv4
  if (parsed.kind() === "ipv4") return parsed.toString();
  const groups = (parsed as ipaddr.IPv6).parts;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}

/** Seconds to wait when `recent` (failure times, oldest first) has reached `allowed`, else 0. */
export function waitFor(recent: number[], allowed: number, windowMs: number, now: number): number {
  if (recent.length < allowed) return 0;
  return Math.max(1, Math.ceil((recent[recent.length - allowed]! + windowMs - now) / 1000));
}

/**
 * Like waitFor, with `pending` guesses still being verified counted as failures: when only they
 * reach the allowance, a second's wait (they end in milliseconds and are then counted as what
 * they were).
 */
function waitWithPending(recent: number[], allowed: number, pending: number, windowMs: number, now: number): number {
  const wait = waitFor(recent, allowed, windowMs, now);
  return wait > 0 ? wait : pendingWait(recent.length, pending, allowed);
}

/** Below the allowance by failures alone: a second's wait when the guesses in flight would reach it. */
export function pendingWait(failures: number, pending: number, allowed: number): number {
  return pending > 0 && failures + pending >= allowed ? 1 : 0;
}

/**
 * Guesses being verified right now, per key. An argon2id check runs off the event loop for tens
 * of milliseconds between the limit's check and the failure's record: without this, guesses sent
 * side by side all passed the check before the first failure was counted.
 */
export class PendingGuesses {
  private readonly counts = new Map<string, number>();

  of(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  /** Counts one guess under each key until the returned function is called (once). */
  begin(...keys: string[]): () => void {
    for (const k of keys) this.counts.set(k, this.of(k) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      for (const k of keys) {
        const n = this.of(k) - 1;
        if (n <= 0) this.counts.delete(k);
        else this.counts.set(k, n);
      }
    };
  }
}

export interface GuessVerdict {
  /** Seconds until this address may try this target again (0: now). */
  wait: number;
  /** Which limit is reached: this address on this target, or this address overall. */
  reason: "target" | "address" | null;
}

/** Failure times per key inside a sliding window, in a bounded LRU (the one window every limit here uses). */
export class FailureLog {
  private readonly failures = new LRUCache<string, number[]>({ max: 100_000 });

  constructor(readonly windowMs: number) {}

  recent(key: string, now: number): number[] {
    return (this.failures.get(key) ?? []).filter((t) => t > now - this.windowMs);
  }

  /** Records a failure, keeping the newest `keep` (enough to answer any limit asked of this key). */
  add(key: string, now: number, keep: number): void {
    const list = this.recent(key, now);
    list.push(now);
    this.failures.set(key, list.slice(-keep));
  }

  /** Seconds until `key` has fewer than `allowed` failures in the window (0: now), `pending` guesses counted as failures. */
  waitFor(key: string, allowed: number, now: number, pending = 0): number {
    return waitWithPending(this.recent(key, now), allowed, pending, this.windowMs, now);
  }

  clear(key: string): void {
    this.failures.delete(key);
  }
}

/**
 * The policy kept in memory (bounded LRUs) for one running Pier: a restart forgets the counts,
 * which only ever helps the rightful user; argon2id or short-lived codes keep guessing slow anyway.
 */
export class GuessLimiter {
  private readonly log: FailureLog;
  private readonly pending = new PendingGuesses();

  constructor(private readonly policy: GuessPolicy) {
    this.log = new FailureLog(policy.windowMs);
  }

  check(target: string, ip: string, now: number): GuessVerdict {
    const p = this.policy;
    const address = addressKey(ip);
    const addressWait = this.log.waitFor(`a|${address}`, p.perAddress, now, this.pending.of(`a|${address}`));
    const allowed = pairAllowance(p, this.log.recent(`t|${target}`, now).length);
    const pair = `p|${target}|${address}`;
    const pairWait = this.log.waitFor(pair, allowed, now, this.pending.of(pair));
    const wait = Math.max(addressWait, pairWait);
    return { wait, reason: wait === 0 ? null : addressWait >= pairWait ? "address" : "target" };
  }

  fail(target: string, ip: string, now: number): void {
    const p = this.policy;
    const address = addressKey(ip);
    this.log.add(`a|${address}`, now, p.perAddress);
    this.log.add(`p|${target}|${address}`, now, p.perPair);
    // Enough history to see every halving down to the floor.
    this.log.add(`t|${target}`, now, p.attackStep * 32);
  }

  /**
   * A guess that passed check() is being verified: it counts as a failure for its pair and
   * address until the returned function is called (call it once the verdict is recorded).
   */
  begin(target: string, ip: string): () => void {
    const address = addressKey(ip);
    return this.pending.begin(`a|${address}`, `p|${target}|${address}`);
  }

  /** The right secret: this address starts over on this target (the target's count stays). */
  succeed(target: string, ip: string): void {
    this.log.clear(`p|${target}|${addressKey(ip)}`);
  }
}
