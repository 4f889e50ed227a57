// Feature boundaries (docs/decisions.md, "Structure"): a feature under src/features/<name>/ is
// used by other features only through its index.ts; features never import each other in a
// circle; and a feature queries only the tables it owns. This test reads the import lines of
// src/features and fails on a new crossing, naming the file, the import or the cycle.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const FEATURES = resolve(import.meta.dir, "../../src/features");
const SCHEMA = resolve(import.meta.dir, "../../src/db/schema");

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** The feature a path belongs to, or null (src/features/index.ts, the route table, is none). */
function featureOf(path: string): string | null {
  const parts = relative(FEATURES, path).split("/");
  return parts.length > 1 && parts[0] !== ".." ? parts[0]! : null;
}

interface Import {
  from: string;
  spec: string;
  target: string;
  names: string[];
}

const IMPORT =
  /(?:import|export)\s+(?:type\s+)?(?:\{([^}]*)\}|\*\s+as\s+\w+|\w+)?\s*(?:,\s*\{([^}]*)\})?\s*from\s*["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g;

function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(IMPORT)].map((m) => {
    const spec = (m[3] ?? m[4])!;
    const base = resolve(dirname(file), spec);
    const target = existsSync(`${base}.ts`) ? `${base}.ts` : existsSync(join(base, "index.ts")) ? join(base, "index.ts") : base;
    const names = `${m[1] ?? ""},${m[2] ?? ""}`
      .split(",")
      .map((n) =>
        n
          .replace(/^\s*type\s+/, "")
          .split(/\s+as\s+/)[0]!
          .trim(),
      )
      .filter(Boolean);
    return { from: file, spec, target, names };
  });
}

const featureFiles = tsFiles(FEATURES).filter((f) => featureOf(f) !== null);
const allImports = featureFiles.flatMap(importsOf);
const crossFeature = allImports.filter((i) => {
  const to = featureOf(i.target);
  return to !== null && to !== featureOf(i.from);
});
const rel = (p: string) => relative(FEATURES, p);

/** Which feature owns each table of src/db/schema: only it reads or writes the table. */
const TABLE_OWNER: Record<string, string> = {
  gitSyncConnections: "gitsync",
  githubInstallations: "gitsync",
  githubSetupStates: "gitsync",
  githubUserAuthorizations: "gitsync",
  users: "accounts",
  accounts: "accounts",
  memberships: "accounts",
  sessions: "accounts",
  apiKeys: "accounts",
  invites: "accounts",
  notifications: "notifications",
  buckets: "buckets",
  bucketLocks: "buckets",
  bucketVariables: "buckets",
  deletedBuckets: "buckets",
  mailAddresses: "buckets",
  files: "files",
  bucketVersions: "files",
  fileChanges: "files",
  uploadSessions: "files",
  uploadEntries: "files",
  fileLocks: "files",
  mailMessages: "mail",
  mailOutbox: "mail",
  oauthClients: "oauth",
  oauthGrants: "oauth",
  oauthDeviceCodes: "oauth",
  oauthAuthCodes: "oauth",
  oauthTokens: "oauth",
  agentActivity: "agent-auth",
  loginLinks: "agent-auth",
  agentLoginCodes: "agent-auth",
  publications: "publish",
  deploys: "publish",
  deployFiles: "publish",
  siteGateAttempts: "publish",
  siteEmailCodes: "publish",
  siteLeads: "publish",
  autoIndexTemplates: "publish",
  publishSessions: "publish",
  slugHolds: "publish",
  jobs: "jobs",
  customDomains: "domains",

  certificates: "acme",

  analyticsHourly: "analytics",
  analyticsDaily: "analytics",
  analyticsHourlyDims: "analytics",
  analyticsDailyDims: "analytics",
  analyticsTotals: "analytics",
  analyticsVisitors: "analytics",
  analyticsSalts: "analytics",
  analyticsWeeklyDims: "analytics",

  formSubmissions: "forms",
};

/**
 * Queries of another feature's table that predate the boundary rule, each still to be moved
 * behind the owner's index ("feature file -> table"). The list may only shrink: an entry that
 * no longer occurs fails the test too, so it is removed when the query moves.
 */
const KNOWN_TABLE_CROSSINGS = new Set<string>([
  // Bucket deletion (buckets/items.ts) empties every table that holds a bucket's rows.
  "accounts/access-keys.ts -> buckets",
  "accounts/dashboard.ts -> buckets",
  "agent-auth/email-code.ts -> buckets",
  "agent-auth/login-link.ts -> memberships",
  "agent-auth/login-link.ts -> sessions",
  "agent-auth/login-link.ts -> users",
  "buckets/inbound-address.ts -> accounts",
  "buckets/items.ts -> bucketVersions",
  "buckets/items.ts -> deployFiles",
  "buckets/items.ts -> deploys",
  "buckets/items.ts -> fileChanges",
  "buckets/items.ts -> fileLocks",
  "buckets/items.ts -> files",
  "buckets/items.ts -> mailMessages",
  "buckets/items.ts -> publications",
  "buckets/items.ts -> publishSessions",
  "buckets/items.ts -> uploadEntries",
  "buckets/items.ts -> uploadSessions",
  "buckets/locks.ts -> uploadSessions",
  "buckets/publication-state.ts -> publications",
  "files/commit-statements.ts -> buckets",
  "files/uploads/declare.ts -> buckets",
  "files/uploads/lock.ts -> bucketLocks",
  "mail/filing-statements.ts -> mailAddresses",
  "mail/messages.ts -> files",
  "oauth/connections.ts -> apiKeys",
  "oauth/grants.ts -> apiKeys",
  "oauth/grants.ts -> memberships",
  "oauth/grants.ts -> users",
  "oauth/token.ts -> apiKeys",
  "publish/lifecycle.ts -> accounts",
]);

