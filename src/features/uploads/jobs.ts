import type { JobHandler } from "../../jobs/runner";
import { expireUploads } from "./sessions";

/** Expire abandoned upload sessions (releasing their bucket locks) and stale direct uploads. */
export const uploadJobs: Record<string, JobHandler> = {
  "uploads.expire": { run: async (deps) => expireUploads(deps), maxAttempts: 1 },
};
