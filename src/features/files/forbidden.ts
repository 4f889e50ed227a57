// The one list of file types Pier refuses to store (docs/files.md publishes it). Refused at
// upload time by the path's extension or name, and by declared content type; the signed
// storage URL binds the content type so it cannot be swapped afterwards.
import { ApiError } from "../../core/errors";
import { baseName } from "./paths";

/** Executables and installers: a bucket is not a malware drop. */
export const FORBIDDEN_EXTENSIONS = [
  "exe",
  "dll",
  "com",
  "scr",
  "pif",
  "cpl",
  "msi",
  "msp",
  "msix",
  "appx",
  "bat",
  "cmd",
  "vbs",
  "vbe",
  "jse",
  "wsf",
  "wsh",
  "ps1",
  "psm1",
  "hta",
  "lnk",
  "reg",
  "dmg",
  "pkg",
  "mpkg",
  "app",
  "apk",
  "xapk",
  "ipa",
  "deb",
  "rpm",
  "appimage",
  "jar",
  // Secrets: private keys, keystores, credential files.
  "env",
  "pem",
  "key",
  "p12",
  "pfx",
  "jks",
  "keystore",
  "kdbx",
  "ppk",
  "gpg",
  "asc",
] as const;

/** Whole file names that hold secrets whatever their extension. */
export const FORBIDDEN_NAMES = [
  ".env",
  "id_rsa",
  "id_dsa",
  "id_ecdsa",
  "id_ed25519",
  ".netrc",
  ".npmrc",
  ".pypirc",
  ".htpasswd",
  ".git-credentials",
  "credentials.json",
] as const;

export const FORBIDDEN_CONTENT_TYPES = [
  "application/x-msdownload",
  "application/x-msdos-program",
  "application/x-ms-installer",
  "application/x-msi",
  "application/vnd.microsoft.portable-executable",
  "application/x-apple-diskimage",
  "application/vnd.android.package-archive",
  "application/x-pem-file",
  "application/x-pkcs12",
] as const;

const extensions = new Set<string>(FORBIDDEN_EXTENSIONS);
const names = new Set<string>(FORBIDDEN_NAMES);
const types = new Set<string>(FORBIDDEN_CONTENT_TYPES);

/** Why a path or type is forbidden, or null when it is allowed. */
export function forbiddenReason(path: string, contentType?: string): string | null {
  for (const name of effectiveNames(baseName(path))) {
    if (names.has(name) || name.startsWith(".env.")) return `"${name}" files hold secrets`;
    const dot = name.lastIndexOf(".");
    if (dot >= 0) {
      const ext = name.slice(dot + 1);
      if (extensions.has(ext)) return `".${ext}" files are not accepted`;
    }
  }
  const type = contentType?.split(";")[0]!.trim().toLowerCase();
  if (type && types.has(type)) return `content type ${type} is not accepted`;
  return null;
}

/**
 * The names a file system may turn this name into (lower-cased): Windows drops trailing dots
 * and spaces ("evil.exe. " is "evil.exe") and reads "name:stream" as a stream of "name" (NTFS
 * alternate data streams, "evil.exe::$DATA"). Bucket paths refuse trailing dots and spaces
 * already (paths.ts); this keeps the check right for every other caller (site paths, mail).
 */
function effectiveNames(raw: string): string[] {
  const name = raw.toLowerCase();
  const trimmed = name.replace(/[. ]+$/, "");
  const colon = trimmed.indexOf(":");
  const stream = colon > 0 ? trimmed.slice(0, colon).replace(/[. ]+$/, "") : null;
  return [...new Set([name, trimmed, ...(stream ? [stream] : [])])];
}

export function assertAllowedFile(path: string, contentType?: string): void {
  const reason = forbiddenReason(path, contentType);
  if (reason) throw new ApiError("FORBIDDEN_FILE_TYPE", `${path}: ${reason} (see the forbidden file types list in the docs).`, { path, reason });
}

/** A syntactically plausible MIME type (type/subtype with optional parameters). */
export function normalizeContentType(raw: string | undefined | null): string {
  const v = (raw ?? "").trim();
  if (v === "") return "application/octet-stream";
  if (v.length > 200 || !/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*(\s*;\s*[a-z0-9_-]+=("[^"\r\n]*"|[a-z0-9_.+-]+))*$/i.test(v)) {
    throw new ApiError("VALIDATION_FAILED", `"${v.slice(0, 60)}" is not a valid content type (e.g. text/html; charset=utf-8).`, { field: "content_type" });
  }
  return v;
}
