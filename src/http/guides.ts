// Pier's guides (the README and docs/), served by every instance at /docs/guides and embedded in
// the binary: the dashboard, error hints and the not-found page point at them, and a homelab with
// no internet (or a binary without the repository) still has them. Rendered off the event loop
// by the README renderer's worker (the decision log takes ~0.2 s of marked), once per process.
import { Elysia } from "elysia";
import accounts from "../../docs/accounts.md" with { type: "text" };
import agents from "../../docs/agents.md" with { type: "text" };
import analytics from "../../docs/analytics.md" with { type: "text" };
import architecture from "../../docs/architecture.md" with { type: "text" };
import buckets from "../../docs/buckets.md" with { type: "text" };
import certificates from "../../docs/certificates.md" with { type: "text" };
import changelog from "../../docs/changelog.md" with { type: "text" };
import configuration from "../../docs/configuration.md" with { type: "text" };
import customDomains from "../../docs/custom-domains.md" with { type: "text" };
import dashboard from "../../docs/dashboard.md" with { type: "text" };
import decisions from "../../docs/decisions.md" with { type: "text" };
import deployment from "../../docs/deployment.md" with { type: "text" };
import files from "../../docs/files.md" with { type: "text" };
import forms from "../../docs/forms.md" with { type: "text" };
import gitSync from "../../docs/git-sync.md" with { type: "text" };
import inboundEmail from "../../docs/inbound-email.md" with { type: "text" };
import operations from "../../docs/operations.md" with { type: "text" };
import publishing from "../../docs/publishing.md" with { type: "text" };
import readme from "../../README.md" with { type: "text" };
import security from "../../docs/security.md" with { type: "text" };
import siteRules from "../../docs/site-rules.md" with { type: "text" };
import sites from "../../docs/sites.md" with { type: "text" };
import { ApiError } from "../core/errors";
import { renderReadmeOutcome } from "../sites/markdown";
import { htmlResponse } from "./html";
import { html, renderPage, SafeHtml } from "./pages/layout";

/** The guides by their address (/docs/guides/<name>), in the index's order, under its headings. */
const GUIDES: { section: string; guides: Record<string, string> }[] = [
  { section: "Start here", guides: { readme, deployment, configuration } },
  {
    section: "Using Pier",
    guides: {
      buckets,
      files,
      publishing,
      sites,
      "site-rules": siteRules,
      "custom-domains": customDomains,
      certificates,
      forms,
      analytics,
      "inbound-email": inboundEmail,
      "git-sync": gitSync,
      dashboard,
      accounts,
      agents,
    },
  },
  { section: "Running Pier", guides: { operations, security } },
  { section: "How Pier is built", guides: { architecture, decisions, changelog } },
];

const byName = new Map(GUIDES.flatMap((g) => Object.entries(g.guides)));

/** A guide's title: its first `# ` heading, without Markdown's backticks. */
export function guideTitle(name: string): string {
  const source = byName.get(name) ?? "";
  const title = /^# (.+)$/m.exec(source)?.[1]?.replace(/`/g, "") ?? name;
  return name === "readme" ? `${title}: quick start, configuration table, deployment` : title;
}

export const guideNames = (): string[] => [...byName.keys()];

/** A guide can take the worker a while the first time (hundreds of KiB); it is remembered after. */
const GUIDE_RENDER_TIMEOUT_MS = 10_000;

const guideStyle = html`<style>
.guides-nav{display:flex;gap:1rem;flex-wrap:wrap;margin:0 0 1rem}
.guide{overflow-wrap:anywhere}
.guide h1{font-size:1.6rem}.guide h2{font-size:1.3rem;margin:2rem 0 .75rem}.guide h3{font-size:1.1rem;margin:1.5rem 0 .5rem}
.guide pre{white-space:pre-wrap;background:var(--code);padding:.75rem 1rem;border-radius:8px;font-size:.875rem}
.guide code{background:var(--code);padding:.05rem .3rem;border-radius:4px;font-size:.9em}.guide pre code{background:none;padding:0}
.guide table{border-collapse:collapse;width:100%;font-size:.9rem;margin:1rem 0}
.guide th,.guide td{border:1px solid var(--line);padding:.35rem .5rem;text-align:left;vertical-align:top}
.guide blockquote{margin:1rem 0;padding:0 1rem;border-left:3px solid var(--line);color:var(--muted)}
</style>`;

const guidesNav = html`<nav aria-label="Documentation" class="guides-nav small"><a href="/docs/guides">All guides</a><a href="/docs">API reference</a><a href="/docs/errors">Error codes</a><a href="/dashboard">Dashboard</a></nav>`;

/** Public, the same for everyone and versioned with the binary: caches may keep them a while. */
const cached = (res: Response) => {
  res.headers.set("cache-control", "public, max-age=3600");
  return res;
};

async function indexPage(): Promise<Response> {
  const sections = GUIDES.map(
    (g) => html`<h2>${g.section}</h2><ul>${Object.keys(g.guides).map((name) => html`<li><a href="/docs/guides/${name}">${guideTitle(name)}</a></li>`)}</ul>`,
  );
  const body = html`${guideStyle}<section class="card"><h1>Pier guides</h1>${guidesNav}<p class="muted">The documentation of this Pier's version (${byName.size} guides), served by Pier itself: no internet needed.</p>${sections}</section>`;
  return cached(htmlResponse(await renderPage({ title: "Guides", body, width: "wide" })));
}

async function guidePage(name: string): Promise<Response> {
  const source = byName.get(name);
  if (source === undefined) throw new ApiError("NOT_FOUND", `There is no guide named ${name}; /docs/guides lists them.`);
  const { html: rendered, settled } = await renderReadmeOutcome(source, GUIDE_RENDER_TIMEOUT_MS, "guide");
  const body = html`${guideStyle}<article class="card guide">${guidesNav}${new SafeHtml(rendered)}</article>`;
  const res = htmlResponse(await renderPage({ title: guideTitle(name), body, width: "wide" }));
  // A stopgap (the renderer was busy: the text as plain text) is not to be kept by caches.
  return settled ? cached(res) : res;
}

export const guideRoutes = () =>
  new Elysia({ name: "guides" })
    .get("/docs/guides", () => indexPage(), { detail: { hide: true } })
    .get("/docs/guides/:name", ({ params }) => guidePage(params.name.replace(/\.md$/, "").toLowerCase()), { detail: { hide: true } });
