// A bucket's Email tab (/dashboard/buckets/<id>/email): the receiving address (on/off, copy),
// the received messages newest first with the shared read state, and a message's page:
// headers, SPF/DKIM/DMARC verdicts, the text body, the HTML body in a sandboxed frame served by
// its own route under a CSP that loads nothing remote and runs no script, and the attachments
// (signed download URLs from the files service). Opening a message changes nothing (link
// scanners and prefetches GET pages too): the page marks it read with a POST, sent by the
// dashboard script as the page opens or by its "Mark as read" button without script.
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { alertBox, html, shortTime, type SafeHtml } from "../../../http/pages/layout";
import { getBucket, updateBucket } from "../../buckets";
import { downloadUrl, readFileBytes } from "../../files";
import { getInboundEmail, isMessageRead, listMessages, recordMessageRead, type MessageJson } from "../../mail";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { BUCKETS_PATH } from "./buckets-home";

const MESSAGES_PAGE = 25;
// message.json is small (bodies are truncated when parsed); a bound keeps a page from reading a huge file.
const MESSAGE_JSON_MAX = 16 * 1024 * 1024;

/**
 * The HTML body's own policy: nothing loads from anywhere (images only as data: URLs), no
 * script, forms or plugins (`sandbox`), and only Pier's own pages may frame it.
 */
export const MAIL_BODY_CSP = [
  "default-src 'none'",
  "img-src data:",
  "style-src 'unsafe-inline'",
  "font-src data:",
  "form-action 'none'",
  "base-uri 'none'",
  "sandbox",
  "frame-ancestors 'self'",
].join("; ");

const DONE: Record<string, string> = {
  "inbound-on": "The receiving address is on.",
  "inbound-off": "The receiving address is off: mail to it is refused.",
};

const emailUrl = (id: string, rest = "") => `${BUCKETS_PATH}/${encodeURIComponent(id)}/email${rest}`;

// A message is named in URLs by its folder's last part (`<YYYYMMDDTHHMMSSmmmZ>-<id>`), which
// also gives the date folders above it (mail/paths.ts messageFolder).
const MESSAGE_KEY = /^(\d{4})(\d{2})(\d{2})T\d{9}Z-[a-z0-9]{8,32}$/;
function folderOf(key: string): string {
  const m = MESSAGE_KEY.exec(key);
  if (!m) throw new ApiError("NOT_FOUND", "No such message.");
  return `_email/${m[1]}/${m[2]}/${m[3]}/${key}/`;
}
const keyOf = (folder: string) => folder.replace(/\/$/, "").split("/").pop() ?? "";

async function readMessage(shell: Shell, s: Session, bucketId: string, key: string): Promise<{ folder: string; msg: MessageJson }> {
  const folder = folderOf(key);
  try {
    const { bytes } = await readFileBytes(shell.deps, s.actor, bucketId, `${folder}message.json`, MESSAGE_JSON_MAX);
    return { folder, msg: JSON.parse(new TextDecoder().decode(bytes)) as MessageJson };
  } catch (e) {
    // A message deleted meanwhile (or never there) is the normal not-found page.
    if (e instanceof ApiError && e.code === "FILE_NOT_FOUND") throw new ApiError("NOT_FOUND", "This message is no longer in the bucket.");
    throw e;
  }
}

const person = (a: { name: string; address: string } | null | undefined) => (a ? (a.name ? `${a.name} <${a.address}>` : a.address) : "(unknown)");

