// The dashboard shell: the signed-in guard, the layout with its navigation, and the two ways a
// page answers: `view` for GET (render) and `action` for form POSTs (CSRF, one service call,
// then a 303 redirect to a GET so a reload never repeats the action; a refused action renders
// its page again with the error next to the field and what was typed kept).
import { randomBytes } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { htmlResponse, redirectResponse } from "../../http/html";
import { alertBox, html, loadTemplate, renderTemplate, SafeHtml, type TemplateVars } from "../../http/pages/layout";
import { scriptTags } from "./assets";
import { DASHBOARD_CSP } from "./csp";
import { browserSession, checkCsrf, getAccount, passwordConfirmationPage, recordDashboardVisit } from "../accounts";
import type { BrowserSession } from "../accounts";

export type Session = BrowserSession;

export interface NavItem {
  label: string;
  href: string;
  /** Shown only to instance admins. */
  admin?: boolean;
}

export interface BucketTab {
  label: string;
  /** The tab's path under /dashboard/buckets/<id>/ ("" for the overview). */
  path: string;
}

export interface PageView {
  title: string;
  /** A sites/-relative template rendered inside the layout. */
  template: string;
  /** The template's values; a function when the page builds forms in code and needs their CSRF value. */
  vars: TemplateVars | ((csrf: string) => TemplateVars);
  /** The refusal being reported: sets the HTTP status from the error catalogue. */
  error?: ApiError;
  /** Which nav entry is current (aria-current="page"). */
  current?: string;
  /** Scripts under sites/dashboard/assets/ this page adds to dashboard.js (which every page has). */
  scripts?: string[];
}

type Handler<T> = (s: Session, input: { request: Request; params: Record<string, string>; query: Record<string, string | undefined>; body: unknown }) => T;

export interface Shell {
  deps: Deps;
  view: (handler: Handler<Promise<Response> | Response>) => (ctx: HandlerCtx) => Promise<Response>;
  action: (
    /** Returns where to redirect; may be async (creating from a template stores its files first). */
    run: Handler<string | Promise<string>>,
    refused: (s: Session, error: ApiError, input: Parameters<Handler<unknown>>[1]) => Promise<Response> | Response,
    opts?: ActionOptions,
  ) => (ctx: HandlerCtx) => Promise<Response>;
  render: (s: Session, page: PageView) => Promise<Response>;
  /** The bucket pages' tab bar, with `current` (a BucketTab path) marked as the current page. */
  bucketTabs: (bucketId: string, current: string) => SafeHtml;
  notFound: (s: Session, error?: ApiError) => Promise<Response>;
  /**
   * Keep something an action must show exactly once on the page it redirects to (a new API
   * key): returns an id for that page's URL; `takeFlash` hands it out once, to this session only.
   */
  flash: (s: Session, value: unknown) => string;
  takeFlash: (s: Session, id: string | undefined) => unknown;
  /** A form's csrf value (`<csrf>~<nonce>~<account>`) for forms a page builds in code rather than in its template. */
  formToken: (s: Session) => string;
}

export interface ActionOptions {
  /**
   * false for actions that change no account data (the user's own password and sessions, the
   * instance admin's pages): they stay open to a read-only account. Every other action is an
   * account write and is refused with ACCOUNT_READ_ONLY, as the REST API refuses its writes.
   */
  accountWrite?: boolean;
}

interface HandlerCtx {
  request: Request;
  params?: Record<string, string>;
  query?: Record<string, string | undefined>;
  body?: unknown;
}

function toSignin(req: Request): Response {
  const u = new URL(req.url);
  return redirectResponse(`/signin?next=${encodeURIComponent(u.pathname + u.search)}`);
}

/** A form field as a string (missing, repeated or non-string fields read as ""). */
export function formField(body: unknown, name: string): string {
  const v = body && typeof body === "object" ? (body as Record<string, unknown>)[name] : undefined;
  return typeof v === "string" ? v : "";
}

