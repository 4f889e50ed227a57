// Host -> live publication and its deploy manifest, cached in memory. Lookups are cached in an
// LRU (also misses, briefly, so a scan of random hosts cannot hammer SQLite) and dropped at once
// when a publication changes (activate, access change, unpublish: see features/publish/events).
import { and, eq, sql } from "drizzle-orm";
import { LRUCache } from "lru-cache";
import type { Deps } from "../core/context";
import { accounts, publications } from "../db/schema";
import { DEPLOY_FILES_STEP, deployFilesInSteps, deployHasFiles, deployManifestPage, deploySiteRules, SiteRules, type DeployFile } from "../features/publish";
import { onSiteChange } from "../features/publish";
import { isExcludedFromPublish } from "../features/publish";
import { customDomainSlug } from "../features/domains";

export interface Site {
  id: string;
  accountId: string;
  accountName: string;
  kind: "main" | "preview";
  slug: string;
  title: string;
  description: string;
  status: string;
  siteMode: "static" | "spa";
  accessMode: "public" | "password" | "require_email";
  passwordHash: string | null;
  accessVersion: number;
  expiresAt: number | null;
  deployId: string | null;
  /** tracking_enabled and publication_analytics_enabled: requests are counted. */
  analytics: boolean;
  /** ...and publication_client_events_enabled: the events script reports clicks and downloads. */
  clientEvents: boolean;
  /** /about serves about.html; /about.html redirects to /about. */
  cleanUrls: boolean;

  /** The bucket the site is published from (its metadata holds the forms configuration). */
  bucketId: string;
}

export interface Manifest {
  deployId: string;
  files: Map<string, DeployFile>;
  /** Every directory that holds at least one file ("" is the root). */
  dirs: Set<string>;
  /** The deploy's `_redirects` and `_headers`, compiled at build time (null: neither file). */
  rules: SiteRules | null;
  /** Interned `_headers` outcomes of this deploy (the site server fills it as paths are asked). */
  headerSets?: Map<string, import("./files").SiteHeaderSet>;
  /** The set each recently asked path gets (null: no block matches), bounded by the site server. */
  headerSetByPath?: Map<string, import("./files").SiteHeaderSet | null>;
}

const MAX_SITES = 20_000;

/** A manifest's files and folders, as the steps of its rows come in. */
class ManifestBuilder {
  private readonly files = new Map<string, DeployFile>();
  private readonly dirs = new Set<string>([""]);
  constructor(private readonly deployId: string) {}

  add(rows: DeployFile[]): void {
    for (const f of rows) {
      if (isExcludedFromPublish(f.path)) continue; // belt and braces: never served, never listed
      if (f.path === "_redirects" || f.path === "_headers") continue; // deploys built before site rules held them
      this.files.set(f.path, f);
      for (let i = f.path.indexOf("/"); i !== -1; i = f.path.indexOf("/", i + 1)) this.dirs.add(f.path.slice(0, i));
    }
  }

  done(compiled: ReturnType<typeof deploySiteRules>): Manifest {
    return { deployId: this.deployId, files: this.files, dirs: this.dirs, rules: compiled ? new SiteRules(compiled) : null };
  }
}

export class SiteDirectory {
  // A plain Map with expiry stamps: cheaper per hit than an LRU with TTLs (this is on every request).
  private readonly sites = new Map<string, { site: Site | false; until: number }>();
  private readonly manifests = new LRUCache<string, Manifest>({ maxSize: 2_000_000, sizeCalculation: (m) => m.files.size + 1 + (m.rules?.size ?? 0) });
  private readonly loadingManifests = new Map<string, Promise<Manifest>>();
  /**
   * The labels each publication is cached under: more than one after a rename whose new label was
   * looked up before this process heard of the change (the old one must go too).
   */
  private readonly labelsOf = new Map<string, Set<string>>();
  /** Active custom domain -> managed slug of the site it serves (false: no such active domain). */
  private readonly customHosts = new Map<string, { slug: string | false; until: number }>();

  // Prepared once: building and compiling a query cost ~150 µs per lookup, which every site
  // cache reset, every forgotten publication and every unknown host paid (bench/README.md, "Serving workers forget only what changed").
  private readonly bySlug;
  private readonly labelById;

  constructor(private readonly deps: Deps) {
    this.bySlug = deps.db
      .select({ p: publications, accountName: accounts.name })
      .from(publications)
      .innerJoin(accounts, eq(accounts.id, publications.accountId))
      .where(and(eq(publications.kind, sql.placeholder("kind")), eq(publications.publicSlug, sql.placeholder("slug"))))
      .prepare();
    this.labelById = deps.db
      .select({ kind: publications.kind, slug: publications.publicSlug })
      .from(publications)
      .where(eq(publications.id, sql.placeholder("id")))
      .prepare();
    onSiteChange(deps, ({ publicationId }) => this.forget(publicationId));
  }

