// Access gates for password and require_email sites. Passwords travel only in POST bodies,
// never in URLs. Success sets a host-only cookie (no Domain attribute, so it never reaches the
// API host or another site) whose HMAC binds the publication, its access version (rotation signs
// everyone out), the host and an expiry.
import { randomInt } from "node:crypto";
import { and, desc, eq, gt, isNull, lt, sql } from "drizzle-orm";
import type { Deps } from "../core/context";
import { safeEqual } from "../core/crypto";
import { newId } from "../core/ids";
import { publications, siteEmailCodes, siteLeads } from "../db/schema";
import { transaction } from "../db/tx";
import { mailerFor, quotedForMail } from "../features/mail";
import { verifyRecipientToken } from "../features/publish";
import type { Site } from "./directory";
import { clearGateAttempts, gateMailRetryAfter, gateRetryAfter, mailboxOf, recordGateAttempt, sameMailbox } from "./gate-limits";
import { cookieValues, setCookie } from "../http/cookies";
import { escapeHtml } from "../http/html";
import { safeNext as sameHostPath } from "../http/safe-next";
import { messageBody, pageResponse, type SiteTemplates } from "./pages";
import { isoAfter } from "../core/clock";
import { addressKey, PendingGuesses } from "../core/guess-limits";
import { verifyPasswordInTurn } from "../core/password-checks";

export const SITE_COOKIE = "pier_site_access";
export const COOKIE_MAX_AGE_S = 7 * 24 * 3600;
const CODE_TTL_MS = 15 * 60_000;
const CODE_MAX_ATTEMPTS = 5;
const MAX_FORM_BYTES = 8 * 1024;

export interface GateContext {
  deps: Deps;
  t: SiteTemplates;
  site: Site;
  host: string;
  secure: boolean;
  client: string;
  extraHeaders: Record<string, string>;
}

// ---- cookie ----

const cookiePayload = (site: Site, host: string, subject: string, exp: number) => `${site.id}|${site.accessVersion}|${host}|${subject}|${exp}`;

export function issueCookie(g: GateContext, subject: "p" | "e"): string {
  const exp = Math.floor(g.deps.clock.now().getTime() / 1000) + COOKIE_MAX_AGE_S;
  const sig = g.deps.secrets.sign("site-cookie", cookiePayload(g.site, g.host, subject, exp));
  const value = `${subject}.${exp}.${sig}`;
  return setCookie(SITE_COOKIE, value, { maxAgeSeconds: COOKIE_MAX_AGE_S, secure: g.secure });
}

/** True when the request carries a valid site cookie for this site, host and access version. */
export function hasAccess(deps: Deps, req: Request, site: Site, host: string): boolean {
  for (const value of cookieValues(req, SITE_COOKIE)) {
    const [subject, expRaw, sig] = value.split(".");
    if (!sig || (subject !== "p" && subject !== "e")) continue;
    if ((subject === "p") !== (site.accessMode === "password")) continue;
    const exp = Number(expRaw);
    if (!Number.isInteger(exp) || exp * 1000 <= deps.clock.now().getTime()) continue;
    if (safeEqual(deps.secrets.sign("site-cookie", cookiePayload(site, host, subject, exp)), sig)) return true;
  }
  return false;
}

// ---- pages ----

/** Only same-site paths may be a post-login destination (no open redirects; the one rule in http/safe-next.ts). */
export const safeNext = (raw: unknown): string => sameHostPath(raw, "/");

const hiddenNext = (next: string) => `<input type="hidden" name="next" value="${escapeHtml(next)}">`;

export function passwordGatePage(g: GateContext, next: string, status = 401, error = "", headers: Record<string, string> = {}): Response {
  const body =
    `<h1>This site is password protected</h1><p>Enter the password you were given to continue.</p>` +
    (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : "") +
    `<form method="post" action="/_pier/gate/password">${hiddenNext(next)}<label for="password">Password</label>` +
    `<input id="password" name="password" type="password" autocomplete="current-password" required autofocus><button type="submit">Continue</button></form>`;
  return pageResponse(g.t, status, "Password required", body, { ...g.extraHeaders, ...headers });
}

// With no SMTP relay (the default) codes go to the instance's outbox, not to the visitor: the
// pages then say so instead of claiming a mail that was never sent.
const mailIsSent = (g: GateContext) => mailerFor(g.deps).via === "relay";

