// A bucket's Site tab (/dashboard/buckets/<id>/site): publish, preview with an expiry and its
// folder, end a preview early, unpublish, retry a failed build, the live build state, slug, site mode, access mode with the
// password and share text, recipient links and leads, the site's expiry, the site rules, the
// paged manifest and deploys. Every form calls
// the publish service the REST route calls; plan refusals show their choices as buttons.
import type { Elysia } from "elysia";
import { ApiError } from "../../../core/errors";
import { csvHeaders } from "../../../http/content-disposition";
import { alertBox, html, shortTime } from "../../../http/pages/layout";
import { offsetOf } from "./paging";
import { effectiveScope, getBucket } from "../../buckets";
import {
  endPreview,
  PREVIEW_MAX_MINUTES,
  findPublication,
  getAccess,
  leadsCsv,
  newestDeploy,
  manifestPageOf,
  patchAccess,
  patchPublication,
  presentPublication,
  recipientLinks,
  renameSlug,
  requestPublish,
  retryPublication,
  rollbackPublication,
  unpublishBucket,
} from "../../publish";
import { deploysSection } from "./site-deploys";
import { expiryInput, publishInput, rootInput, settingsInput } from "./site-inputs";
import type { DashboardPage } from "../page";
import { formField, type Session, type Shell } from "../shell";
import { BUCKETS_PATH } from "./buckets-home";
import {
  accessExtras,
  accessModeOptions,
  accessSummary,
  fieldState,
  LEADS_PAGE,
  leadsPageOf,
  MANIFEST_PAGE,
  manifestSection,
  siteModeOptions,
  siteRulesSection,
  siteUrl,
  statusRegion,
  upgradeChoices,
  type SiteRefusal,
} from "./site-sections";

const DONE: Record<string, string> = {
  published: "Publish accepted: the site is being built.",
  preview: "Preview accepted: it is being built.",
  unpublished: "Unpublishing: the site stops answering in a moment.",
  "already-unpublished": "The site was already unpublished.",
  retried: "The build runs again.",
  "preview-retried": "The preview's build runs again.",
  "preview-ended": "Preview ended: its address answers 410 Gone from now on. The main site is unchanged.",
  "preview-gone": "There was no live preview to end.",
  mode: "Site mode saved: it applies at once, no rebuild needed.",
  settings: "Site settings saved: they apply at once, no rebuild needed.",
  expiry: "Expiry set: the site stops answering then.",
  "expiry-removed": "Expiry removed: the site stays up.",
  slug: "Address changed: the site moved at once.",
  "slug-unchanged": "That is already the site's address: nothing changed.",
  access: "Access saved: current visitors were signed out.",
  password: "A new password was generated: current visitors were signed out.",
  rollback: "Rolled back: the site serves that deploy now. The bucket's files are unchanged.",
};

const PREVIEW_EXPIRIES: [number, string][] = [
  [15, "15 minutes"],
  [60, "1 hour"],
  [1440, "1 day"],
  [10080, "7 days"],
  [PREVIEW_MAX_MINUTES, "30 days"],
];