  /** `label` is the first DNS label of a managed host: <slug> or preview-<slug>. */
  byLabel(label: string): Site | null {
    const cached = this.sites.get(label);
    if (cached !== undefined && cached.until > performance.now()) return cached.site || null;
    if (this.sites.size >= MAX_SITES) {
      this.sites.clear();
      this.labelsOf.clear();
    }
    const preview = label.startsWith("preview-");
    const slug = preview ? label.slice("preview-".length) : label;
    const row = this.bySlug.get({ kind: preview ? "preview" : "main", slug });
    if (!row) {
      this.sites.set(label, { site: false, until: performance.now() + 2_000 });
      return null;
    }
    const p = row.p;
    const site: Site = {
      id: p.id,
      accountId: p.accountId,
      accountName: row.accountName,
      kind: p.kind,
      slug: p.publicSlug,
      title: p.title,
      description: p.description,
      status: p.status,
      siteMode: p.siteMode,
      accessMode: p.accessMode,
      passwordHash: p.passwordHash,
      accessVersion: p.accessVersion,
      expiresAt: p.expiresAt ? Date.parse(p.expiresAt) : null,
      deployId: p.currentDeployId,
      analytics: p.trackingEnabled && p.analyticsEnabled,
      clientEvents: p.trackingEnabled && p.analyticsEnabled && p.clientEventsEnabled,
      cleanUrls: p.cleanUrls,

      bucketId: p.bucketId,
    };
    this.sites.set(label, { site, until: performance.now() + 60_000 });
    const labels = this.labelsOf.get(p.id);
    if (labels === undefined) this.labelsOf.set(p.id, new Set([label]));
    else labels.add(label);
    return site;
  }

  /**
   * The site an active custom domain serves (the bucket's main site), or null. Cached like
   * byLabel, misses briefly; any site change (a domain added, replaced or removed announces one)
   * drops every cached custom host, so a removed domain stops serving at once.
   */
  byCustomHost(hostname: string): Site | null {
    let cached = this.customHosts.get(hostname);
    if (cached === undefined || cached.until <= performance.now()) {
      if (this.customHosts.size >= MAX_SITES) this.customHosts.clear();
      const slug = customDomainSlug(this.deps, hostname);
      cached = { slug: slug ?? false, until: performance.now() + (slug ? 60_000 : 2_000) };
      this.customHosts.set(hostname, cached);
    }
    return cached.slug === false ? null : this.byLabel(cached.slug);
  }

  /**
   * A deploy's manifest. A deploy of up to DEPLOY_FILES_STEP files is read at once and returned as
   * is; a larger one is read in steps with a turn of the event loop between (a 20,000-file
   * deploy took 30-60 ms in one query, during which every site of the process waited), and the
   * requests that ask meanwhile share one promise.
   */
  manifest(deployId: string): Manifest | Promise<Manifest> {
    const cached = this.manifests.get(deployId);
    if (cached) return cached;
    const loading = this.loadingManifests.get(deployId);
    if (loading) return loading;
    const b = new ManifestBuilder(deployId);
    const first = deployManifestPage(this.deps, deployId, null, DEPLOY_FILES_STEP);
    b.add(first);
    if (first.length < DEPLOY_FILES_STEP) return this.keep(b.done(deploySiteRules(this.deps, deployId)));
    const rest = (async () => {
      for await (const rows of deployFilesInSteps(this.deps, deployId, first[first.length - 1]!.path)) b.add(rows);
      const m = b.done(deploySiteRules(this.deps, deployId));
      // Pruned while it was read (the site moved on and the history dropped it): the rows read
      // serve the requests that asked, but an incomplete list is not kept.
      return deployHasFiles(this.deps, deployId) ? this.keep(m) : m;
    })().finally(() => this.loadingManifests.delete(deployId));
    this.loadingManifests.set(deployId, rest);
    return rest;
  }

  private keep(m: Manifest): Manifest {
    this.manifests.set(m.deployId, m);
    return m;
  }

  /** Every cached host lookup (another process changed the database: anything may have moved). */
  forgetAll(): void {
    this.sites.clear();
    this.customHosts.clear();
    this.labelsOf.clear();
  }

  /** One publication's cached lookups (and every cached custom host): it changed. */
  forget(publicationId: string): void {
    this.customHosts.clear();
    for (const label of this.labelsOf.get(publicationId) ?? []) this.sites.delete(label);
    this.labelsOf.delete(publicationId);
    // A publication never looked up (or cached as missing) may just have gone live.
    const p = this.labelById.get({ id: publicationId });
    if (p) this.sites.delete(p.kind === "preview" ? `preview-${p.slug}` : p.slug);
  }
}