export function emailGatePage(g: GateContext, next: string, status = 401, error = "", headers: Record<string, string> = {}): Response {
  const intro = mailIsSent(g)
    ? `<p>We will send you a one-time code.</p>`
    : `<p>Enter your email to get a one-time code. This site does not send email: ask the site owner for your code, or for a personal link to the site, which needs no code.</p>`;
  const body =
    `<h1>Enter your email to continue</h1>${intro}` +
    (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : "") +
    `<form method="post" action="/_pier/gate/email">${hiddenNext(next)}<label for="email">Email</label>` +
    `<input id="email" name="email" type="email" autocomplete="email" required autofocus><button type="submit">${mailIsSent(g) ? "Send code" : "Get a code"}</button></form>`;
  return pageResponse(g.t, status, "Email required", body, { ...g.extraHeaders, ...headers });
}

function codePage(g: GateContext, next: string, requestId: string, email: string, status: number, error = ""): Response {
  const intro = mailIsSent(g)
    ? `<h1>Check your email</h1><p>We sent a 6-digit code to ${escapeHtml(email)}. It is valid for 15 minutes.</p>`
    : `<h1>Ask the site owner for your code</h1><p>A 6-digit code for ${escapeHtml(email)} was made, but this site does not send email, so it was not mailed to you. ` +
      `Ask the site owner for it (it is valid for 15 minutes), or for a personal link to the site, which needs no code.</p>`;
  const body =
    intro +
    (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : "") +
    `<form method="post" action="/_pier/gate/code">${hiddenNext(next)}<input type="hidden" name="request" value="${escapeHtml(requestId)}">` +
    `<label for="code">Code</label><input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required autofocus>` +
    `<button type="submit">Continue</button></form>`;
  return pageResponse(g.t, status, "Enter your code", body, g.extraHeaders);
}

const tooMany = (g: GateContext, retryAfter: number) =>
  pageResponse(g.t, 429, "Too many attempts", messageBody("Too many attempts", `Please wait ${Math.ceil(retryAfter / 60)} minute(s) and try again.`), {
    ...g.extraHeaders,
    "retry-after": String(retryAfter),
  });

// Code mail over its per-site or per-recipient budget: 429 with Retry-After, and the page says why.
const mailLimited = (g: GateContext, next: string, retryAfter: number) =>
  emailGatePage(
    g,
    next,
    429,
    `Too many codes were sent for this site or to this address. Please wait ${Math.ceil(retryAfter / 60)} minute(s) before asking for another one.`,
    { "retry-after": String(retryAfter), "x-pier-error-code": "GATE_MAIL_RATE_LIMITED" },
  );

const seeOther = (g: GateContext, location: string, cookie: string) =>
  new Response(null, { status: 303, headers: { ...g.extraHeaders, location, "set-cookie": cookie, "cache-control": "no-store" } });

// ---- POST handlers ----

async function readForm(req: Request): Promise<Record<string, string> | null> {
  const type = req.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) return null;
  const len = Number(req.headers.get("content-length") ?? "0");
  if (len > MAX_FORM_BYTES) return null;
  // A chunked body has no length up front: read at most MAX_FORM_BYTES, never the whole stream.
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (req.body) {
    for await (const chunk of req.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > MAX_FORM_BYTES) return null;
      chunks.push(chunk);
    }
  }
  const text = new TextDecoder().decode(Buffer.concat(chunks));
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(text)) out[k] = v;
  return out;
}

/** The newest code mailed to `email`'s inbox (sameMailbox) for this site that can still be used. */
function liveCodeFor(g: GateContext, email: string) {
  return g.deps.db
    .select({ id: siteEmailCodes.id })
    .from(siteEmailCodes)
    .where(
      and(
        eq(siteEmailCodes.publicationId, g.site.id),
        sameMailbox(email),
        isNull(siteEmailCodes.usedAt),
        gt(siteEmailCodes.expiresAt, g.deps.clock.now().toISOString()),
        lt(siteEmailCodes.attempts, CODE_MAX_ATTEMPTS),
        eq(siteEmailCodes.accessVersion, g.site.accessVersion),
      ),
    )
    .orderBy(desc(siteEmailCodes.createdAt))
    .get();
}

/** Password guesses being verified, per site and client address (see handleGatePost). */
const passwordGuesses = new PendingGuesses();

const busy = (g: GateContext, next: string) =>
  passwordGatePage(g, next, 503, "The site is busy checking passwords. Please try again in a few seconds.", { "retry-after": "5" });