function navHtml(nav: NavItem[], s: Session, current?: string): SafeHtml {
  const items = nav
    .filter((n) => !n.admin || s.user.isInstanceAdmin)
    .map((n) => (n.href === current ? html`<a href="${n.href}" aria-current="page">${n.label}</a>` : html`<a href="${n.href}">${n.label}</a>`));
  return html`<nav aria-label="Dashboard">${items}<a href="/docs/guides">Guides</a>
<form method="post" action="/signout" class="inline"><input type="hidden" name="csrf" value="${s.csrf}"><button type="submit" class="link" title="Signed in as ${s.user.email}">Sign out</button></form></nav>`;
}

// Styles the dashboard pages add to the shared layout (inline: the CSP allows inline styles, and scripts only from Pier's own origin).
const dashboardStyle = html`<style>
nav a[aria-current=page]{color:var(--fg);font-weight:600}
.toolbar{display:flex;gap:.75rem;flex-wrap:wrap;align-items:flex-end;margin-bottom:1rem}.toolbar>*{flex:1 1 10rem}.toolbar button{flex:0 0 auto}
.pager{display:flex;justify-content:space-between;gap:1rem;margin-top:1rem}
.field-error{display:block;color:var(--err);font-weight:400;font-size:.9rem;margin-top:.3rem}
input[aria-invalid=true]{border-color:var(--err)}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;align-items:center}
.tabs{display:flex;gap:.25rem 1rem;flex-wrap:wrap;margin:0 0 1.25rem;padding-bottom:.5rem;border-bottom:1px solid var(--line)}
.tabs a{text-decoration:none;color:var(--muted);padding:.2rem 0}.tabs a[aria-current=page]{color:var(--fg);font-weight:600;border-bottom:2px solid var(--accent)}
</style>`;

function bucketTabsHtml(tabs: BucketTab[], bucketId: string, current: string): SafeHtml {
  const base = `/dashboard/buckets/${encodeURIComponent(bucketId)}`;
  const links = tabs.map((t) => {
    const href = t.path ? `${base}/${t.path}` : base;
    return t.path === current ? html`<a href="${href}" aria-current="page">${t.label}</a>` : html`<a href="${href}">${t.label}</a>`;
  });
  return html`<nav aria-label="Bucket" class="tabs">${links}</nav>`;
}

/** The dashboard's twin of the REST auth check on every write: a read-only account only reads. */
export function assertAccountWritable(deps: Deps, s: Session): void {
  const account = getAccount(deps, s.actor.accountId);
  if (account.readOnly)
    throw new ApiError("ACCOUNT_READ_ONLY", `The account is read-only${account.readOnlyReason ? ` (${account.readOnlyReason})` : ""}; reads still work.`, {
      read_only: true,
    });
}