async function siteView(shell: Shell, s: Session, id: string, query: Record<string, string | undefined>, refused?: SiteRefusal) {
  const bucket = getBucket(shell.deps, s.actor, id);
  const mainRow = findPublication(bucket.id, "main", shell.deps.db);
  const previewRow = findPublication(bucket.id, "preview", shell.deps.db);
  // Without the manifest: the tab shows a page of it (manifestSection), read on its own.
  const main = mainRow ? presentPublication(shell.deps, s.actor, mainRow) : null;
  const preview = previewRow ? presentPublication(shell.deps, s.actor, previewRow) : null;
  const live = main && main.status !== "unpublished";
  const lastDeploy = mainRow ? newestDeploy(shell.deps, mainRow.id) : undefined;
  const fieldRefusal = (refused?.error.details as { field?: string } | undefined)?.field;
  const links = shell.takeFlash(s, query.links) as { email: string; url: string }[] | undefined;
  const notice = refused && !fieldRefusal ? alertBox(refused.error.message) : alertBox(DONE[query.done ?? ""], "ok");
  const typed = refused?.typed ?? {};
  const formCsrf = shell.formToken(s);
  const pub = fieldState(refused, "publish", "password");
  const acc = fieldState(refused, "access", "password");
  const slug = fieldState(refused, "slug", "public_slug");
  const setTitle = fieldState(refused, "settings", "title");
  const expiry = fieldState(refused, "expiry", "expires_at");
  const setDescription = fieldState(refused, "settings", "description");
  const prev = fieldState(refused, "preview", "password");
  const root = fieldState(refused, "publish", "publication_root_directory");
  const suggestion = fieldState(refused, "publish", "slug_suggestions");
  const previewRootState = fieldState(refused, "preview", "publication_root_directory");
  const metadataRoot = (bucket.metadata as Record<string, unknown> | null)?.publication_root_directory;
  const typedSettings = refused?.form === "settings" ? refused.typed : {};
  const typedPreview = refused?.form === "preview" ? refused.typed : {};
  const offset = offsetOf(query);
  const leadsOffset = offsetOf(query, "leads_offset");
  const publishMode = typed.access_mode ?? main?.access_mode ?? "public";
  const siteMode = typed.site_mode ?? main?.site_mode ?? "static";
  const siteRoot = main?.publication_root_directory ?? (typeof metadataRoot === "string" ? metadataRoot : "");
  return shell.render(s, {
    title: `Site · ${bucket.title}`,
    template: "dashboard/site.html",
    current: BUCKETS_PATH,
    error: refused?.error,
    scripts: ["site.js"],
    vars: {
      notice,
      choices: refused ? upgradeChoices(refused.error, bucket.id, formCsrf, siteMode, typed) : html``,
      tabs: shell.bucketTabs(bucket.id, "site"),
      id: bucket.id,
      title: bucket.title,
      archived: bucket.archivedAt !== null,
      hasMain: !!main,
      live: !!live,
      status: main ? statusRegion(main, s.csrf, "main") : html``,
      publicUrl: live ? main.public_url : "",
      slug: typed.public_slug ?? main?.public_slug ?? "",
      slugError: slug.error,
      slugInvalid: slug.attrs,
      failed: main?.publish_state === "failed",
      // When a deploy last went live: a build that failed before any did is not a publish.
      publishedAt: lastDeploy ? shortTime(lastDeploy.createdAt) : "never",
      expiresAt: main?.expires_at ? shortTime(main.expires_at) : "",
      siteModeOptions: siteModeOptions(siteMode),
      currentModeOptions: siteModeOptions(main?.site_mode ?? "static"),
      pubTitle: typedSettings.title ?? main?.title ?? "",
      pubDescription: typedSettings.description ?? main?.description ?? "",
      titleError: setTitle.error,
      titleInvalid: setTitle.attrs,
      descriptionError: setDescription.error,
      descriptionInvalid: setDescription.attrs,
      cleanUrls: main?.clean_urls ?? true,
      tracking: main?.tracking_enabled ?? true,
      analyticsOn: main?.publication_analytics_enabled ?? true,
      clientEventsOn: main?.publication_client_events_enabled ?? true,
      previewSiteModeOptions: siteModeOptions(typedPreview.site_mode ?? preview?.site_mode ?? siteMode),
      // Chosen by default: no access_mode at all, so a preview keeps the site's gate (D254) rather
      // than opening a protected site's unreleased files to anyone who derives preview-<slug>.
      previewAccessOptions: html`<option value=""${typedPreview.access_mode ? "" : html` selected`}>As the site: keep its protection</option>${accessModeOptions(typedPreview.access_mode ?? "")}`,
      previewRoot: typedPreview.publication_root_directory ?? preview?.publication_root_directory ?? siteRoot,
      previewRootError: previewRootState.error,
      previewRootInvalid: previewRootState.attrs,
      previewPasswordError: prev.error,
      previewPasswordInvalid: prev.attrs,
      publishAccessOptions: accessModeOptions(publishMode),
      accessOptions: accessModeOptions(refused?.form === "access" ? (typed.access_mode ?? "public") : (main?.access_mode ?? "public")),
      publishRoot: typed.publication_root_directory ?? siteRoot,
      // The first publish may name its address (the API's slug_suggestions); later, the slug form renames it.
      sitesDomain: shell.deps.urls.sitesDomain,
      typedSlugSuggestion: typed.slug_suggestions ?? "",
      slugSuggestionError: suggestion.error,
      slugSuggestionInvalid: suggestion.attrs,
      publishRootError: root.error,
      publishRootInvalid: root.attrs,
      publishPasswordError: pub.error,
      publishPasswordInvalid: pub.attrs,
      accessPasswordError: acc.error,
      accessPasswordInvalid: acc.attrs,
      // The password, leads and signed links are the bucket admin's (getAccess); a member sees the rest of the tab.
      accessExtras:
        live && effectiveScope(s.actor, bucket.id) === "bucket_admin"
          ? accessExtras(
              main,
              bucket.id,
              formCsrf,
              leadsPageOf(getAccess(shell.deps, s.actor, main.id, { limit: LEADS_PAGE, offset: leadsOffset })),
              links ?? null,
              refused,
            )
          : html``,
      manifest: live
        ? manifestSection(bucket.id, manifestPageOf(shell.deps, mainRow!, offset, MANIFEST_PAGE), main.published_files_count, offset)
        : html`<p class="muted">Not published.</p>`,
      preview: !!preview && preview.status !== "unpublished",
      // A failed first preview is unpublished (D76) but still has a build to retry.
      previewFailed: preview?.publish_state === "failed",
      previewStatus: preview && (preview.status !== "unpublished" || preview.publish_state === "failed") ? statusRegion(preview, s.csrf, "preview") : html``,
      previewLive: !!preview && (preview.status === "published" || preview.status === "publishing") && !preview.expired,
      previewUrl: preview?.public_url ?? "",
      previewExpires: preview?.expires_at ? shortTime(preview.expires_at) : "",
      // A password preview's password, to the account owner once built (as the REST read gives it).
      previewPassword: preview && preview.status !== "unpublished" ? (preview.access_password ?? "") : "",
      previewAccess: preview && preview.status !== "unpublished" ? accessSummary(preview, "preview-access") : html``,
      typedExpiry: refused?.form === "expiry" ? (refused.typed.expires_at ?? "") : (main?.expires_at ?? ""),
      expiryError: expiry.error,
      expiryInvalid: expiry.attrs,
      siteRules: live ? siteRulesSection(main.site_rules) : html``,
      deploys: main ? deploysSection(shell.deps, s.actor, main.id, bucket.id, formCsrf, offsetOf(query, "deploys_offset")) : html``,
      previewExpiryOptions: html`${PREVIEW_EXPIRIES.map(([m, l]) => html`<option value="${m}"${m === 1440 ? html` selected` : ""}>${l}</option>`)}`,
    },
  });
}

