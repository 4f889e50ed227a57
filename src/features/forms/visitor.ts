// POST /_pier/form/<name> on a site host. Checks run cheapest first and nothing is stored until
// all pass: configured form, same origin, content type, the client's rate limit, fill time,
// fields, honeypot, proof of work, the form's rate limit, then the quota inside the storing
// transaction. A plain post gets an HTML page (the form again
// with the visitor's input kept, or a thank-you page / redirect back); fetch gets JSON.
import type { Deps } from "../../core/context";
import { ApiError, errorCatalogue } from "../../core/errors";
import { addressKey } from "../../core/guess-limits";
import { TokenBuckets } from "../../core/token-buckets";
import { errorResponse } from "../../http/envelope";
import { escapeHtml } from "../../http/html";
import { requestId, wantsJson } from "../../http/request-info";
import { bucketMetadataOf } from "../buckets";
import { activeFormsConfig, requiredFieldsOf, type FormsConfig } from "./config";
import { FORMS, isFormName, type FormName } from "./definitions";
import { formHtml, formPageCsp, formScripts, HONEYPOT_FIELD, notSentBody, readStartedToken, startedToken, STARTED_FIELD } from "./render";
import { publicComments } from "./service";
import { storeSubmission, type DocumentSelection, type SubmissionContext } from "./store";
import { FormChallenges, type CheckedSolution } from "./challenge";
import { TURNSTILE_FIELD, turnstileSiteKey, verifyTurnstile } from "./turnstile";

/** The field the altcha widget puts its solution in. */
export const CHALLENGE_FIELD = "altcha";

/** Submissions per client (an IPv4 address, an IPv6 /64), site and form per minute (a person sends one, maybe two). */
export const FORM_POSTS_PER_IP_MINUTE = 5;
/** Submissions per site and form per minute from everyone together (bounds a distributed flood); only posts that passed every check count. */
export const FORM_POSTS_PER_FORM_MINUTE = 60;
/** A person needs longer than this to fill in a form rendered by Pier. */
export const MIN_FILL_MS = 2_000;
/** A fill timer older than this is refused: a timer a bot captured once must not serve it for ever (D234). */
export const MAX_FILL_MS = 24 * 60 * 60_000;

export interface FormSite {
  id: string;
  bucketId: string;
  accessMode: "public" | "password" | "require_email";
}

/** Renders a page in the site's own Pier look (src/sites/pages.ts), headers included. */
export type PageRenderer = (status: number, title: string, bodyHtml: string, headers?: Record<string, string>) => Response;

const SELECTION_UNITS = new Set(["pdf_point", "image_pixel", "element_ratio", "document_ratio"]);

export class FormEndpoint {
  private readonly perClient = new TokenBuckets(FORM_POSTS_PER_IP_MINUTE, 50_000);
  private readonly perForm = new TokenBuckets(FORM_POSTS_PER_FORM_MINUTE, 50_000);
  private readonly challenges: FormChallenges;

  constructor(private readonly deps: Deps) {
    this.challenges = new FormChallenges(deps);
  }

  /** GET /_pier/form/challenge: a fresh proof-of-work challenge, for sites that have forms. */
  async challenge(site: FormSite): Promise<Response> {
    const bucket = bucketMetadataOf(this.deps, site.bucketId);
    const headers = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" };
    if (!bucket || !activeFormsConfig(bucket.metadata)) {
      return new Response(JSON.stringify({ error: { code: "FORM_NOT_FOUND", message: "This site has no forms." } }), { status: 404, headers });
    }
    return new Response(JSON.stringify(await this.challenges.create(site.id)), { headers });
  }

  /** `host`: the site host the form was posted to (a site label's host, a preview's, or a custom domain), without port. */
  async receive(req: Request, site: FormSite, rawName: string, ip: string, host: string, page: PageRenderer): Promise<Response> {
    const json = wantsJson(req);
    try {
      return await this.accept(req, site, rawName, { ip, host }, page, json);
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      if (json) return errorResponse(e, requestId(req), this.deps.urls.baseUrl);
      const res = page(errorStatus(e), "Not sent", notSentBody(e.message));
      if (e.retryAfter !== undefined) res.headers.set("retry-after", String(e.retryAfter));
      return res;
    }
  }

