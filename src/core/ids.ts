import { randomBytes } from "node:crypto";

// Crockford-like lowercase base32 without ambiguous letters: ids are URL- and DNS-safe.
const alphabet = "0123456789abcdefghjkmnpqrstvwxyz";

export function randomToken(length: number): string {
  const bytes = randomBytes(length);
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[bytes[i]! & 31];
  return out;
}

export type IdPrefix =
  | "usr" | "acc" | "key" | "ses" | "bkt" | "job" | "ntf" | "lck" | "var"
  | "pub" | "pus" | "bus" | "pcd" | "bktrv" | "fsub" | "req" | "fil" | "upl";
export type SitesIdPrefix = "dpl" | "gcd" | "msg";

/** Prefix + 20 random chars (100 bits): never sequential, never guessable. */
export function newId(prefix: IdPrefix | SitesIdPrefix | AuthIdPrefix): string {
  return `${prefix}_${randomToken(20)}`;
}

/** OAuth connections and tokens, agent activity, email login codes, invites. */
export type AuthIdPrefix = "cxn" | "tok" | "act" | "lcd" | "inv";
