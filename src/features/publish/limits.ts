// Per-account throttles for publishing and upload control (config: publish/upload rate limits).
// One pair of limiters per process (a field of Deps, so two Piers in one test process stay apart).
import type { Config } from "../../config";
import type { Actor, Deps } from "../../core/context";
import { RateLimiter } from "../../http/rate-limit";

export interface PublishLimiters {
  publish: RateLimiter;
  upload: RateLimiter;
}

export function newPublishLimiters(config: Config): PublishLimiters {
  return {
    publish: new RateLimiter(config.publishRateLimitPerMinute, "PUBLISH_RATE_LIMIT_EXCEEDED"),
    upload: new RateLimiter(config.uploadRateLimitPerMinute, "UPLOAD_RATE_LIMIT_EXCEEDED"),
  };
}

const of = (deps: Deps) => deps.publishLimiters;

/** 429 PUBLISH_RATE_LIMIT_EXCEEDED with Retry-After when the account publishes too often. */
export const takePublishToken = (deps: Deps, actor: Actor) => of(deps).publish.take(actor.accountId, deps.clock.now().getTime());
export const takeUploadToken = (deps: Deps, actor: Actor) => of(deps).upload.take(actor.accountId, deps.clock.now().getTime());