function refusedOnSite(shell: Shell, s: Session, id: string, refusal: SiteRefusal) {
  if (refusal.error.code === "BUCKET_NOT_FOUND" || refusal.error.code === "FORBIDDEN")
    return shell.notFound(s, refusal.error.code === "BUCKET_NOT_FOUND" ? refusal.error : undefined);
  return siteView(shell, s, id, {}, refusal);
}

/** The bucket's main publication, or a clear refusal when the page was stale. */
function mainOf(shell: Shell, s: Session, id: string) {
  const pub = findPublication(getBucket(shell.deps, s.actor, id).id, "main", shell.deps.db);
  if (!pub) throw new ApiError("PUBLICATION_NOT_FOUND", "This bucket has no site yet: publish it first.");
  return pub;
}

const typedFields = (body: unknown, names: string[]) => Object.fromEntries(names.map((n) => [n, formField(body, n)]));

export const sitePage: DashboardPage = {
  bucketTab: { label: "Site", path: "site" },
  routes: (app, shell) => {
    const post = (suffix: string, fields: string[], run: (s: Session, id: string, body: unknown) => string | Promise<string>) =>
      app.post(
        `${BUCKETS_PATH}/:id/site/${suffix}`,
        shell.action(
          (s, { params, body }) => run(s, params.id!, body),
          (s, error, { params, body }) => {
            const typed = typedFields(body, fields);
            // The plan's refusal offers a preview with the same access: the typed password waits
            // for it on the server (never written into the page), so the preview gets that one.
            const password = formField(body, "password");
            if (error.code === "PUBLICATION_UPGRADE_REQUIRED" && password) typed.password_ref = shell.flash(s, password);
            return refusedOnSite(shell, s, params.id!, { error, form: suffix, typed });
          },
        ),
        { detail: { hide: true } },
      );
    post("publish", ["site_mode", "access_mode", "publication_root_directory", "slug_suggestions"], async (s, id, body) => {
      const slug = formField(body, "slug_suggestions").trim();
      const naming = slug ? { slug_suggestions: [slug] } : {};
      await requestPublish(shell.deps, s.actor, id, { ...publishInput(body), ...rootInput(body), ...naming }, "main", "dashboard");
      return siteUrl(id, "?done=published");
    });
    post("preview", ["site_mode", "access_mode", "publication_root_directory"], async (s, id, body) => {
      const minutes = Number.parseInt(formField(body, "expires_in_minutes") || "15", 10);
      const kept = shell.takeFlash(s, formField(body, "password_ref") || undefined);
      const password = formField(body, "password") || (typeof kept === "string" ? kept : "");
      await requestPublish(
        shell.deps,
        s.actor,
        id,
        { ...publishInput(body, password), ...rootInput(body), expires_in_minutes: minutes },
        "preview",
        "dashboard",
      );
      return siteUrl(id, "?done=preview");
    });
    post("preview-end", [], (s, id) => siteUrl(id, `?done=${endPreview(shell.deps, s.actor, id) ? "preview-ended" : "preview-gone"}#preview`));
    post("unpublish", [], (s, id) => siteUrl(id, `?done=${unpublishBucket(shell.deps, s.actor, id).changed ? "unpublished" : "already-unpublished"}`));
    post("retry", [], (s, id, body) => {
      const kind = formField(body, "kind") === "preview" ? "preview" : "main";
      retryPublication(shell.deps, s.actor, id, kind);
      return siteUrl(id, kind === "preview" ? "?done=preview-retried#preview" : "?done=retried");
    });
    post("mode", [], (s, id, body) => {
      const mode = formField(body, "site_mode");
      if (mode !== "static" && mode !== "spa") throw new ApiError("VALIDATION_FAILED", "Choose a site mode.", { field: "site_mode" });
      patchPublication(shell.deps, s.actor, mainOf(shell, s, id).id, { site_mode: mode });
      return siteUrl(id, "?done=mode");
    });
    post("settings", ["title", "description"], (s, id, body) => {
      patchPublication(shell.deps, s.actor, mainOf(shell, s, id).id, settingsInput(body));
      return siteUrl(id, "?done=settings#site-settings");
    });
    post("expiry", ["expires_at"], (s, id, body) => {
      const input = expiryInput(body);
      try {
        patchPublication(shell.deps, s.actor, mainOf(shell, s, id).id, input);
      } catch (e) {
        // The service names the API's field; this form has its own words for the same rule. The
        // form's format was checked above, so a refused expires_at is one not in the future.
        if (e instanceof ApiError && e.code === "VALIDATION_FAILED" && (e.details as { field?: string } | undefined)?.field === "expires_at")
          throw new ApiError(e.code, "Choose a time in the future, or remove the expiry.", e.details);
        throw e;
      }
      return siteUrl(id, `?done=${input.expires_at ? "expiry" : "expiry-removed"}#expiry`);
    });
    post("slug", ["public_slug"], (s, id, body) => {
      const slug = formField(body, "public_slug").trim();
      if (!slug) throw new ApiError("VALIDATION_FAILED", "Type the new address.", { field: "public_slug" });
      try {
        if (!renameSlug(shell.deps, s.actor, id, slug).renamed) return siteUrl(id, "?done=slug-unchanged");
      } catch (e) {
        // Slug refusals are about the one field on this form.
        if (e instanceof ApiError && (e.code === "SLUG_TAKEN" || e.code === "VALIDATION_FAILED"))
          throw new ApiError(e.code, e.message, { ...(e.details as object), field: "public_slug" });
        throw e;
      }
      return siteUrl(id, "?done=slug");
    });
    post("access", ["access_mode"], async (s, id, body) => {
      const input = publishInput({ access_mode: formField(body, "access_mode"), password: formField(body, "password") });
      if (!input.access_mode) throw new ApiError("VALIDATION_FAILED", "Choose who may open the site.", { field: "access_mode" });
      await patchAccess(shell.deps, s.actor, mainOf(shell, s, id).id, { access_mode: input.access_mode, password: input.password });
      return siteUrl(id, "?done=access#access");
    });
    post("password", [], async (s, id) => {
      await patchAccess(shell.deps, s.actor, mainOf(shell, s, id).id, { access_mode: "password", regenerate_password: true });
      return siteUrl(id, "?done=password#access");
    });
    post("recipient-links", ["emails", "expires_in_days"], (s, id, body) => {
      const emails = formField(body, "emails")
        .split(/[\s,;]+/)
        .map((e) => e.trim())
        .filter(Boolean);
      if (!emails.length || emails.length > 100) throw new ApiError("VALIDATION_FAILED", "Give one to 100 email addresses.", { field: "emails" });
      const bad = emails.find((e) => !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(e) || e.length > 254);
      if (bad) throw new ApiError("VALIDATION_FAILED", `"${bad}" is not an email address.`, { field: "emails" });
      const daysText = formField(body, "expires_in_days").trim() || "30";
      const days = /^\d{1,2}$/.test(daysText) ? Number(daysText) : Number.NaN;
      if (!(days >= 1 && days <= 90)) throw new ApiError("VALIDATION_FAILED", "Links work for 1 to 90 days.", { field: "expires_in_days" });
      const made = recipientLinks(shell.deps, s.actor, mainOf(shell, s, id).id, { emails, expires_in_days: days });
      return siteUrl(id, `?links=${shell.flash(s, made.recipient_links)}#recipients-h`);
    });
    post("rollback", [], async (s, id, body) => {
      const deployId = formField(body, "deploy_id");
      if (!/^dpl_[a-z0-9]{1,40}$/.test(deployId)) throw new ApiError("VALIDATION_FAILED", "Choose a deploy to roll back to.", { field: "deploy_id" });
      await rollbackPublication(shell.deps, s.actor, mainOf(shell, s, id).id, deployId);
      return siteUrl(id, "?done=rollback#deploys");
    });
    app.get(
      `${BUCKETS_PATH}/:id/site/leads.csv`,
      shell.view((s, { params }) => {
        try {
          const csv = leadsCsv(shell.deps, s.actor, mainOf(shell, s, params.id!).id);
          const day = shell.deps.clock.now().toISOString().slice(0, 10);
          return new Response(csv.body, { headers: csvHeaders(`${csv.slug} visitors ${day}.csv`) });
        } catch (e) {
          if (e instanceof ApiError && e.code === "PUBLICATION_NOT_FOUND") return shell.notFound(s, e);
          throw e;
        }
      }),
      { detail: { hide: true } },
    );
    return app.get(
      `${BUCKETS_PATH}/:id/site`,
      shell.view((s, { params, query }) => siteView(shell, s, params.id!, query)),
      { detail: { hide: true } },
    ) as unknown as Elysia;
  },
};
