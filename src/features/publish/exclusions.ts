// What a publication never contains: the ONE list for every way of publishing (build job, publish
// sessions, previews). The build filters the bucket through isExcludedFromPublish (and the
// bucket's private `_email/` folder whatever the publication root) before writeDeploy,
// writeDeploy filters again, and the site server refuses the same paths, so a secret or a
// private file can never be listed or served even if a caller forgets a step.
import { FORBIDDEN_EXTENSIONS, FORBIDDEN_NAMES } from "../files";

const LOCKFILES = new Set([
  "package-lock.json",
  "npm-shrinkwrap.json",
  "yarn.lock",
  "pnpm-lock.yaml",
  "bun.lockb",
  "bun.lock",
  "composer.lock",
  "gemfile.lock",
  "poetry.lock",
  "pipfile.lock",
  "cargo.lock",
  "go.sum",
  "deno.lock",
  "packages.lock.json",
  "pubspec.lock",
  "mix.lock",
  "flake.lock",
  "uv.lock",
  "pdm.lock",
]);

/**
 * Executable, installer and shell-script payloads (by extension, lower-cased): everything
 * buckets refuse to store (files/forbidden.ts, the one list of executables and secrets) plus
 * scripts and packages a bucket may keep but a public site must not hand out.
 */
const EXECUTABLE_EXTENSIONS = new Set<string>([
  ...FORBIDDEN_EXTENSIONS,
  "aab",
  "snap",
  "flatpak",
  "run",
  "sh",
  "bash",
  "zsh",
  "csh",
  "ksh",
  "fish",
  "gadget",
  "command",
  "workflow",
]);

/**
 * Folders that hold secrets or a whole history (lower-cased, at any depth): version control
 * (a `.git/config` may carry a token in its remote URL, `.git/objects` every past secret),
 * credential folders, and Pier's private folders (`_email/`: received mail, see isMailPath).
 */
const SECRET_FOLDERS = new Set([".git", ".hg", ".svn", ".bzr", "_darcs", ".ssh", ".aws", ".gnupg", ".docker", ".kube", "_email"]);

/**
 * Whole file names (lower-cased, at any depth) that carry credentials or leak the server's
 * layout: everything buckets refuse to store (files/forbidden.ts) plus package-manager and
 * database credential files, web-server auth files, editor swap files and Finder metadata.
 */
const SECRET_NAMES = new Set<string>([
  ...FORBIDDEN_NAMES,
  ".gitconfig",
  ".git-credentials",
  ".npmrc",
  ".yarnrc",
  ".yarnrc.yml",
  ".pypirc",
  ".netrc",
  "_netrc",
  ".pgpass",
  ".my.cnf",
  ".htpasswd",
  ".htaccess",
  ".ds_store",
  "thumbs.db",
]);
const SECRET_NAME_PATTERNS = [
  /^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$/, // SSH private keys (the .pub halves are public)
  /\.(swp|swo)$/, // vim swap files: a copy of whatever was being edited
];

/** True when `path` (site- or bucket-relative, "/"-separated) must never be published. */
export function isExcludedFromPublish(path: string): boolean {
  const segments = path.split("/").filter(Boolean);
  if (segments.length === 0) return true;
  if (segments[0] === ".workers") return true;
  for (const s of segments) {
    // Trailing dots and spaces are dropped by Windows file systems: ".git." is ".git" there.
    const lower = s.toLowerCase().replace(/[. ]+$/, "");
    if (lower === "node_modules" || SECRET_FOLDERS.has(lower) || SECRET_NAMES.has(lower)) return true;
    if (lower.startsWith(".env")) return true; // the spec's `.env*`: .env, .env.local, .envrc
  }
  const name = segments[segments.length - 1]!.toLowerCase().replace(/[. ]+$/, "");
  if (LOCKFILES.has(name)) return true;
  if (SECRET_NAME_PATTERNS.some((re) => re.test(name))) return true;
  const dot = name.lastIndexOf(".");
  if (dot > 0 && EXECUTABLE_EXTENSIONS.has(name.slice(dot + 1))) return true;
  return false;
}

/**
 * Normalize a site-relative path for storage: "/"-separated, no leading slash, no empty, "." or
 * ".." segments, no backslash, NUL or control characters. Returns null when the path is unusable.
 */
export function normalizeSitePath(raw: string): string | null {
  if (raw.length === 0 || raw.length > 1024) return null;
  if (/[\\\u0000-\u001f\u007f]/.test(raw)) return null;
  const segments = raw.split("/").filter((s) => s !== "");
  if (segments.length === 0) return null;
  if (segments.some((s) => s === "." || s === "..")) return null;
  return segments.join("/");
}
