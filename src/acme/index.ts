// Automatic HTTPS (ACME): what the rest of Pier uses of it. The manager implements the
// CertificatePort seam of Deps; runtime.ts wires it to the HTTPS listener, the HTTP front
// (challenges, redirects, on-demand orders) and SMTP STARTTLS.
import { acmeEnabled } from "../config";
import type { Deps } from "../core/context";
import type { Task } from "../jobs/tasks";
import { CertificateManager, ISSUE_JOB } from "./manager";
import { CertificateStore } from "./store";

export { acmeFront, withHsts, CHALLENGE_PREFIX } from "./http";
export { apiHostname, hostAllowed, hostChecks, mxHostname } from "./host-policy";
export { CertificateManager, ISSUE_JOB, RETRY_BACKOFF_MS, renewalTime } from "./manager";
export { acmeLimits } from "./limits";

/** The manager when automatic HTTPS is on (Deps.certificates is it), else null. */
export function acmeManager(deps: Deps): CertificateManager | null {
  return deps.certificates instanceof CertificateManager ? deps.certificates : null;
}

/** `follower`: a serving worker's manager (serves what the primary stored; see CertificateManager). */
export function createCertificateManager(deps: Deps, follower = false): CertificateManager | null {
  return acmeEnabled(deps.config) ? new CertificateManager(deps, { follower }) : null;
}

export interface CertificateInfo {
  host: string;
  status: "pending" | "issued" | "failed";
  expiresAt: string | null;
  lastError: string | null;
  attempts: number;
  nextAttemptAt: string | null;
  issuedAt: string | null;
}

/** Every certificate's state, for `pier admin certs` and the status endpoint (works with ACME off too: the table is read). */
export function listCertificates(deps: Pick<Deps, "config" | "db">): CertificateInfo[] {
  return new CertificateStore(deps.config.dataDir, deps.db).rows().map((r) => ({
    host: r.host,
    status: r.status,
    expiresAt: r.notAfter,
    lastError: r.lastError,
    attempts: r.attempts,
    nextAttemptAt: r.nextAttemptAt,
    issuedAt: r.issuedAt,
  }));
}

/** Forget a host's certificate (files and row) even while Pier is not running (the admin CLI). */
export function forgetCertificate(deps: Pick<Deps, "config" | "db" | "certificates">, host: string): boolean {
  const store = new CertificateStore(deps.config.dataDir, deps.db);
  const known = store.row(host) !== undefined;
  if (deps.certificates) deps.certificates.forget(host);
  else {
    store.deleteRow(host);
    store.deleteFiles(host);
  }
  return known;
}

const MINUTE = 60_000;

/** The job kinds of automatic HTTPS, listed in src/jobs/tasks.ts. */
export const acmeTasks: Task[] = [
  {
    kind: ISSUE_JOB,
    // One attempt per job: the manager records the failure and its backoff in the table, and the sweep queues the retry.
    handler: {
      run: async (deps, payload) => {
        const m = acmeManager(deps);
        return m ? m.runOrder(String(payload.host)) : { skipped: "automatic HTTPS is off" };
      },
      maxAttempts: 1,
    },
    description: "Order (or renew) one host's certificate from the ACME CA over HTTP-01; a failure is retried later with backoff",
  },
  {
    kind: "acme.sweep",
    everyMs: MINUTE,
    handler: { run: async (deps) => acmeManager(deps)?.sweep() ?? {}, maxAttempts: 1 },
    description: "Queue certificate renewals (two thirds into their lifetime) and retries whose time came",
  },
];
