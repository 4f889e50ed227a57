// OAuth credentials: client ids, token prefixes and lifetimes, secrets and their hashes, user codes.
import { randomBytes } from "node:crypto";
import { randomSecret, sha256Hex } from "../../core/crypto";
import { randomToken } from "../../core/ids";

export const CLIENT_ID_PREFIX = "mcp_client_";
export const ACCESS_TOKEN_PREFIX = "pier_at_";
export const REFRESH_TOKEN_PREFIX = "pier_rt_";

export const ACCESS_TOKEN_TTL_S = 3600;
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 3600;
export const AUTH_CODE_TTL_S = 300;
export const DEVICE_CODE_TTL_S = 600;
export const DEVICE_POLL_INTERVAL_S = 5;

export const newClientId = () => CLIENT_ID_PREFIX + randomToken(24);
export const newSecret = () => randomSecret(32);
export const hashSecret = (s: string) => sha256Hex(s);

// RFC 8628 §6.1: consonants only (no vowels, so no words; no 0/O or 1/I confusion).
const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";

/** 8 characters from a 20-letter alphabet (~34.6 bits), uniform by rejection sampling. */
export function newUserCode(): string {
  let out = "";
  while (out.length < 8) {
    for (const b of randomBytes(16)) {
      if (b >= 240) continue; // 240 = 12 * 20: keeps the distribution uniform
      out += USER_CODE_ALPHABET[b % 20];
      if (out.length === 8) break;
    }
  }
  return out;
}

/** Accepts "abcd-efgh", "ABCD EFGH", ...; null when it cannot be a user code at all. */
export function normalizeUserCode(raw: string | undefined | null): string | null {
  if (!raw || raw.length > 40) return null;
  const v = raw.toUpperCase().replace(/[\s-]/g, "");
  return new RegExp(`^[${USER_CODE_ALPHABET}]{8}$`).test(v) ? v : null;
}

export const formatUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;
