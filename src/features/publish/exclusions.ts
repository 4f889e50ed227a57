// What a publication never contains. The build filters the bucket through isExcludedFromPublish
// before writeDeploy, writeDeploy filters again, and the site server refuses the same paths, so
// a private runtime file can never be listed or served even if a caller forgets a step.
import { FORBIDDEN_EXTENSIONS } from "../files/forbidden";

const LOCKFILES = new Set([
  "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb", "bun.lock",
  "composer.lock", "gemfile.lock", "poetry.lock", "pipfile.lock", "cargo.lock", "go.sum", "deno.lock",
  "packages.lock.json", "pubspec.lock", "mix.lock", "flake.lock", "uv.lock", "pdm.lock",
]);

/**
 * Executable, installer and shell-script payloads (by extension, lower-cased): everything
 * buckets refuse to store (files/forbidden.ts, the one list of executables and secrets) plus
 * scripts and packages a bucket may keep but a public site must not hand out.
 */
const EXECUTABLE_EXTENSIONS = new Set<string>([
  ...FORBIDDEN_EXTENSIONS,
  "aab", "snap", "flatpak", "run", "sh", "bash", "zsh", "csh", "ksh", "fish", "gadget", "command", "workflow",
]);

/** True when `path` (site- or bucket-relative, "/"-separated) must never be published. */
export function isExcludedFromPublish(path: string): boolean {
  const segments = path.split("/").filter(Boolean);
  if (segments.length === 0) return true;
  if (segments[0] === ".workers") return true;
  for (const s of segments) {
    const lower = s.toLowerCase();
    if (lower === "node_modules") return true;
    if (lower.startsWith(".env")) return true; // the spec's `.env*`: .env, .env.local, .envrc
  }
  const name = segments[segments.length - 1]!.toLowerCase();
  if (LOCKFILES.has(name)) return true;
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
