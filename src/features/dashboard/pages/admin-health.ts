// Instance admin: health (/dashboard/admin/health). Version, uptime, data dir and database
// size, the job queue (counts by state; failed jobs with their error and a retry), the SMTP
// receiver, and automatic HTTPS. Non-admins get 404.
import { stat } from "node:fs/promises";
import { walkTree } from "../../../core/walk";
import type { Elysia } from "elysia";
import { listCertificates } from "../../../acme";
import type { Deps } from "../../../core/context";
import type { ApiError } from "../../../core/errors";
import { serverVersion } from "../../../core/version";
import { html, shortTime, type SafeHtml } from "../../../http/pages/layout";
import type { DashboardPage } from "../page";
import { backupStatus } from "../../operations";
import type { Session, Shell } from "../shell";
import { ADMIN_PATH, adminRefusal, adminTabs, NOT_AN_ACCOUNT_WRITE, noticeOf, offsetOf, pager, requireAdminSudo, requireInstanceAdmin } from "./account-common";

export const HEALTH_PATH = `${ADMIN_PATH}/health`;
const FAILED_PAGE = 20;
/** A data dir of more entries than this is reported as "at least": the page must answer fast. */
const WALK_LIMIT = 50_000;
const DONE: Record<string, string> = { retried: "The job is queued again with a fresh set of attempts." };

function bytes(n: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) (n /= 1024), i++;
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return d ? `${d} d ${h} h` : h ? `${h} h ${m} min` : `${m} min ${s % 60} s`;
}

/** The data dir's size, walking at most WALK_LIMIT entries. */
async function dirSize(root: string): Promise<{ bytes: number; complete: boolean }> {
  let total = 0;
  let seen = 0;
  for await (const { path, entry } of walkTree(root)) {
    if (++seen > WALK_LIMIT) return { bytes: total, complete: false };
    if (entry.isFile()) total += (await stat(path).catch(() => ({ size: 0 }))).size;
  }
  return { bytes: total, complete: true };
}

function failedJobs(shell: Shell, s: Session, offset: number, total: number): SafeHtml {
  const rows = shell.deps.jobs.failed(FAILED_PAGE, offset);
  if (!rows.length) return html`<p class="muted">No failed jobs.</p>`;
  const body = rows.map(
    (
      j,
    ) => html`<tr><td><code>${j.kind}</code><br><code class="small">${j.id}</code></td><td class="small">${j.attempts} of ${j.maxAttempts}</td><td class="small">${shortTime(j.finishedAt)}</td>
<td class="wrap small mono">${j.lastError ?? ""}</td>
<td><form method="post" action="${HEALTH_PATH}/jobs/${j.id}/retry" class="inline"><input type="hidden" name="csrf" value="${shell.formToken(s)}"><button type="submit" class="secondary" aria-label="Retry job ${j.id}">Retry</button></form></td></tr>`,
  );
  return html`<table><caption class="skip">Failed jobs</caption><thead><tr><th scope="col">Job</th><th scope="col">Attempts</th><th scope="col">Failed</th><th scope="col">Error</th><th scope="col"><span class="skip">Actions</span></th></tr></thead><tbody>${body}</tbody></table>
${pager(offset, FAILED_PAGE, total, (o) => `${HEALTH_PATH}${o ? `?offset=${o}` : ""}#jobs`)}`;
}

/** Every certificate Pier manages, as `pier admin certs` lists them. */
function certificateRows(deps: Deps): SafeHtml {
  const rows = listCertificates(deps);
  if (!rows.length) return html`<p class="muted">No certificates yet.</p>`;
  const body = rows.map(
    (c) =>
      html`<tr><td class="wrap"><code>${c.host}</code></td><td>${c.status}</td><td class="small">${shortTime(c.expiresAt)}</td><td class="wrap small">${c.lastError ?? ""}</td><td class="small">${c.nextAttemptAt ? shortTime(c.nextAttemptAt) : ""}</td></tr>`,
  );
  return html`<table><caption class="skip">Certificates</caption><thead><tr><th scope="col">Host</th><th scope="col">State</th><th scope="col">Expires</th><th scope="col">Last error</th><th scope="col">Next attempt</th></tr></thead><tbody>${body}</tbody></table>`;
}