function tableCrossings(): string[] {
  const found = new Set<string>();
  for (const i of allImports) {
    if (!i.target.startsWith(SCHEMA)) continue;
    const feature = featureOf(i.from)!;
    for (const name of i.names) {
      const owner = TABLE_OWNER[name];
      if (owner && owner !== feature) found.add(`${rel(i.from)} -> ${name}`);
    }
  }
  return [...found].sort();
}

/** Each cycle of the feature graph once, as "a -> b -> ... -> a". */
function cycles(edges: Map<string, Set<string>>): string[] {
  const found = new Set<string>();
  const walk = (start: string, at: string, path: string[]) => {
    for (const next of edges.get(at) ?? []) {
      if (next === start) {
        // Rotate so the smallest name leads: the same cycle found from another start is one entry.
        const i = path.indexOf([...path].sort()[0]!);
        const cycle = [...path.slice(i), ...path.slice(0, i)];
        found.add([...cycle, cycle[0]].join(" -> "));
      } else if (!path.includes(next)) walk(start, next, [...path, next]);
    }
  };
  for (const start of edges.keys()) walk(start, start, [start]);
  return [...found].sort();
}

const SRC = resolve(import.meta.dir, "../../src");

/**
 * Files outside src/features that may still reach inside a feature, and why. Everything else
 * (src/sites, src/jobs, src/cli, src/app.ts, ...) imports a feature through its index.ts.
 */
const OUTSIDE_EXCEPTIONS: Record<string, string> = {
  // Deps is built from the features' per-process state classes; the type names them.
  "core/context.ts": "types of the per-process state held in Deps",
  "deps.ts": "builds Deps: constructs each feature's per-process state",
  "runtime.ts": "starts the mail receiver and resolves OAuth tokens at the API edge",
  // The authentication edge resolves credentials with the accounts internals it was built with.
  "http/auth.ts": "resolves API keys and sessions into actors",
  // The CLI client stays light: it must not load the server's publish feature for one rule.
  "cli/client/folder.ts": "the client shares the publish exclusion rule without loading the server",
};

describe("feature boundaries", () => {
  test("the parser sees the features and their crossings (the rules below are not vacuous)", () => {
    const features = new Set(featureFiles.map((f) => featureOf(f)));
    expect(features.size).toBeGreaterThanOrEqual(8);
    expect(crossFeature.length).toBeGreaterThan(20);
    expect(
      cycles(
        new Map([
          ["a", new Set(["b"])],
          ["b", new Set(["c"])],
          ["c", new Set(["a"])],
        ]),
      ),
    ).toEqual(["a -> b -> c -> a"]);
  });

  test("every feature has an index.ts", () => {
    const features = [...new Set(featureFiles.map((f) => featureOf(f)!))];
    expect(features.filter((f) => !existsSync(join(FEATURES, f, "index.ts")))).toEqual([]);
  });

  test("a feature imports another feature only through its index.ts", () => {
    const reaching = crossFeature
      .filter((i) => relative(join(FEATURES, featureOf(i.target)!), i.target) !== "index.ts")
      .map((i) => `${rel(i.from)} imports "${i.spec}" (use "../${featureOf(i.target)}" and export what it needs from its index.ts)`);
    expect(reaching).toEqual([]);
  });

  test("no cycles between features", () => {
    const edges = new Map<string, Set<string>>();
    for (const i of crossFeature) {
      const from = featureOf(i.from)!;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(featureOf(i.target)!);
    }
    expect(cycles(edges)).toEqual([]);
  });

  test("every table has an owning feature", () => {
    const tables = tsFiles(SCHEMA).flatMap((f) => [...readFileSync(f, "utf8").matchAll(/export const (\w+) = sqliteTable\(/g)].map((m) => m[1]!));
    expect(tables.length).toBeGreaterThan(30);
    expect(tables.filter((t) => !(t in TABLE_OWNER))).toEqual([]);
  });

  test("src/ outside features imports a feature only through its index.ts (listed exceptions aside)", () => {
    const outside = tsFiles(SRC).filter((f) => !f.startsWith(FEATURES + "/") && !f.endsWith(".gen.ts"));
    expect(outside.length).toBeGreaterThan(20);
    const reaching = outside
      .flatMap(importsOf)
      .filter((i) => featureOf(i.target) !== null && relative(join(FEATURES, featureOf(i.target)!), i.target) !== "index.ts")
      .map((i) => relative(SRC, i.from))
      .filter((from) => !(from in OUTSIDE_EXCEPTIONS));
    expect([...new Set(reaching)]).toEqual([]);
    // An exception that no longer reaches inside a feature is removed from the list.
    const stillReaching = new Set(
      outside
        .flatMap(importsOf)
        .filter((i) => featureOf(i.target) !== null && relative(join(FEATURES, featureOf(i.target)!), i.target) !== "index.ts")
        .map((i) => relative(SRC, i.from)),
    );
    expect(Object.keys(OUTSIDE_EXCEPTIONS).filter((f) => !stillReaching.has(f))).toEqual([]);
  });

  test("a feature queries only its own tables (known crossings may only go away)", () => {
    const crossings = tableCrossings();
    expect(crossings.filter((c) => !KNOWN_TABLE_CROSSINGS.has(c))).toEqual([]);
    expect([...KNOWN_TABLE_CROSSINGS].filter((c) => !crossings.includes(c))).toEqual([]);
  });
});
