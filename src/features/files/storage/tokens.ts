// Signed, expiring storage URLs. The token is the credential of /_storage/<token>: a base64url
// JSON claim set and an HMAC-SHA256 over it under the `storage-url` key (SecretBox.sign), with
// the direction ("put"/"get") bound into the signed string so a download link can never be
// used to upload, nor the reverse. Claims bind account, bucket, size, MD5, sha256 and type.
import type { Deps } from "../../../core/context";
import { ApiError } from "../../../core/errors";

export interface PutClaims {
  /** Upload entry id (upl_...): what the bytes are for. */
  u: string;
  a: string; // account
  b: string; // bucket
  s: number; // byte size
  m: string; // base64 MD5
  h: string; // sha256 hex
  t: string; // content type
  e: number; // expiry, unix seconds
}

export interface GetClaims {
  a: string;
  b: string;
  h: string;
  s: number;
  t: string;
  /** File name for Content-Disposition. */
  n: string;
  /** File id: the link works only while this file still holds this content (h). */
  f: string;
  e: number;
}

export const PUT_URL_TTL_S = 60 * 60;
export const GET_URL_TTL_S = 5 * 60;

type Direction = "put" | "get";

export function signToken(deps: Deps, dir: Direction, claims: PutClaims | GetClaims): string {
  const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
  return `${body}.${deps.secrets.sign("storage-url", `${dir}.${body}`)}`;
}

export function verifyToken<T extends PutClaims | GetClaims>(deps: Deps, dir: Direction, token: string): T {
  const dot = token.indexOf(".");
  if (dot <= 0 || token.length > 4096) throw new ApiError("STORAGE_URL_INVALID");
  const body = token.slice(0, dot);
  if (!deps.secrets.verify("storage-url", `${dir}.${body}`, token.slice(dot + 1))) throw new ApiError("STORAGE_URL_INVALID");
  let claims: T;
  try {
    claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as T;
  } catch {
    throw new ApiError("STORAGE_URL_INVALID");
  }
  if (typeof claims.e !== "number" || claims.e * 1000 <= deps.clock.now().getTime()) throw new ApiError("STORAGE_URL_EXPIRED");
  return claims;
}

export const storageUrl = (deps: Deps, token: string): string => `${deps.urls.baseUrl}/_storage/${token}`;

export const expiresIn = (deps: Deps, seconds: number): number => Math.floor(deps.clock.now().getTime() / 1000) + seconds;
