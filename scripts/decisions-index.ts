// Keeps docs/decisions.md grouped by area, numbered, dated and indexed. Entries are appended
// at the end of the file as `## Area: title` + text; running this again (after merging branches
// that appended entries) files each new entry under its area with the next free number and the
// date git first saw its heading, and rebuilds the index. Numbers and dates once given never
// change, so "D12" stays a stable reference. Entry text is kept byte for byte.
//   bun run scripts/decisions-index.ts           rewrite docs/decisions.md
//   bun run scripts/decisions-index.ts --check   exit 1 if the file is not up to date
//   bun run scripts/decisions-index.ts --merge   after `git merge` stopped on a conflict in
//                                                 docs/decisions.md: merge both sides, then refile
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const file = join(root, "docs/decisions.md");
const START = "<!-- Entries below: numbered, dated and filed by scripts/decisions-index.ts. Append new ones at the end. -->";

/** Area sections in the order they appear; an area met only in a new entry's prefix follows them. */
const AREAS = ["Accounts", "Buckets", "Files", "Publishing", "Sites", "Mail", "OAuth", "MCP", "HTTP", "CLI", "Core", "Operations", "Tests"];

/** Heading prefixes (the text before the first ": ") that name an area in other words. */
const PREFIX_AREAS: Record<string, string> = {
  "Archived buckets": "Buckets",
  "Bucket delete": "Buckets",
  "Bucket version history": "Files",
  "Email-code agent login": "OAuth",
  "Host layout": "Operations",
  "Inbound email": "Mail",
  "JSON bodies": "HTTP",
  "Named API keys": "Accounts",
  "Outbound mail": "Mail",
  "Request bodies": "HTTP",
  "Storage endpoint": "Files",
  Configuration: "Operations",
  CSRF: "Accounts",
  Storage: "Files",
};

/** Early entries written before headings carried an area. */
const TITLE_AREAS: Record<string, string> = {
  "A deduplicated blob write refreshes the blob's mtime": "Core",
  "A durable job queue in the same database": "Core",
  "Agent activity is a hook, counted in memory": "OAuth",
  "Anonymous requests are rate-limited per client IP": "HTTP",
  "Asset caching: five minutes, then revalidate": "Sites",
  "Auto-Index README: marked with our escaping renderer, plus CSP": "Sites",
  "Auto-Index READMEs render in a worker": "Sites",
  "Browser login links confirm with a button": "OAuth",
  "Browser pages are server-rendered templates from sites/auth/": "Accounts",
  "CLI credentials file": "CLI",
  "Content-addressed blobs on disk": "Core",
  "Delete and archive wait for a committing finalize": "Buckets",
  "Embedding migrations and sites/ assets in the binary": "Operations",
  "Every response carries X-Request-Id and X-Pier-Client-Version": "HTTP",
  "Expired sites: 410 for a week, then ended": "Publishing",
  "Failed first builds leave the publication `unpublished`": "Publishing",
  "Free-site renewal unpublishes (not pauses)": "Publishing",
  "Guess limits lock out the guessing address, never the target": "Accounts",
  "Hosted MCP authenticates by bearer only, outside the auth macro": "MCP",
  "Hosted MCP writes text only": "MCP",
  "Hot small files are served from memory, keyed by content hash": "Sites",
  "IDs and secrets": "Core",
  "Job leases: heartbeat, and no endless crash loops": "Core",
  'MCP analytics_get answers "not available" as a result, not an error': "MCP",
  "MCP bucket_republish": "MCP",
  "MCP tool input schemas are TypeBox": "MCP",
  "Notifications are read over REST, account-wide keys only": "Accounts",
  "OAuth endpoints speak the RFC error format": "OAuth",
  "OAuth pages are browser pages": "OAuth",
  "Offline API reference": "HTTP",
  "One connection per approval; revoking it ends everything it issued": "OAuth",
  "One error family, mapped once": "Core",
  "One initial migration until the first release": "Core",
  "One listener, routed by Host": "HTTP",
  "Public clients only, PKCE S256 only": "OAuth",
  "Publish sessions reuse upload entries and the storage endpoint": "Publishing",
  "Retry-After is guaranteed by the error catalogue": "HTTP",
  'Route auth "signed" for URL-signature routes': "HTTP",
  "SPA fallback keeps missing assets as 404": "Sites",
  "SQLite, configured in one place": "Core",
  "Shared web plumbing lives in src/http": "HTTP",
  "Sign-in attempt limits are in memory": "Accounts",
  "Sign-up defaults to invite mode": "Accounts",
  "Site cookies are host-only and bound to an access version": "Sites",
  "Site deploys are immutable; going live is one row update": "Sites",
  "Sites are served from the one Pier process (for now)": "Sites",
  "TOTP replay protection is in memory": "Accounts",
  "Test timeout comes from scripts/test.sh": "Tests",
  "The build does not minify": "Operations",
  "The e2e test builds the binary every run": "Tests",
  "Unprivileged by default": "Operations",
  "Upload dedupe stays inside the account": "Files",
  "Upload sessions and the bucket lock": "Files",
  "`pier admin` output contract": "CLI",
  "pier admin output contract": "CLI",
  "`pier healthcheck` instead of curl in the image": "Operations",
  "Bucket delete removes publications and deploys through the item list": "Buckets",
};