/** Scheduled backups, as `pier admin backups` shows them. */
function backupSection(deps: Deps): SafeHtml {
  const b = backupStatus(deps);
  if (!b.enabled)
    return html`<p>Scheduled backups are off. Start Pier with <code>--backup-dir DIR</code> (see the <a href="/docs/guides/operations#scheduled-backups">operations guide</a>), or take one by hand with <code>pier backup --to DIR</code>.</p>`;
  const failure = b.last_error
    ? html`<p class="error" role="alert">The last backup failed at ${shortTime(b.last_error.at)}: ${b.last_error.message}</p>`
    : html``;
  const rows = b.backups.map(
    (x) =>
      html`<tr><td class="wrap"><code>${x.name}</code></td><td>${x.complete ? "complete" : "incomplete"}</td><td class="small">${x.created_at ? shortTime(x.created_at) : ""}</td><td class="small">${x.complete ? `${x.blobs} blobs, ${bytes((x.blob_bytes ?? 0) + (x.database_bytes ?? 0))}` : ""}</td></tr>`,
  );
  return html`${failure}<p>Every ${duration(b.every_ms)} into <code class="wrap">${b.dir}</code>, keeping ${b.keep}. Last complete: ${b.last?.created_at ? shortTime(b.last.created_at) : "none yet"}; next due: ${shortTime(b.next_due_at)}.</p>
<table><caption class="skip">Backups</caption><thead><tr><th scope="col">Folder</th><th scope="col">State</th><th scope="col">Taken</th><th scope="col">Size</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export const adminHealthPage: DashboardPage = {
  routes: (app, shell) => {
    const startedAt = shell.deps.clock.now().getTime();
    const view = async (s: Session, query: Record<string, string | undefined>, error?: ApiError) => {
      requireInstanceAdmin(s);
      const deps = shell.deps;
      const dataDir = await dirSize(deps.config.dataDir);
      const pages = deps.sqlite.query<{ n: number }, []>("SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()").get();
      const counts = deps.jobs.countsByStatus();
      const cert = deps.certificates;
      return shell.render(s, {
        title: "Health",
        template: "dashboard/admin-health.html",
        current: ADMIN_PATH,
        error,
        vars: {
          tabs: adminTabs(HEALTH_PATH),
          notice: noticeOf(error, DONE, query.done),
          version: serverVersion,
          uptime: duration(deps.clock.now().getTime() - startedAt),
          dataDirPath: deps.config.dataDir,
          dataDirSize: `${dataDir.complete ? "" : "at least "}${bytes(dataDir.bytes)}`,
          dbSize: bytes(pages?.n ?? 0),
          counts: html`${Object.entries(counts).map(([k, n]) => html`<tr><th scope="row">${k}</th><td>${n.toLocaleString("en")}</td></tr>`)}`,
          failed: failedJobs(shell, s, offsetOf(query), counts.failed),
          smtp: deps.config.smtpPort === null ? "Off (--smtp-port off): bucket addresses receive no mail." : `On, port ${deps.config.smtpPort}.`,
          relay: deps.config.smtpRelayUrl ? "Outbound mail goes to the configured SMTP relay." : "No SMTP relay: outbound mail waits in the outbox.",
          certificatesOff: cert === null,
          certificates: certificateRows(deps),
          backups: backupSection(deps),
        },
      });
    };
    return app
      .get(
        HEALTH_PATH,
        shell.view((s, { query }) => view(s, query)),
        { detail: { hide: true } },
      )
      .post(
        `${HEALTH_PATH}/jobs/:id/retry`,
        shell.action(
          (s, { request, params }) => {
            requireAdminSudo(shell, request, s);
            shell.deps.jobs.retry(params.id!);
            return `${HEALTH_PATH}?done=retried#jobs`;
          },
          (s, error) => adminRefusal(shell, s, error, HEALTH_PATH, () => view(s, {}, error)),
          NOT_AN_ACCOUNT_WRITE,
        ),
        { detail: { hide: true } },
      ) as unknown as Elysia;
  },
};