async function inboxView(shell: Shell, s: Session, id: string, query: Record<string, string | undefined>, error?: ApiError) {
  const bucket = getBucket(shell.deps, s.actor, id);
  const state = getInboundEmail(shell.deps, s.actor, bucket.id);
  const offset = Math.max(0, Number.parseInt(query.offset ?? "0", 10) || 0);
  // The API's `unread=true` filter: only messages nobody has opened yet.
  const unread = query.unread === "true";
  const { messages, pagination } = listMessages(shell.deps, s.actor, bucket.id, { limit: MESSAGES_PAGE, offset, newestFirst: true, unread });
  const rows = messages.map((m) => {
    const href = emailUrl(bucket.id, `/${keyOf(m.folder)}`);
    const subject = m.subject || "(no subject)";
    return html`<tr${m.read ? "" : html` class="unread"`}><td>${m.read ? html`<span class="small muted">read</span>` : html`<span class="badge">unread</span>`}</td>
<td class="wrap"><a href="${href}">${m.read ? subject : html`<strong>${subject}</strong>`}</a>${m.attachment_count ? html` <span class="small muted">· ${m.attachment_count} attachment(s)</span>` : ""}</td>
<td class="wrap small">${m.from ?? "(unknown)"}</td><td class="small">${shortTime(m.received_at)}</td></tr>`;
  });
  const link = (o: number, onlyUnread = unread) => {
    const q = [onlyUnread ? "unread=true" : "", o ? `offset=${o}` : ""].filter(Boolean).join("&");
    return emailUrl(bucket.id, `${q ? `?${q}` : ""}#messages`);
  };
  const current = html` aria-current="page"`;
  const filter = html`<p class="small">Show: <a href="${link(0, false)}"${unread ? "" : current}>All messages</a> · <a href="${link(0, true)}"${unread ? current : ""}>Unread only</a></p>`;
  const prev = offset > 0 ? html`<a href="${link(Math.max(0, offset - MESSAGES_PAGE))}">← Newer</a>` : html`<span></span>`;
  const next = pagination.next_offset !== null ? html`<a href="${link(pagination.next_offset)}">Older →</a>` : html``;
  const list: SafeHtml = messages.length
    ? html`<table><caption class="skip">Received messages, newest first</caption><thead><tr><th scope="col">State</th><th scope="col">Subject</th><th scope="col">From</th><th scope="col">Received</th></tr></thead><tbody>${rows}</tbody></table>
<div class="pager small"><span class="muted">${pagination.total_count.toLocaleString("en")} ${unread ? "unread " : ""}message(s)</span></div><div class="pager">${prev}${next}</div>`
    : html`<p class="muted">${unread ? "No unread messages." : "No messages yet."}</p>`;
  return shell.render(s, {
    title: `Email · ${bucket.title}`,
    template: "dashboard/email.html",
    current: BUCKETS_PATH,
    error,
    vars: {
      notice: error ? alertBox(error.message) : alertBox(DONE[query.done ?? ""], "ok"),
      tabs: shell.bucketTabs(bucket.id, "email"),
      id: bucket.id,
      title: bucket.title,
      inboundOn: state.enabled,
      address: state.address ?? "",
      inboundReady: state.ready,
      blockedReason: state.blocked_reason ?? "",
      received: state.received_count,
      messages: html`${filter}${list}`,
    },
  });
}

function verdicts(msg: MessageJson): SafeHtml {
  const a = msg.authentication;
  if (!a) return html`<p class="muted">Not checked.</p>`;
  const dkim = a.dkim?.length ? a.dkim.map((d) => html`${d.result}${d.domain ? html` (${d.domain}${d.aligned ? ", aligned" : ""})` : ""}`) : ["none"];
  return html`<dl class="facts"><dt>SPF</dt><dd>${a.spf?.result ?? "none"}${a.spf?.domain ? html` (${a.spf.domain})` : ""}</dd>
<dt>DKIM</dt><dd>${dkim.map((d, i) => html`${i ? ", " : ""}${d}`)}</dd>
<dt>DMARC</dt><dd>${a.dmarc?.result ?? "none"}${a.dmarc?.domain ? html` (${a.dmarc.domain}${a.dmarc.policy ? `, policy ${a.dmarc.policy}` : ""})` : ""}</dd></dl>`;
}

async function messageView(shell: Shell, s: Session, id: string, key: string, error?: ApiError) {
  const bucket = getBucket(shell.deps, s.actor, id);
  const { folder, msg } = await readMessage(shell, s, bucket.id, key);
  const base = emailUrl(bucket.id, `/${key}`);
  const attachments = (msg.attachments ?? []).map((a, i) =>
    a.path
      ? html`<li><a href="${base}/attachments/${i}" class="wrap">${a.filename}</a> <span class="small muted">${a.content_type}, ${a.size.toLocaleString("en")} B</span></li>`
      : html`<li class="wrap">${a.original_filename ?? a.filename} <span class="small muted">not stored as its own file (it is in the original message)</span></li>`,
  );
  return shell.render(s, {
    title: `${msg.subject || "(no subject)"} · ${bucket.title}`,
    template: "dashboard/email-message.html",
    current: BUCKETS_PATH,
    error,
    vars: {
      notice: alertBox(error?.message),
      tabs: shell.bucketTabs(bucket.id, "email"),
      id: bucket.id,
      title: bucket.title,
      back: emailUrl(bucket.id),
      subject: msg.subject || "(no subject)",
      from: person(msg.from),
      to: (msg.to ?? []).map(person).join(", ") || (msg.envelope?.rcpt_to ?? []).join(", "),
      cc: (msg.cc ?? []).map(person).join(", "),
      date: msg.date ? shortTime(new Date(msg.date).toISOString()) : shortTime(msg.received_at),
      received: shortTime(msg.received_at),
      verdicts: verdicts(msg),
      text: msg.text ?? "",
      textTruncated: msg.text_truncated,
      hasHtml: !!msg.html,
      htmlUrl: `${base}/body`,
      attachments: attachments.length ? html`<ul>${attachments}</ul>` : html``,
      original: `${base}/original`,
      parseError: msg.parse_error ?? "",
      unread: !isMessageRead(shell.deps, s.actor, bucket.id, folder),
      readUrl: `${base}/read`,
    },
  });
}

