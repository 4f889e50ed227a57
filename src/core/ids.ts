import { randomBytes } from "node:crypto";

// Crockford-like lowercase base32 without ambiguous letters: ids are URL- and DNS-safe.
const alphabet = "0123456789abcdefghjkmnpqrstvwxyz";

// Cryptographic randomness drawn from a pooled buffer (as Node does for randomUUID): every site
// response gets a request id, and one randomBytes call per id showed in the serving benchmark.
const POOL_BYTES = 8192;
let pool = randomBytes(POOL_BYTES);
let poolOffset = 0;

export function randomToken(length: number): string {
  if (length > POOL_BYTES) throw new Error("token too long");
  if (poolOffset + length > POOL_BYTES) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[pool[poolOffset + i]! & 31];
  poolOffset += length;
  return out;
}

export type IdPrefix =
  | "usr"
  | "acc"
  | "key"
  | "ses"
  | "bkt"
  | "job"
  | "ntf"
  | "lck"
  | "var"
  | "pub"
  | "pus"
  | "bus"
  | "pcd"
  | "bktrv"
  | "fsub"
  | "req"
  | "fil"
  | "upl";
export type SitesIdPrefix = "dpl" | "gcd" | "msg" | "gsc";

/** Prefix + 20 random chars (100 bits): never sequential, never guessable. */
export function newId(prefix: IdPrefix | SitesIdPrefix | AuthIdPrefix): string {
  return `${prefix}_${randomToken(20)}`;
}

/** OAuth connections and tokens, agent activity, email login codes, invites. */
export type AuthIdPrefix = "cxn" | "tok" | "act" | "lcd" | "inv";
