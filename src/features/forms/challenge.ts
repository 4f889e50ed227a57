// Proof of work with no third party (ALTCHA): the site host hands out challenges signed with a
// key derived from the instance secret, the altcha widget (served from the site host too) solves
// one in the visitor's browser, and a post carries the solution. A solution is good once: spent
// challenge ids are remembered until their challenge expires (a bounded store, see below).
import { CappedMap, createChallenge, verifySolution, type Challenge, type Solution } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/pbkdf2";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";

/** A challenge must be solved and sent within this time. */
export const CHALLENGE_TTL_MS = 10 * 60_000;
/** PBKDF2 iterations per attempt; with the "00" key prefix a browser makes ~256 attempts (well under a second). */
const CHALLENGE_COST = 5_000;
const ALGORITHM = "PBKDF2/SHA-256";
/**
 * Spent challenge ids. 200,000 ids cover 330 solved posts a second for the whole ten-minute
 * lifetime of a challenge, far above what the per-form rate limits let through; past that the
 * oldest are forgotten first, and those are the ones closest to expiring anyway.
 */
const SPENT_MAX = 200_000;

/** A solution verified for one site and not used before, to be spent by the post that stores. */
export interface CheckedSolution {
  nonce: string;
  /** When its challenge expires (ms): until then the spent nonce is remembered. */
  until: number;
}

export class FormChallenges {
  private readonly spent = new CappedMap<string, number>({ maxSize: SPENT_MAX });
  private secret: string | null = null;

  constructor(private readonly deps: Deps) {}

  private hmacSecret(): string {
    return (this.secret ??= this.deps.secrets.key("form-challenge").toString("hex"));
  }

  /** A fresh challenge for one site (its id is signed into the challenge, so it is good only there). */
  async create(siteId: string): Promise<Challenge> {
    return createChallenge({
      algorithm: ALGORITHM,
      cost: CHALLENGE_COST,
      deriveKey,
      keyPrefix: "00",
      expiresAt: new Date(Date.now() + CHALLENGE_TTL_MS),
      data: { site: siteId },
      hmacSignatureSecret: this.hmacSecret(),
    });
  }

  /**
   * Checks a solution (the widget's base64 JSON payload) for this site without spending it;
   * throws FORM_CHALLENGE_FAILED when it is malformed, forged, for another site, expired or
   * already used. The post spends it (`spend`) only once nothing else can refuse it but the store.
   */
  async check(siteId: string, payload: string): Promise<CheckedSolution> {
    let parsed: { challenge?: Challenge; solution?: Solution };
    try {
      parsed = payload.length <= 4_000 ? JSON.parse(Buffer.from(payload, "base64").toString("utf8")) : fail("malformed");
    } catch (e) {
      if (e instanceof ApiError) throw e;
      return fail("malformed");
    }
    const { challenge, solution } = parsed;
    const params = challenge?.parameters;
    if (
      !challenge ||
      !solution ||
      typeof params !== "object" ||
      params === null ||
      params.algorithm !== ALGORITHM ||
      params.cost !== CHALLENGE_COST ||
      typeof params.nonce !== "string" ||
      typeof solution.counter !== "number" ||
      typeof solution.derivedKey !== "string"
    ) {
      return fail("malformed");
    }
    let result;
    try {
      result = await verifySolution({ challenge, solution, deriveKey, hmacSignatureSecret: this.hmacSecret() });
    } catch {
      return fail("malformed");
    }
    if (result.expired) return fail("expired");
    if (!result.verified) return fail("invalid solution");
    if (params.data?.site !== siteId) return fail("issued for another site");
    const checked = { nonce: params.nonce, until: (params.expiresAt ?? 0) * 1000 || Date.now() + CHALLENGE_TTL_MS };
    this.throwIfSpent(checked);
    return checked;
  }

  /**
   * Marks a checked solution used. Synchronous, so the caller spends and stores with no await
   * between: of concurrent posts with one solution, one spends it and the others fail here.
   */
  spend(checked: CheckedSolution): void {
    this.throwIfSpent(checked);
    this.spent.delete(checked.nonce);
    this.spent.set(checked.nonce, checked.until);
  }

  /** Forgets a spend whose post was refused after all (rate limit, quota): a spent solution means a stored submission. */
  refund(checked: CheckedSolution): void {
    this.spent.delete(checked.nonce);
  }

  private throwIfSpent(checked: CheckedSolution): void {
    const seen = this.spent.get(checked.nonce);
    if (seen !== undefined && seen > Date.now()) fail("already used");
  }
}

function fail(why: string): never {
  throw new ApiError("FORM_CHALLENGE_FAILED", `The anti-spam check failed (${why}). Reload the page and send the form again.`, { challenge: why });
}
