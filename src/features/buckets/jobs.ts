import type { JobHandler } from "../../jobs/runner";
import { BUCKET_DELETE_JOB, bucketDeleteJob } from "./delete";

/** Background work of the buckets feature (large deletes). */
export const bucketJobs: Record<string, JobHandler> = {
  [BUCKET_DELETE_JOB]: bucketDeleteJob,
};
