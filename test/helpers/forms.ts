// The proof of work as a visitor's browser does it: fetch a challenge from the site host and
// solve it (altcha-lib, the same algorithm the widget runs); the answer is the widget's payload.
import { solveChallenge, type Challenge } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/pbkdf2";
import { MIN_FILL_MS, startedToken } from "../../src/features/forms";
import type { FormName } from "../../src/features/forms/definitions";
import type { TestPier } from "./pier";
import { siteFetch } from "./sites";

export async function fetchChallenge(t: TestPier, host: string, cookie?: string): Promise<Challenge> {
  const r = await siteFetch(t, host, "/_pier/form/challenge", { headers: cookie ? { cookie } : {} });
  if (r.status !== 200) throw new Error(`challenge: ${r.status} ${await r.text()}`);
  return (await r.json()) as Challenge;
}

export async function solvedPayload(challenge: Challenge): Promise<string> {
  const solution = await solveChallenge({ challenge, deriveKey });
  if (!solution) throw new Error("challenge not solved");
  return Buffer.from(JSON.stringify({ challenge, solution })).toString("base64");
}

/** A fresh, solved proof of work for a site: the value of the form's `altcha` field. */
export async function solveFormChallenge(t: TestPier, host: string, cookie?: string): Promise<string> {
  return solvedPayload(await fetchChallenge(t, host, cookie));
}

/**
 * The `_pier_started` field of a form Pier rendered long enough ago for a person to have filled
 * it in (on the primary's clock, which answers form posts): every post to a hosted form needs one.
 */
export function filledTimer(t: TestPier, siteId: string, form: FormName): string {
  return startedToken(t.pier.deps, siteId, form, t.clock.now().getTime() - MIN_FILL_MS - 1);
}