/** A fresh signed download URL for a file of the message (the URL the API would give). */
function download(shell: Shell, s: Session, id: string, path: string): Response {
  try {
    return new Response(null, { status: 302, headers: { location: downloadUrl(shell.deps, s.actor, id, path), "cache-control": "no-store" } });
  } catch (e) {
    if (e instanceof ApiError && e.code === "FILE_NOT_FOUND") throw new ApiError("NOT_FOUND", "That file is no longer in the bucket.");
    throw e;
  }
}

export const emailPage: DashboardPage = {
  bucketTab: { label: "Email", path: "email" },
  routes: (app, shell) =>
    app
      .get(
        `${BUCKETS_PATH}/:id/email`,
        shell.view((s, { params, query }) => inboxView(shell, s, params.id!, query)),
        { detail: { hide: true } },
      )
      .post(
        `${BUCKETS_PATH}/:id/email/address`,
        shell.action(
          (s, { params, body }) => {
            const enabled = formField(body, "enabled") === "on";
            updateBucket(shell.deps, s.actor, params.id!, { inbound_email: { enabled } });
            return emailUrl(params.id!, `?done=inbound-${enabled ? "on" : "off"}`);
          },
          (s, error, { params }) =>
            error.code === "BUCKET_NOT_FOUND" || error.code === "FORBIDDEN"
              ? shell.notFound(s, error.code === "BUCKET_NOT_FOUND" ? error : undefined)
              : inboxView(shell, s, params.id!, {}, error),
        ),
        { detail: { hide: true } },
      )
      .get(
        `${BUCKETS_PATH}/:id/email/:message`,
        shell.view((s, { params }) => messageView(shell, s, params.id!, params.message!)),
        { detail: { hide: true } },
      )
      .post(
        `${BUCKETS_PATH}/:id/email/:message/read`,
        shell.action(
          async (s, { params }) => {
            // Opening the message is a deliberate read: the shared read state moves as for the API's read.
            const bucket = getBucket(shell.deps, s.actor, params.id!);
            const { folder } = await readMessage(shell, s, bucket.id, params.message!);
            recordMessageRead(shell.deps, s.actor, bucket.id, `${folder}message.json`);
            return emailUrl(bucket.id, `/${params.message!}`);
          },
          (s, error, { params }) =>
            ["BUCKET_NOT_FOUND", "NOT_FOUND", "FORBIDDEN"].includes(error.code)
              ? shell.notFound(s, error.code === "BUCKET_NOT_FOUND" ? error : undefined)
              : messageView(shell, s, params.id!, params.message!, error),
          // Reading is not writing: a read-only account's reads are recorded too, as over the API.
          { accountWrite: false },
        ),
        { detail: { hide: true } },
      )
      .get(
        `${BUCKETS_PATH}/:id/email/:message/body`,
        shell.view(async (s, { params }) => {
          const { msg } = await readMessage(shell, s, getBucket(shell.deps, s.actor, params.id!).id, params.message!);
          return new Response(msg.html ?? "", {
            headers: {
              "content-type": "text/html; charset=utf-8",
              "content-security-policy": MAIL_BODY_CSP,
              "x-frame-options": "SAMEORIGIN",
              "x-content-type-options": "nosniff",
              "referrer-policy": "no-referrer",
              "cache-control": "no-store",
            },
          });
        }),
        { detail: { hide: true } },
      )
      .get(
        `${BUCKETS_PATH}/:id/email/:message/original`,
        shell.view((s, { params }) => download(shell, s, params.id!, `${folderOf(params.message!)}message.eml`)),
        { detail: { hide: true } },
      )
      .get(
        `${BUCKETS_PATH}/:id/email/:message/attachments/:n`,
        shell.view(async (s, { params }) => {
          const { msg } = await readMessage(shell, s, params.id!, params.message!);
          const path = /^\d{1,4}$/.test(params.n!) ? msg.attachments?.[Number(params.n)]?.path : undefined;
          if (!path) throw new ApiError("NOT_FOUND", "No such attachment.");
          return download(shell, s, params.id!, path);
        }),
        { detail: { hide: true } },
      ) as unknown as Elysia,
};
