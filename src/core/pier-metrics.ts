// The metrics one Pier process keeps (one instance per process, in Deps: two Piers in one test
// process stay apart). Counters move where things happen; sizes, queue depth and certificate
// expiry are read when /metrics is scraped (src/features/monitoring/service.ts).
import { Counter, Gauge, Histogram, type Metric } from "./metrics";

export const HOST_KINDS = ["api", "site", "storage", "other"] as const;
/** Route groups: a fixed list, so a request's path never becomes a label value. */
export const ROUTE_GROUPS = ["api", "mcp", "oauth", "dashboard", "docs", "storage", "ops", "page", "site_internal", "acme", "other"] as const;
export const STATUS_CLASSES = ["1xx", "2xx", "3xx", "4xx", "5xx"] as const;
/** Why the SMTP receiver refused a message or recipient; any other reply code counts as "other". */
export const SMTP_REFUSALS = [
  "unknown_recipient",
  "rate_limited",
  "too_many_connections",
  "too_large",
  "storage_full",
  "policy",
  "temporary",
  "other",
] as const;
export const JOB_STATES = ["queued", "running", "failed"] as const;
/** What a site cache reset dropped: one publication's lookups, or every site's. */
export const SITE_CACHE_RESET_SCOPES = ["publication", "all"] as const;

const LATENCY_BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_BOUNDS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900];

export class PierMetrics {
  readonly httpRequests = new Counter(
    "pier_http_requests_total",
    "HTTP requests answered, by host kind, route group and status class.",
    [
      ["host", HOST_KINDS],
      ["group", ROUTE_GROUPS],
      ["status", STATUS_CLASSES],
    ],
    true,
  );
  readonly httpDuration = new Histogram(
    "pier_http_request_duration_seconds",
    "Time from a request's arrival to its response headers being ready (a streamed body may take longer), by host kind, route group and status class.",
    [
      ["host", HOST_KINDS],
      ["group", ROUTE_GROUPS],
      ["status", STATUS_CLASSES],
    ],
    LATENCY_BOUNDS,
  );
  readonly siteBytes = new Counter(
    "pier_site_bytes_served_total",
    "Bytes of file bodies the site server handed out (all site hosts, before compression by a proxy).",
  );
  readonly siteCacheResets = new Counter(
    "pier_site_cache_resets_total",
    "Cached site lookups dropped because another Pier process changed what sites serve: one publication's (scope publication) or every site's (scope all).",
    [["scope", SITE_CACHE_RESET_SCOPES]],
  );
  readonly autoIndexRenders = new Counter(
    "pier_site_autoindex_renders_total",
    "Auto-Index pages built (a page is built once per deploy, folder and template, then served from memory).",
  );
  readonly smtpSessions = new Counter("pier_smtp_sessions_total", "SMTP connections accepted.");
  readonly smtpAccepted = new Counter("pier_smtp_messages_accepted_total", "Messages stored and answered 250.");
  readonly smtpRefused = new Counter("pier_smtp_refused_total", "Recipients, messages or connections the SMTP receiver refused, by reason.", [
    ["reason", SMTP_REFUSALS],
  ]);
  readonly jobDepth = new Gauge("pier_jobs", "Background jobs by state (failed: finished without success and kept).", [["state", JOB_STATES]]);
  readonly jobRuns: Counter;
  readonly jobFailures: Counter;
  readonly jobDuration: Histogram;
  readonly buildDuration = new Histogram("pier_publish_build_seconds", "Publish build times (one run of a build job).", [], JOB_BOUNDS);
  readonly blobBytes = new Gauge(
    "pier_blob_store_bytes",
    "Bytes in the blob store (file contents, all versions and deploys); refreshed at most once a minute.",
  );
  readonly blobCount = new Gauge("pier_blob_store_blobs", "Blobs in the blob store; refreshed with pier_blob_store_bytes.");
  readonly dbBytes = new Gauge("pier_database_bytes", "Size of the SQLite database file (pier.db).");
  readonly walBytes = new Gauge("pier_database_wal_bytes", "Size of the SQLite write-ahead log (pier.db-wal).");
  readonly diskFree = new Gauge("pier_data_dir_free_bytes", "Bytes available to Pier on the data dir's file system.");
  readonly certExpiry = new Gauge(
    "pier_certificate_expiry_timestamp_seconds",
    "Expiry (Unix time) of the automatic certificates: the API host's, the MX host's, and the earliest of all others (sites, custom domains); 0 = none issued.",
    [["certificate", ["api", "mx", "earliest_other"]]],
  );
  readonly certificates = new Gauge("pier_certificates", "Automatic certificates by state.", [["state", ["pending", "issued", "failed"]]]);
  readonly memory = new Gauge("pier_process_memory_bytes", "Process memory by kind (rss, heap_used, heap_total, external).", [
    ["kind", ["rss", "heap_used", "heap_total", "external"]],
  ]);
  readonly eventLoopLag = new Gauge("pier_event_loop_lag_seconds", "Event-loop delay over the last scrape interval (mean, p99 and max).", [
    ["quantile", ["mean", "p99", "max"]],
  ]);
  readonly uptime = new Gauge("pier_process_start_time_seconds", "Start time of the process since the Unix epoch.");

  constructor(jobKinds: readonly string[]) {
    const kinds = [...jobKinds, "other"];
    this.jobRuns = new Counter("pier_job_runs_total", "Background job runs finished, by kind.", [["kind", kinds]]);
    this.jobFailures = new Counter("pier_job_failures_total", "Background job runs that failed (retried or given up), by kind.", [["kind", kinds]]);
    this.jobDuration = new Histogram("pier_job_run_seconds", "Background job run times, by kind.", [["kind", kinds]], JOB_BOUNDS);
    this.uptime.set(0, Math.round(Date.now() / 1000 - process.uptime()));
  }

  /** A job kind's slot; kinds not declared at start share "other" (cardinality stays bounded). */
  jobSlot(kind: string): number {
    const s = this.jobRuns.slotOf(kind);
    return s >= 0 ? s : this.jobRuns.slotOf("other");
  }

  all(): Metric[] {
    return [
      this.httpRequests,
      this.httpDuration,
      this.siteBytes,
      this.siteCacheResets,
      this.autoIndexRenders,
      this.smtpSessions,
      this.smtpAccepted,
      this.smtpRefused,
      this.jobDepth,
      this.jobRuns,
      this.jobFailures,
      this.jobDuration,
      this.buildDuration,
      this.blobBytes,
      this.blobCount,
      this.dbBytes,
      this.walBytes,
      this.diskFree,
      this.certExpiry,
      this.certificates,
      this.memory,
      this.eventLoopLag,
      this.uptime,
    ];
  }
}