export function createShell(deps: Deps, nav: NavItem[], tabs: BucketTab[] = []): Shell {
  // Each rendered page's forms carry `<session csrf>~<nonce>~<account id>`. The first POST with a
  // nonce remembers where it led; a second POST with it (a double click, a re-sent form) is sent
  // to the same place without running the action again. Bounded, and per Pier (not module state).
  // The account id refuses a form opened before the session switched accounts (D323): it would
  // otherwise act on the account switched to.
  const doneForms = new LRUCache<string, Promise<string>>({ max: 20_000, ttl: 30 * 60_000 });
  const formToken = (s: Session) => `${s.csrf}~${randomBytes(12).toString("base64url")}~${s.actor.accountId}`;

  const render = async (s: Session, page: PageView) => {
    // `csrf` for forms (once each), `apiCsrf` for scripts calling the REST API (header x-pier-csrf).
    const csrf = formToken(s);
    const vars = { ...(typeof page.vars === "function" ? page.vars(csrf) : page.vars), csrf, apiCsrf: s.csrf };
    const body = new SafeHtml(dashboardStyle.value + renderTemplate(await loadTemplate(page.template), vars));
    const scripts = new SafeHtml(await scriptTags(["dashboard.js", ...(page.scripts ?? [])]));
    const doc = renderTemplate(await loadTemplate("auth/layout.html"), { title: page.title, body, nav: navHtml(nav, s, page.current), width: "wide", scripts });
    return htmlResponse(doc, { error: page.error, csp: DASHBOARD_CSP });
  };

  const notFound = (s: Session, error?: ApiError) =>
    render(s, {
      title: "Not found",
      template: "dashboard/not-found.html",
      vars: { notice: alertBox(error?.message) },
      error: error ?? new ApiError("NOT_FOUND", "No such page."),
    });

  const inputOf = (ctx: HandlerCtx) => ({ request: ctx.request, params: ctx.params ?? {}, query: ctx.query ?? {}, body: ctx.body });

  const view: Shell["view"] = (handler) => async (ctx) => {
    const s = browserSession(deps, ctx.request);
    if (!s) return toSignin(ctx.request);
    // A Free site stays active while its owner opens the dashboard (accounts/dashboard.ts).
    recordDashboardVisit(deps, s.actor);
    try {
      return await handler(s, inputOf(ctx));
    } catch (e) {
      if (e instanceof ApiError && (e.code === "BUCKET_NOT_FOUND" || e.code === "NOT_FOUND" || e.code === "FORBIDDEN"))
        return notFound(s, e.code === "BUCKET_NOT_FOUND" ? e : undefined);
      // A page behind sudo mode asks for the password, then comes back to itself.
      if (e instanceof ApiError && e.code === "REAUTHENTICATION_REQUIRED") {
        const url = new URL(ctx.request.url);
        return passwordConfirmationPage(s, url.pathname + url.search, e);
      }
      throw e;
    }
  };

  const action: Shell["action"] = (run, refused, opts) => async (ctx) => {
    const s = browserSession(deps, ctx.request);
    if (!s) return redirectResponse("/signin");
    const input = inputOf(ctx);
    try {
      const [token, nonce, account] = formField(ctx.body, "csrf").split("~");
      if (!checkCsrf(deps, s.session.id, token)) {
        throw new ApiError("CSRF_FAILED", "This form expired or was sent from another site. Reload the page and try again.");
      }
      if (account !== undefined && account !== s.actor.accountId)
        throw new ApiError("CSRF_FAILED", "This page was opened while this browser worked in another account. Reload it and try again.");
      if (opts?.accountWrite !== false) assertAccountWritable(deps, s);
      // Keyed by the form's action too: another form of the same page is another submission.
      const onceKey = nonce ? `${s.session.id}:${nonce}:${new URL(ctx.request.url).pathname}` : null;
      let outcome = onceKey ? doneForms.get(onceKey) : undefined;
      if (!outcome) {
        // Remembered before the action runs, so a duplicate arriving while it awaits waits for it.
        outcome = (async () => run(s, input))();
        if (onceKey) {
          const key = onceKey;
          doneForms.set(key, outcome);
          outcome.catch(() => doneForms.delete(key));
        }
      }
      return redirectResponse(await outcome);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return refused(s, e, input);
    }
  };

  const bucketTabs = (bucketId: string, current: string) => bucketTabsHtml(tabs, bucketId, current);

  const flashes = new LRUCache<string, { value: unknown }>({ max: 5_000, ttl: 10 * 60_000 });
  const flash = (s: Session, value: unknown) => {
    const id = randomBytes(12).toString("base64url");
    flashes.set(`${s.session.id}:${id}`, { value });
    return id;
  };
  const takeFlash = (s: Session, id: string | undefined) => {
    if (!id) return undefined;
    const key = `${s.session.id}:${id}`;
    const kept = flashes.get(key);
    flashes.delete(key);
    return kept?.value;
  };

  return { deps, view, action, render, bucketTabs, notFound, flash, takeFlash, formToken };
}
