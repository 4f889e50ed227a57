import type { JobHandler } from "../../jobs/runner";

/** Background work of the buckets feature (large deletes). */
export const bucketJobs: Record<string, JobHandler> = {};
