// Cloudflare Turnstile, only where the operator configured its keys and a site's forms say
// turnstile: "auto". The widget's token (field cf-turnstile-response) is checked server-side at
// siteverify, as Cloudflare documents: POST secret, response and remoteip; answer { success,
// hostname }. The site key is the operator's, shared by every site of the instance, so `hostname`
// (where the token was solved) must be the host the form was posted to (D270).
// https://developers.cloudflare.com/turnstile/get-started/server-side-validation/
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import type { FormsConfig } from "./config";

export const TURNSTILE_FIELD = "cf-turnstile-response";
export const TURNSTILE_SCRIPT = "https://challenges.cloudflare.com/turnstile/v0/api.js";
export const TURNSTILE_ORIGIN = "https://challenges.cloudflare.com";
/** Cloudflare answers in well under a second; a stuck call must not hold the visitor for long. */
const VERIFY_TIMEOUT_MS = 10_000;
/** Cloudflare's tokens are at most 2048 characters. */
const TOKEN_MAX = 2048;

/** The site key to render, when this configuration asks for Turnstile and the operator configured it. */
export function turnstileSiteKey(deps: Deps, config: FormsConfig): string | null {
  const { turnstileSiteKey, turnstileSecretKey } = deps.config;
  return config.turnstile === "auto" && turnstileSiteKey && turnstileSecretKey ? turnstileSiteKey : null;
}

/**
 * Throws FORM_CHALLENGE_FAILED unless Cloudflare confirms the token, solved on `host` (the site
 * host the form was posted to, without port); a failed or unreachable check refuses the post.
 */
export async function verifyTurnstile(deps: Deps, token: string | undefined, ip: string, host: string): Promise<void> {
  const fail = (why: string): never => {
    throw new ApiError("FORM_CHALLENGE_FAILED", `The anti-spam check failed (${why}). Reload the page, complete the check and send the form again.`, {
      challenge: "turnstile",
    });
  };
  if (!token) return fail("the Turnstile check was not completed");
  if (token.length > TOKEN_MAX) return fail("the Turnstile answer is not valid");
  let outcome: unknown;
  try {
    const res = await fetch(deps.config.turnstileVerifyUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ secret: deps.config.turnstileSecretKey ?? "", response: token, remoteip: ip }),
      signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS),
    });
    outcome = res.ok ? await res.json() : null;
  } catch {
    outcome = null;
  }
  if (outcome === null) return fail("Turnstile could not be reached");
  const { success, hostname } = outcome as { success?: unknown; hostname?: unknown };
  if (success !== true) return fail("the Turnstile answer was not accepted");
  // A token solved on another site of this instance (same site key), or one that names no host.
  if (typeof hostname !== "string" || hostname.toLowerCase() !== host.toLowerCase()) return fail("the Turnstile check was completed on another site");
}
