// Every argon2id password check of this process goes through one queue (D305, D314): site gates
// and Pier's own sign-in and password confirmation run one check at a time, so the work pool's
// other threads stay free for file reads, each kind waiting in its own lane.
import { WorkQueue } from "./work-queue";

export type PasswordLane = "gate" | "account";

/** One check running, 9 more waiting per lane (a few seconds; one address's whole allowance fits). */
const checks = new WorkQueue<PasswordLane>(1, 9);

/** Bun.password.verify in turn; null when the lane's queue is full (tell the client to come back). */
export function verifyPasswordInTurn(password: string, hash: string | Promise<string>, lane: PasswordLane): Promise<boolean | null> {
  return checks.run(async () => Bun.password.verify(password, await hash), lane);
}