/** POST /_pier/gate/<action>. Returns null for an unknown action (the caller answers 404). */
export async function handleGatePost(g: GateContext, req: Request, action: string): Promise<Response | null> {
  if (action !== "password" && action !== "email" && action !== "code") return null;
  // Login CSRF: a browser that states where the form came from must be on this very host.
  const origin = req.headers.get("origin");
  if (origin && origin !== "null") {
    let originHost = "";
    try {
      originHost = new URL(origin).hostname.replace(/\.$/, ""); // the site's host is matched without a trailing dot
    } catch {}
    if (originHost !== g.host) return pageResponse(g.t, 403, "Forbidden", messageBody("Forbidden", "This form was sent from another site."), g.extraHeaders);
  }
  const form = await readForm(req);
  if (!form) return pageResponse(g.t, 400, "Bad request", messageBody("Bad request", "The form could not be read. Go back and try again."), g.extraHeaders);
  const next = safeNext(form.next);

  if (action === "password") {
    if (g.site.accessMode !== "password") return null;
    // Gate posts are answered by one process (serving workers relay them), so guesses in flight
    // are counted here, in memory, next to the failures in the database.
    const guessKey = `${g.site.id} ${addressKey(g.client)}`;
    const wait = gateRetryAfter(g.deps, g.site.id, "password", g.client, passwordGuesses.of(guessKey));
    if (wait > 0) return tooMany(g, wait);
    const verifying = passwordGuesses.begin(guessKey);
    let ok: boolean | null = false;
    try {
      const { password } = form;
      const hash = g.site.passwordHash;
      if (password && hash && password.length <= 200) ok = await verifyPasswordInTurn(password, hash, "gate"); // past the queue: "busy" (D305)
      // Busy (null) is no guess: not counted.
      if (ok === false) recordGateAttempt(g.deps, g.site.id, "password", g.client);
    } finally {
      verifying();
    }
    if (ok === null) return busy(g, next);
    if (!ok) return passwordGatePage(g, next, 401, "That password is not right.");
    clearGateAttempts(g.deps, g.site.id, "password", g.client);
    return seeOther(g, next, issueCookie(g, "p"));
  }

  if (g.site.accessMode !== "require_email") return null;

  if (action === "email") {
    const email = (form.email ?? "").trim().toLowerCase();
    if (email.length > 254 || !/^[^\s@<>()",;:\\]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/.test(email)) {
      return emailGatePage(g, next, 400, "Enter a valid email address.");
    }
    const wait = gateRetryAfter(g.deps, g.site.id, "email_send", g.client);
    if (wait > 0) return tooMany(g, wait);
    recordGateAttempt(g.deps, g.site.id, "email_send", g.client);
    const mailWait = gateMailRetryAfter(g.deps, g.site.id, email);
    if (mailWait > 0) {
      // No more mail; but whoever used the recipient's budget up must not lock them out: the
      // code already in their inbox for this site still opens it. The page names the address as
      // typed: the tagged variant a code went to is the inbox owner's, not the asker's, to know.
      const sent = liveCodeFor(g, email);
      return sent ? codePage(g, next, sent.id, email, 200) : mailLimited(g, next, mailWait);
    }
    const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
    const id = newId("gcd");
    const now = g.deps.clock.now();
    transaction(g.deps.db, (tx) => {
      tx.insert(siteEmailCodes)
        .values({
          id,
          publicationId: g.site.id,
          email,
          mailbox: mailboxOf(email),
          codeHash: g.deps.secrets.sign("site-cookie", `code|${id}|${code}`),
          createdAt: now.toISOString(),
          expiresAt: isoAfter(now, CODE_TTL_MS),
          accessVersion: g.site.accessVersion,
        })
        .run();
    });
    // The title is the site owner's text: quoted, cut short and named as a site's title, and the
    // host it came from is always stated, so the mail cannot pass for a message from anyone else.
    const siteName = g.site.title ? `${quotedForMail(g.site.title)} (${g.host})` : g.host;
    try {
      await mailerFor(g.deps).send({
        to: email,
        kind: "site-email-code",
        subject: `Your access code for ${siteName}: ${code}`,
        text: `Your one-time access code is:\n\n    ${code}\n\nSomeone entered this address to open the site ${siteName}, published with Pier at ${g.secure ? "https" : "http"}://${g.host}/ (the title is chosen by the site's publisher, not by Pier). The code is valid for 15 minutes. If you did not ask for it, ignore this message: nothing happens without the code.\n`,
      });
    } catch (e) {
      g.deps.log.warn("site email code could not be sent", { publication_id: g.site.id, error: e });
      return emailGatePage(g, next, 503, "The code could not be sent right now. Try again in a few minutes.");
    }
    return codePage(g, next, id, email, 200);
  }

  // action === "code"
  const wait = gateRetryAfter(g.deps, g.site.id, "code", g.client);
  if (wait > 0) return tooMany(g, wait);
  const requestId = form.request ?? "";
  const found = g.deps.db
    .select({ code: siteEmailCodes, currentAccess: publications.accessVersion })
    .from(siteEmailCodes)
    .innerJoin(publications, eq(publications.id, siteEmailCodes.publicationId))
    .where(and(eq(siteEmailCodes.id, requestId), eq(siteEmailCodes.publicationId, g.site.id)))
    .get();
  const row = found?.code;
  const now = g.deps.clock.now();
  if (!row || row.usedAt || Date.parse(row.expiresAt) <= now.getTime() || row.attempts >= CODE_MAX_ATTEMPTS) {
    recordGateAttempt(g.deps, g.site.id, "code", g.client);
    return emailGatePage(g, next, 401, "That code has expired. Ask for a new one.");
  }
  // A code opens the site only under the access settings it was asked under: an owner who
  // changed them (access_version, read from the database, not the site cache) meant to stop
  // whoever had a code pending, as the same change signs out everyone holding a cookie.
  if (row.accessVersion !== found.currentAccess) {
    recordGateAttempt(g.deps, g.site.id, "code", g.client);
    return emailGatePage(g, next, 401, "The site's access settings changed after this code was sent. Ask for a new one.");
  }
  const code = (form.code ?? "").trim();
  if (!/^\d{6}$/.test(code) || !safeEqual(g.deps.secrets.sign("site-cookie", `code|${row.id}|${code}`), row.codeHash)) {
    recordGateAttempt(g.deps, g.site.id, "code", g.client);
    transaction(g.deps.db, (tx) =>
      tx
        .update(siteEmailCodes)
        .set({ attempts: sql`${siteEmailCodes.attempts} + 1` })
        .where(eq(siteEmailCodes.id, row.id))
        .run(),
    );
    return codePage(g, next, row.id, row.email, 401, "That code is not right.");
  }
  const at = now.toISOString();
  transaction(g.deps.db, (tx) => {
    tx.update(siteEmailCodes).set({ usedAt: at }).where(eq(siteEmailCodes.id, row.id)).run();
    tx.insert(siteLeads)
      .values({ publicationId: g.site.id, email: row.email, firstAccessAt: at, lastAccessAt: at, accessCount: 1 })
      .onConflictDoUpdate({ target: [siteLeads.publicationId, siteLeads.email], set: { lastAccessAt: at, accessCount: sql`${siteLeads.accessCount} + 1` } })
      .run();
  });
  clearGateAttempts(g.deps, g.site.id, "code", g.client);
  return seeOther(g, next, issueCookie(g, "e"));
}

/**
 * GET /_pier/gate/recipient?token=...: a recipient link from POST /publications/:id/recipient_links.
 * The signed token names the email, so it counts as a confirmed address: lead recorded, cookie
 * set, on to the site. Bad or expired links count as failed code attempts (same limits).
 */
export function handleRecipientLink(g: GateContext, search: string): Response {
  const wait = gateRetryAfter(g.deps, g.site.id, "code", g.client);
  if (wait > 0) return tooMany(g, wait);
  const token = new URLSearchParams(search).get("token") ?? "";
  const email = verifyRecipientToken(g.deps, g.site, token);
  if (!email) {
    recordGateAttempt(g.deps, g.site.id, "code", g.client);
    return emailGatePage(g, "/", 401, "This link has expired or is no longer valid. Confirm your email instead.");
  }
  const at = g.deps.clock.now().toISOString();
  transaction(g.deps.db, (tx) => {
    tx.insert(siteLeads)
      .values({ publicationId: g.site.id, email, firstAccessAt: at, lastAccessAt: at, accessCount: 1 })
      .onConflictDoUpdate({ target: [siteLeads.publicationId, siteLeads.email], set: { lastAccessAt: at, accessCount: sql`${siteLeads.accessCount} + 1` } })
      .run();
  });
  return seeOther(g, "/", issueCookie(g, "e"));
}
