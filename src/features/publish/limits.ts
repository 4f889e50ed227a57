// Per-account throttles for publishing and upload control (config: publish/upload rate limits).
// One pair of limiters per process (keyed by Deps, so two Piers in one test process stay apart).
import type { Actor, Deps } from "../../core/context";
import { RateLimiter } from "../../http/rate-limit";

const limiters = new WeakMap<Deps, { publish: RateLimiter; upload: RateLimiter }>();

function of(deps: Deps) {
  let l = limiters.get(deps);
  if (!l) {
    l = {
      publish: new RateLimiter(deps.config.publishRateLimitPerMinute, "PUBLISH_RATE_LIMIT_EXCEEDED"),
      upload: new RateLimiter(deps.config.uploadRateLimitPerMinute, "UPLOAD_RATE_LIMIT_EXCEEDED"),
    };
    limiters.set(deps, l);
  }
  return l;
}

/** 429 PUBLISH_RATE_LIMIT_EXCEEDED with Retry-After when the account publishes too often. */
export const takePublishToken = (deps: Deps, actor: Actor) => of(deps).publish.take(actor.accountId, deps.clock.now().getTime());
export const takeUploadToken = (deps: Deps, actor: Actor) => of(deps).upload.take(actor.accountId, deps.clock.now().getTime());