  /** GET /_pier/form/comments: the shared comments, for a gated site's signed-in visitors (the caller checked the gate). */
  comments(site: FormSite): Response {
    const bucket = bucketMetadataOf(this.deps, site.bucketId);
    const config = bucket ? activeFormsConfig(bucket.metadata) : null;
    const headers = { "content-type": "application/json; charset=utf-8", "cache-control": "private, no-store", "x-content-type-options": "nosniff" };
    if (!config?.forms.has("comments") || site.accessMode === "public") {
      return new Response(JSON.stringify({ error: { code: "FORM_NOT_FOUND", message: "This site has no shared comments." } }), { status: 404, headers });
    }
    return new Response(JSON.stringify({ data: { comments: publicComments(this.deps, site.bucketId) } }), { headers });
  }

  /**
   * The proof of work: a post that carries a solution has it checked (the caller spends it); a
   * post sent by script (JSON or Accept: application/json) must carry one. A plain post without
   * one comes from a browser without JavaScript and faces the honeypot, fill time and rate limits
   * only (docs/decisions.md). Turnstile, when on, is required of every post.
   */
  private async checkChallenges(
    site: FormSite,
    config: FormsConfig,
    body: Record<string, string>,
    json: boolean,
    from: { ip: string; host: string },
  ): Promise<CheckedSolution | null> {
    const solution = body[CHALLENGE_FIELD];
    const checked = solution ? await this.challenges.check(site.id, solution) : null;
    if (!checked && json) {
      throw new ApiError("FORM_CHALLENGE_FAILED", "The anti-spam check failed (no proof-of-work solution). Reload the page and send the form again.", {
        challenge: "missing",
      });
    }
    if (turnstileSiteKey(this.deps, config) !== null) await verifyTurnstile(this.deps, body[TURNSTILE_FIELD], from.ip, from.host);
    return checked;
  }

  /** The signed render time: present, issued for this site and form, at least MIN_FILL_MS and at most MAX_FILL_MS ago. */
  private checkFillTime(siteId: string, name: FormName, started: string | undefined, now: number): void {
    if (started === undefined) {
      throw new ApiError("FORM_CHALLENGE_FAILED", "The form was sent without the time it was opened. Reload the page and send it again.", {
        challenge: "fill_time_missing",
      });
    }
    const at = readStartedToken(this.deps, siteId, name, started);
    if (at !== null && now - at > MAX_FILL_MS) {
      throw new ApiError("FORM_CHALLENGE_FAILED", "The form was opened too long ago. Reload the page and send it again.", {
        challenge: "fill_time_expired",
        max_fill_hours: MAX_FILL_MS / 3_600_000,
      });
    }
    if (at === null || now - at < MIN_FILL_MS) {
      throw new ApiError("FORM_CHALLENGE_FAILED", "The form was sent faster than a person can fill it in. Please wait a moment and send it again.", {
        challenge: "fill_time",
        min_fill_seconds: MIN_FILL_MS / 1000,
      });
    }
  }