interface Entry {
  title: string;
  body: string;
  number?: number;
  date?: string;
  position: number;
}

const NUMBERED = /^### D(\d+) · (.*)$/;
const DATED = /^\*Added (\d{4}-\d{2}-\d{2})\*$/;

export function parse(text: string): Entry[] {
  const start = text.indexOf(START);
  const lines = (start >= 0 ? text.slice(start + START.length) : text.replace(/^# Decisions\s*\n/, "")).split("\n");
  const entries: Entry[] = [];
  let current: Entry | undefined;
  const isAreaHeading = (i: number) => {
    const name = lines[i]!.slice(3);
    if (name.includes(": ")) return false;
    const next = lines.slice(i + 1).find((l) => l.trim() !== "");
    return next !== undefined && NUMBERED.test(next);
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const numbered = NUMBERED.exec(line);
    if (numbered || (line.startsWith("## ") && !isAreaHeading(i))) {
      current = {
        title: numbered ? numbered[2]! : line.slice(3).trim(),
        body: "",
        number: numbered ? Number(numbered[1]) : undefined,
        position: entries.length,
      };
      entries.push(current);
      const dated = DATED.exec(lines[i + 1] ?? "");
      if (numbered && dated) {
        current.date = dated[1];
        i++;
      }
      continue;
    }
    if (line.startsWith("## ")) {
      current = undefined; // an area heading this script wrote
      continue;
    }
    if (current) current.body += `${line}\n`;
    else if (line.trim() !== "") throw new Error(`decisions.md: text outside any entry: ${line}`);
  }
  for (const e of entries) e.body = e.body.replace(/^\n+/, "").replace(/\s+$/, "");
  return entries;
}

export function areaOf(title: string): string {
  if (TITLE_AREAS[title]) return TITLE_AREAS[title]!;
  const prefix = /^([^:]{1,40}): /.exec(title)?.[1];
  if (prefix) return PREFIX_AREAS[prefix] ?? prefix;
  return "Other";
}

/** The day git first saw this heading in docs/decisions.md; today when it is not committed yet. */
function addedOn(title: string): string {
  // During a merge the other branch's commits are not in HEAD's history yet.
  const merging = Bun.spawnSync(["git", "rev-parse", "-q", "--verify", "MERGE_HEAD"], { cwd: root }).exitCode === 0;
  const revs = merging ? ["HEAD", "MERGE_HEAD"] : ["HEAD"];
  const git = Bun.spawnSync(["git", "log", "--format=%ad", "--date=short", `-S${title}`, ...revs, "--", "docs/decisions.md"], { cwd: root });
  const dates = git.stdout.toString().trim().split("\n").filter(Boolean);
  return dates.at(-1) ?? new Date().toISOString().slice(0, 10);
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");

/** The index lists a title without its area prefix when it repeats the section's name. */
function shortTitle(title: string, area: string): string {
  if (!title.startsWith(`${area}: `)) return title;
  const rest = title.slice(area.length + 2);
  return rest.charAt(0).toUpperCase() + rest.slice(1);
}

export function render(entries: Entry[]): string {
  const byArea = new Map<string, Entry[]>();
  for (const e of entries) byArea.set(areaOf(e.title), [...(byArea.get(areaOf(e.title)) ?? []), e]);
  const areas = [...AREAS.filter((a) => byArea.has(a)), ...[...byArea.keys()].filter((a) => !AREAS.includes(a)).sort()];
  const heading = (e: Entry) => `D${e.number} · ${e.title}`;
  const out = [
    "# Decisions",
    "",
    "Each rule-level choice Pier made, with why. Entries are numbered in the order they were made",
    "(D1 is the oldest; a number never changes), dated with the day they were added, and grouped by",
    "area. To add one, append `## Area: title` and one paragraph at the end of this file; then",
    "`bun run scripts/decisions-index.ts` numbers, dates and files it and rebuilds this index.",
    "",
    "## Index",
    "",
  ];
  for (const area of areas) {
    const list = byArea.get(area)!.sort((a, b) => a.number! - b.number!);
    out.push(`**${area}**`, "", ...list.map((e) => `- [D${e.number}](#${anchor(heading(e))}) ${shortTitle(e.title, area)} (${e.date})`), "");
  }
  out.push(START, "");
  for (const area of areas) {
    out.push(`## ${area}`, "");
    for (const e of byArea.get(area)!) out.push(`### ${heading(e)}`, `*Added ${e.date}*`, "", e.body, "");
  }
  return `${out.join("\n").replace(/\n+$/, "")}\n`;
}

/** Give new entries (and the second holder of a number) a date, then numbers after the highest one in use, oldest first. */
export function settle(entries: Entry[], dateOf: (title: string) => string = addedOn): Entry[] {
  for (const e of entries) e.date ??= dateOf(e.title);
  // Two branches filed at the same time can both take the next number and merge without a
  // conflict (their entries land in different areas): the later one in the file is renumbered.
  const taken = new Set<number>();
  for (const e of [...entries].sort((a, b) => a.position - b.position)) {
    if (e.number === undefined) continue;
    if (taken.has(e.number)) e.number = undefined;
    else taken.add(e.number);
  }
  let next = Math.max(0, ...entries.map((e) => e.number ?? 0)) + 1;
  const fresh = entries.filter((e) => e.number === undefined).sort((a, b) => a.date!.localeCompare(b.date!) || a.position - b.position);
  for (const e of fresh) e.number = next++;
  return entries;
}

/**
 * Merge another version of the file into the filed one: entries new on the other side are added
 * (and numbered later), an entry whose text only the other side changed since `base` takes that
 * text, and an entry both sides changed keeps ours with a warning.
 */
export function mergeEntries(ours: Entry[], theirs: Entry[], base: Entry[], warn: (msg: string) => void = console.error): Entry[] {
  const byTitle = (list: Entry[]) => new Map(list.map((e) => [e.title, e]));
  const mine = byTitle(ours);
  const old = byTitle(base);
  const merged = [...ours];
  for (const e of theirs) {
    const ourEntry = mine.get(e.title);
    const baseEntry = old.get(e.title);
    if (!ourEntry) {
      if (baseEntry) warn(`decisions-index: "${e.title}" was removed on our side; left out`);
      else merged.push({ title: e.title, body: e.body, position: merged.length });
      continue;
    }
    if (e.body === ourEntry.body || e.body === baseEntry?.body) continue;
    if (baseEntry && ourEntry.body !== baseEntry.body) warn(`decisions-index: "${e.title}" was changed on both sides; ours kept, merge the text by hand`);
    else ourEntry.body = e.body;
  }
  for (const title of old.keys()) {
    if (mine.has(title) && !theirs.some((e) => e.title === title)) warn(`decisions-index: "${title}" was removed on the other side; kept`);
  }
  return merged;
}

/** The three versions git holds for a conflicted docs/decisions.md: base, ours, theirs. */
function conflictStages(): [string, string, string] {
  const stage = (n: number) => {
    const git = Bun.spawnSync(["git", "show", `:${n}:docs/decisions.md`], { cwd: root });
    if (git.exitCode !== 0) throw new Error(`--merge: no stage ${n} of docs/decisions.md (is a merge conflict in it?)`);
    return git.stdout.toString();
  };
  return [stage(1), stage(2), stage(3)];
}

if (import.meta.main) {
  const before = readFileSync(file, "utf8");
  let parsed: Entry[];
  if (process.argv.includes("--merge")) {
    // After `git merge` stopped on docs/decisions.md: start from the side already filed.
    const [base, ours, theirs] = conflictStages();
    const [filed, other] = ours.includes(START) || !theirs.includes(START) ? [ours, theirs] : [theirs, ours];
    parsed = mergeEntries(parse(filed), parse(other), parse(base));
  } else parsed = parse(before);
  const entries = settle(parsed);
  const after = render(entries);
  const other = entries.filter((e) => areaOf(e.title) === "Other").map((e) => e.title);
  if (other.length) console.error(`decisions-index: no area for ${other.map((t) => `"${t}"`).join(", ")}: give them an \`Area: \` prefix`);
  if (process.argv.includes("--check")) {
    if (after !== before) {
      console.error("decisions-index: docs/decisions.md is not filed: run bun run scripts/decisions-index.ts");
      process.exit(1);
    }
  } else {
    writeFileSync(file, after);
    console.log(
      `decisions-index: ${entries.length} entries in ${new Set(entries.map((e) => areaOf(e.title))).size} areas, numbers up to D${Math.max(...entries.map((e) => e.number!))}`,
    );
  }
}
