// Server-rendered form markup: the same <form> works without JavaScript (a plain POST) and is
// what the widget script enhances. Every visitor value is escaped here.
import { createHmac } from "node:crypto";
import type { Deps } from "../../core/context";
import { safeEqual } from "../../core/crypto";
import { escapeHtml } from "../../http/html";
import { FORMS, type FormName } from "./definitions";
import { TURNSTILE_ORIGIN, TURNSTILE_SCRIPT } from "./turnstile";

/** Honeypot: hidden from people (off-screen, not focusable), filled by bots that fill every field. */
export const HONEYPOT_FIELD = "_pier_website";
/** Signed time the form was rendered, for the minimum fill time. */
export const STARTED_FIELD = "_pier_started";

function startedMac(deps: Deps, siteId: string, form: string, at: number): string {
  return createHmac("sha256", deps.secrets.key("csrf")).update(`form-started\n${siteId}\n${form}\n${at}`).digest("base64url");
}

/** The fill timer for a form rendered now (or, for tests, at `at` ms). */
export function startedToken(deps: Deps, siteId: string, form: FormName, at = deps.clock.now().getTime()): string {
  return `${at}.${startedMac(deps, siteId, form, at)}`;
}

/** When the form was rendered (ms), or null when the token is not one Pier issued for this site and form. */
export function readStartedToken(deps: Deps, siteId: string, form: FormName, token: string): number | null {
  const [at, mac] = token.split(".");
  if (!at || !mac || !/^\d{1,15}$/.test(at)) return null;
  return safeEqual(mac, startedMac(deps, siteId, form, Number(at))) ? Number(at) : null;
}

export interface RenderOptions {
  values?: Record<string, string>;
  required: string[];
  missing?: string[];
  started: string;
  /** Where a plain post comes back to after the thank-you page. */
  returnPath?: string;
  /** Include the proof-of-work widget and the area-marking tool (pages that load the scripts). */
  challenge?: boolean;
  /** Render Cloudflare Turnstile with this site key. */
  turnstileSiteKey?: string;
}

/** The scripts hosted forms need, all from the site host except Turnstile (only where a form asks for it). */
export function formScripts(turnstile: boolean): string {
  return (
    `<script src="/_pier/forms.js" defer></script><script type="module" src="/_pier/altcha.js"></script>` +
    (turnstile ? `<script src="${TURNSTILE_SCRIPT}" async defer></script>` : "")
  );
}

/**
 * CSP for Pier's own page that shows a form again: its scripts from the site host, the altcha
 * widget's workers (data: URLs) and, only when the form uses it, Turnstile's script and frame.
 */
export function formPageCsp(turnstile: boolean): string {
  const cf = turnstile ? ` ${TURNSTILE_ORIGIN}` : "";
  return (
    `default-src 'none'; script-src 'self'${cf}; worker-src data: blob:; connect-src 'self'${cf}; style-src 'unsafe-inline'; ` +
    `img-src 'self' data:; form-action 'self'; frame-src${turnstile ? cf : " 'none'"}; frame-ancestors 'none'; base-uri 'none'`
  );
}

export function formHtml(name: FormName, o: RenderOptions): string {
  const def = FORMS[name];
  const missing = new Set(o.missing ?? []);
  const fields = def.fields
    .map((f) => {
      const id = `pier-${name}-${f.name}`;
      const value = o.values?.[f.name] ?? "";
      const req = o.required.includes(f.name) ? " required" : "";
      const invalid = missing.has(f.name) ? ' aria-invalid="true"' : "";
      const input =
        f.type === "textarea"
          ? `<textarea id="${id}" name="${f.name}" maxlength="${f.maxLength}" rows="4"${req}${invalid}>${escapeHtml(value)}</textarea>`
          : `<input id="${id}" name="${f.name}" type="${f.type}" maxlength="${f.maxLength}" value="${escapeHtml(value)}"${req}${invalid}>`;
      const note = missing.has(f.name) ? `<span class="pier-form-error">${escapeHtml(f.label)} is required.</span>` : "";
      return `<label for="${id}">${escapeHtml(f.label)}${req ? " *" : ""}</label>${input}${note}`;
    })
    .join("");
  return (
    `<form class="pier-form" data-pier-form="${name}" action="/_pier/form/${name}" method="post">` +
    `<h2>${escapeHtml(def.label)}</h2>${fields}` +
    `<div class="pier-hp" style="position:absolute;left:-9999px" aria-hidden="true"><label>Leave empty<input name="${HONEYPOT_FIELD}" tabindex="-1" autocomplete="off"></label></div>` +
    `<input type="hidden" name="${STARTED_FIELD}" value="${escapeHtml(o.started)}">` +
    (o.returnPath ? `<input type="hidden" name="_pier_return" value="${escapeHtml(o.returnPath)}">` : "") +
    (o.challenge
      ? `<input type="hidden" name="_pier_selection" value="">` +
        `<p class="pier-mark" hidden><button type="button" class="pier-mark-start">Mark an area</button> <span class="pier-mark-note" role="status"></span></p>` +
        `<altcha-widget challenge="/_pier/form/challenge" name="altcha" auto="onfocus" configuration="{&quot;hideFooter&quot;:true}"></altcha-widget>`
      : "") +
    (o.turnstileSiteKey
      ? `<div class="cf-turnstile" data-sitekey="${escapeHtml(o.turnstileSiteKey)}"></div><noscript><p class="pier-form-error">This form needs JavaScript for its anti-spam check.</p></noscript>`
      : "") +
    `<button type="submit">${escapeHtml(def.submitLabel)}</button></form>`
  );
}

/** The body of the page a plain (no-script) post gets when its message was refused. */
export function notSentBody(reason: string): string {
  return `<h1>Your message was not sent</h1><p class="error">${escapeHtml(reason)}</p>`;
}