  private async accept(
    req: Request,
    site: FormSite,
    rawName: string,
    from: { ip: string; host: string },
    page: PageRenderer,
    json: boolean,
  ): Promise<Response> {
    const ip = from.ip;
    const bucket = bucketMetadataOf(this.deps, site.bucketId);
    const config = bucket ? activeFormsConfig(bucket.metadata) : null;
    const name = isFormName(rawName) ? rawName : null;
    const settings = name ? config?.forms.get(name) : undefined;
    // Comments are shown to the site's other visitors: only where every visitor signed in through a gate.
    if (!bucket || !config || !name || !settings || (name === "comments" && site.accessMode === "public")) {
      throw new ApiError("FORM_NOT_FOUND", "This site has no such form.");
    }
    checkSameOrigin(req);
    const body = await readFields(req);

    const now = this.deps.clock.now().getTime();
    // Keyed as every other per-client limit: an IPv6 /64 is one client (one host usually holds it).
    throwIfLimited(this.perClient.take(`${site.id} ${name} ${addressKey(ip)}`, now));

    const def = FORMS[name];
    // Pier's own markup always carries the timer, so a hosted form's post must; a hand-written
    // form (hosted: false) has none to send (D167, D234).
    const started = body[STARTED_FIELD];
    if (started !== undefined || settings.hosted) this.checkFillTime(site.id, name, started, now);
    const fields: Record<string, string> = {};
    for (const f of def.fields) {
      const value = (body[f.name] ?? "").trim();
      if (value.length > f.maxLength) {
        throw new ApiError("VALIDATION_FAILED", `${f.label} is too long (at most ${f.maxLength} characters).`, { field: f.name, max_length: f.maxLength });
      }
      if (value && f.type === "email" && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) {
        throw new ApiError("VALIDATION_FAILED", `${f.label} is not an email address.`, { field: f.name });
      }
      if (value) fields[f.name] = value;
    }
    const returnPath = samePath(body._pier_return) ?? refererPath(req);
    const required = requiredFieldsOf(config, settings);
    const missing = required.filter((f) => !fields[f]);
    if (missing.length > 0) {
      const labels = missing.map((m) => def.fields.find((f) => f.name === m)!.label);
      const err = new ApiError("FORM_FIELDS_MISSING", `Please fill in: ${labels.join(", ")}.`, { missing });
      if (json) throw err;
      // The form again, as the visitor left it, with each missing field marked, and the page
      // allowed to run the scripts that form needs (its CSP widened for exactly those).
      const turnstile = turnstileSiteKey(this.deps, config);
      const form = formHtml(name, {
        values: fields,
        required,
        missing,
        started: startedToken(this.deps, site.id, name),
        returnPath: returnPath ?? undefined,
        challenge: true,
        turnstileSiteKey: turnstile ?? undefined,
      });
      return page(422, def.label, `<p class="error">${escapeHtml(err.message)}</p>${form}${formScripts(turnstile !== null)}`, {
        "content-security-policy": formPageCsp(turnstile !== null),
      });
    }
    // A filled honeypot looks like success to the bot, and nothing is stored.
    const trapped = (body[HONEYPOT_FIELD] ?? "") !== "";
    let stored: ReturnType<typeof storeSubmission> | null = null;
    if (!trapped) {
      // Checked last, once the post is otherwise good: a visitor who forgot a field keeps the
      // solution for the corrected post, and a spent solution always means a stored submission.
      const context = readContext(body, returnPath);
      const solution = await this.checkChallenges(site, config, body, json, from);
      // No await from here to the store: spent, limited and stored (or given back) in one go.
      if (solution) this.challenges.spend(solution);
      try {
        // The form's budget shared by everyone goes only to posts that passed every check: junk
        // that fails them spends its own client's budget, never the real visitors' (D232).
        throwIfLimited(this.perForm.take(`${site.id} ${name}`, this.deps.clock.now().getTime()));
        stored = storeSubmission(this.deps, { bucketId: site.bucketId, accountId: bucket.accountId, formName: name, value: { fields, context } });
      } catch (e) {
        if (solution) this.challenges.refund(solution);
        throw e;
      }
    }
    if (json) {
      const data = stored
        ? { form_submission: { id: stored.row.id, form_name: name, created_at: stored.row.createdAt }, status: "received" }
        : { form_submission: { id: null, form_name: name, created_at: null }, status: "received" };
      return new Response(JSON.stringify({ data }), {
        status: 201,
        headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
      });
    }
    if (returnPath && body._pier_return !== undefined) {
      const sep = returnPath.includes("?") ? "&" : "?";
      return new Response(null, { status: 303, headers: { location: `${returnPath}${sep}pier_form=sent`, "cache-control": "no-store" } });
    }
    const back = returnPath ? `<p><a href="${escapeHtml(returnPath)}">Back to the page</a></p>` : "";
    return page(200, "Thank you", `<h1>Thank you</h1><p>Your message was sent.</p>${back}`);
  }
}

const errorStatus = (e: ApiError): number => errorCatalogue[e.code].status;

/** A refused token (`wait` seconds until the next one) is a 429 with Retry-After. */
function throwIfLimited(wait: number): void {
  if (wait > 0) {
    throw new ApiError("FORM_RATE_LIMITED", "Too many messages were sent to this form just now. Please wait a moment and try again.", {}, wait);
  }
}

/**
 * Browsers send Origin on every POST; without it, Sec-Fetch-Site says where the post came
 * from. A post that proves neither is refused: a form endpoint is no place for other sites' pages.
 */
function checkSameOrigin(req: Request): void {
  const host = req.headers.get("host");
  const origin = req.headers.get("origin");
  let ok = false;
  if (origin !== null && origin !== "null") {
    try {
      ok = new URL(origin).host === host;
    } catch {
      ok = false;
    }
  } else if (origin === null) {
    ok = req.headers.get("sec-fetch-site") === "same-origin";
  }
  if (!ok) throw new ApiError("FORM_CROSS_ORIGIN", "This form can only be sent from the site's own pages.");
}

