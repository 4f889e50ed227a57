// "The disk is full" has two spellings: the file system's ENOSPC (blob and temp-file writes) and
// SQLite's SQLITE_FULL (a commit that could not grow the database or its WAL). Both mean the
// same to a client: nothing was stored, free space and retry (HTTP 507, SMTP 452).

/** True when `err`, or an error it wraps (drizzle and streams wrap in `cause`), says the disk is full. */
export function isStorageFull(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, errno } = e as { code?: unknown; errno?: unknown };
    if (code === "ENOSPC" || code === "EDQUOT" || code === "SQLITE_FULL") return true;
    if (typeof code === "string" && code.startsWith("SQLITE_FULL")) return true;
    // Bun's writers sometimes report only the errno (28 = ENOSPC on Linux) or the message.
    if (errno === -28 || errno === 28) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === "string" && /\bENOSPC\b|no space left on device|database or disk is full/i.test(message)) return true;
  }
  return false;
}
