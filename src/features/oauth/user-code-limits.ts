// Brute-force limit for user codes typed or followed on the approval page, by the shared guess
// policy (src/core/guess-limits.ts): each address gets 10 wrong codes per signed-in user and 50
// overall per 15 minutes, fewer while a user's page sees many misses from several addresses; a
// fresh address always gets its tries. With ~34.6 bits per code, guessing a live code is out of
// reach. Misses are only counted for requests a page of Pier or the user started (see routes.ts):
// another site cannot spend someone's allowance by sending their browser to wrong codes.
import type { Clock } from "../../core/clock";
import { ApiError } from "../../core/errors";
import { GuessLimiter } from "../../core/guess-limits";

export class UserCodeGuard {
  private readonly guesses = new GuessLimiter({ perPair: 10, perAddress: 50, attackStep: 20, floor: 3, windowMs: 15 * 60_000 });

  constructor(private readonly clock: Clock) {}

  /** Throws 429 TOO_MANY_ATTEMPTS (the code of every wrong-guess lockout) while this address must wait (for this user, or overall). */
  check(userId: string, ip: string): void {
    const { wait } = this.guesses.check(userId, ip, this.clock.now().getTime());
    if (wait > 0) {
      throw new ApiError(
        "TOO_MANY_ATTEMPTS",
        "Too many wrong Connection IDs from your network address. Wait a while, then start the login again from your terminal.",
        { retry_after: wait },
        wait,
      );
    }
  }

  miss(userId: string, ip: string): void {
    this.guesses.fail(userId, ip, this.clock.now().getTime());
  }
}