async function readFields(req: Request): Promise<Record<string, string>> {
  const type = (req.headers.get("content-type") ?? "").toLowerCase();
  const out: Record<string, string> = {};
  const put = (k: string, v: unknown) => {
    if (typeof v === "string" && !(k in out)) out[k] = v;
  };
  try {
    if (type.startsWith("application/x-www-form-urlencoded")) {
      for (const [k, v] of new URLSearchParams(await req.text())) put(k, v);
    } else if (type.startsWith("multipart/form-data")) {
      const form = await req.formData();
      for (const [k, v] of form.entries() as Iterable<[string, unknown]>) {
        if (typeof v !== "string") throw new ApiError("FORM_UNSUPPORTED_TYPE", "Forms take text only, not files.");
        put(k, v);
      }
    } else if (type.startsWith("application/json")) {
      const parsed: unknown = JSON.parse(await req.text());
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
        throw new ApiError("BAD_REQUEST", "The JSON body must be an object of field values.");
      for (const [k, v] of Object.entries(parsed))
        put(k, k === "_pier_selection" && typeof v === "object" ? JSON.stringify(v) : typeof v === "number" ? String(v) : v);
    } else {
      throw new ApiError("FORM_UNSUPPORTED_TYPE", "Send the form as a normal web form (application/x-www-form-urlencoded or multipart/form-data) or JSON.");
    }
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw new ApiError("BAD_REQUEST", "The form data could not be read.");
  }
  return out;
}

/** A path on this site ("/..." but not "//host"), or null. */
function samePath(value: string | undefined): string | null {
  if (!value || !value.startsWith("/") || value.startsWith("//") || value.includes("\\") || value.length > 1000) return null;
  return /[\u0000-\u001f]/.test(value) ? null : value;
}

function refererPath(req: Request): string | null {
  const ref = req.headers.get("referer");
  if (!ref) return null;
  try {
    const url = new URL(ref);
    return url.host === req.headers.get("host") ? samePath(url.pathname + url.search) : null;
  } catch {
    return null;
  }
}

/** The immutable context: where on the site (and on which page or rectangle) the visitor was. */
function readContext(body: Record<string, string>, returnPath: string | null): SubmissionContext {
  const path = samePath(body._pier_path) ?? (returnPath ? returnPath.split("?")[0]! : null);
  const pageNumber = Number(body._pier_page);
  return {
    document_path: path,
    document_page: Number.isInteger(pageNumber) && pageNumber > 0 && pageNumber < 100_000 ? pageNumber : null,
    document_selection: readSelection(body._pier_selection),
  };
}

function readSelection(raw: string | undefined): DocumentSelection | null {
  if (!raw) return null;
  let s: any;
  try {
    s = JSON.parse(raw);
  } catch {
    throw new ApiError("VALIDATION_FAILED", "The marked area could not be read.", { field: "_pier_selection" });
  }
  const num = (v: unknown) => typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 1e7;
  const c = s?.coordinates;
  const space = s?.coordinate_space;
  const shaped =
    s?.type === "rect" &&
    Array.isArray(c) &&
    c.length === 4 &&
    c.every(num) &&
    typeof space === "object" &&
    space !== null &&
    num(space.width) &&
    num(space.height) &&
    space.width > 0 &&
    space.height > 0 &&
    SELECTION_UNITS.has(space.unit) &&
    (s.color === undefined || (typeof s.color === "string" && /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s.color)));
  if (!shaped) throw new ApiError("VALIDATION_FAILED", "The marked area is not a rectangle Pier understands.", { field: "_pier_selection" });
  // Ratios are fractions of the element or page (a 1 x 1 space); a rectangle has its corners in
  // order and lies inside its space.
  const ratio = space.unit === "element_ratio" || space.unit === "document_ratio";
  const inside = (!ratio || (space.width === 1 && space.height === 1)) && c[0] < c[2] && c[1] < c[3] && c[2] <= space.width && c[3] <= space.height;
  if (!inside) {
    throw new ApiError(
      "VALIDATION_FAILED",
      "The marked area must be a rectangle [x1, y1, x2, y2] with x1 < x2 and y1 < y2 inside its coordinate space (0 to 1 for ratios).",
      { field: "_pier_selection" },
    );
  }
  return {
    version: 1,
    type: "rect",
    coordinates: [c[0], c[1], c[2], c[3]],
    coordinate_space: { width: space.width, height: space.height, unit: space.unit },
    ...(s.color ? { color: s.color } : {}),
  };
}
