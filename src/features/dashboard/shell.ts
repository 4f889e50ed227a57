// The dashboard shell: the signed-in guard, the layout with its navigation, and the two ways a
// page answers: `view` for GET (render) and `action` for form POSTs (CSRF, one service call,
// then a 303 redirect to a GET so a reload never repeats the action; a refused action renders
// its page again with the error next to the field and what was typed kept).
import type { Deps } from "../../core/context";
import { ApiError } from "../../core/errors";
import { htmlResponse, redirectResponse } from "../../http/html";
import { alertBox, html, loadTemplate, renderTemplate, SafeHtml, type TemplateVars } from "../../http/pages/layout";
import { browserSession, checkCsrf, recordDashboardVisit } from "../accounts";
import type { BrowserSession } from "../accounts";

export type Session = BrowserSession;

export interface NavItem {
  label: string;
  href: string;
  /** Shown only to instance admins. */
  admin?: boolean;
}

export interface PageView {
  title: string;
  /** A sites/-relative template rendered inside the layout. */
  template: string;
  vars: TemplateVars;
  /** The refusal being reported: sets the HTTP status from the error catalogue. */
  error?: ApiError;
  /** Which nav entry is current (aria-current="page"). */
  current?: string;
}

type Handler<T> = (s: Session, input: { request: Request; params: Record<string, string>; query: Record<string, string | undefined>; body: unknown }) => T;

export interface Shell {
  deps: Deps;
  view: (handler: Handler<Promise<Response> | Response>) => (ctx: HandlerCtx) => Promise<Response>;
  action: (
    run: Handler<string | Promise<string>>,
    refused: (s: Session, error: ApiError, input: Parameters<Handler<unknown>>[1]) => Promise<Response> | Response,
  ) => (ctx: HandlerCtx) => Promise<Response>;
  render: (s: Session, page: PageView) => Promise<Response>;
  notFound: (s: Session, error?: ApiError) => Promise<Response>;
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
  return html`<nav aria-label="Dashboard">${items}
<form method="post" action="/signout" class="inline"><input type="hidden" name="csrf" value="${s.csrf}"><button type="submit" class="link" title="Signed in as ${s.user.email}">Sign out</button></form></nav>`;
}

// Styles the dashboard pages add to the shared layout (inline: the CSP allows inline styles only).
const dashboardStyle = html`<style>
nav a[aria-current=page]{color:var(--fg);font-weight:600}
.toolbar{display:flex;gap:.75rem;flex-wrap:wrap;align-items:flex-end;margin-bottom:1rem}.toolbar>*{flex:1 1 10rem}.toolbar button{flex:0 0 auto}
.pager{display:flex;justify-content:space-between;gap:1rem;margin-top:1rem}
.field-error{display:block;color:var(--err);font-weight:400;font-size:.9rem;margin-top:.3rem}
input[aria-invalid=true]{border-color:var(--err)}
.actions{display:flex;gap:.75rem;flex-wrap:wrap;align-items:center}
</style>`;

export function createShell(deps: Deps, nav: NavItem[]): Shell {
  const render = async (s: Session, page: PageView) => {
    const body = new SafeHtml(dashboardStyle.value + renderTemplate(await loadTemplate(page.template), { ...page.vars, csrf: s.csrf }));
    const doc = renderTemplate(await loadTemplate("auth/layout.html"), { title: page.title, body, nav: navHtml(nav, s, page.current), width: "wide" });
    return htmlResponse(doc, { error: page.error });
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
      throw e;
    }
  };

  const action: Shell["action"] = (run, refused) => async (ctx) => {
    const s = browserSession(deps, ctx.request);
    if (!s) return redirectResponse("/signin");
    const input = inputOf(ctx);
    try {
      if (!checkCsrf(deps, s.session.id, formField(ctx.body, "csrf"))) {
        throw new ApiError("CSRF_FAILED", "This form expired or was sent from another site. Reload the page and try again.");
      }
      return redirectResponse(await run(s, input));
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return refused(s, e, input);
    }
  };

  return { deps, view, action, render, notFound };
}
