// One error family for all of Pier. Services throw ApiError; only src/http/ turns it into
// an HTTP response (status comes from this catalogue, never from domain code).

export const errorCatalogue = {
  BAD_REQUEST: { status: 400, hint: "The request is malformed. Fix the JSON body or query and retry." },
  VALIDATION_FAILED: { status: 422, hint: "A field has the wrong type or value; see error.details." },
  PAYLOAD_TOO_LARGE: { status: 413, hint: "The request body is larger than Pier accepts." },
  UNAUTHORIZED: { status: 401, hint: "Send a valid API key or access token as `Authorization: Bearer <key>`." },
  FORBIDDEN: {
    status: 403,
    hint: "The credential is valid but does not allow this action. With details.reason plan_limit the account's plan does not (details.entitlement names the limit): details.ask_operator says what to ask the instance's operator, details.operator_hint the command that lifts it.",
  },
  CSRF_FAILED: { status: 403, hint: "The form expired or came from another site. Reload the page and try again." },
  NOT_FOUND: { status: 404, hint: "No such route or resource." },
  METHOD_NOT_ALLOWED: { status: 405, hint: "This path does not accept that HTTP method." },
  BUCKET_NOT_FOUND: { status: 404, hint: "The bucket does not exist or is not visible to this credential." },
  ACCOUNT_NOT_FOUND: { status: 404, hint: "The account does not exist or this credential has no access to it." },
  CONFLICT: { status: 409, hint: "The resource changed or already exists." },
  CONFIRMATION_MISMATCH: { status: 422, hint: "Pass the bucket's `delete.confirmation` phrase exactly." },
  UNPUBLISH_FIRST: { status: 409, hint: "Unpublish the bucket before archiving or deleting it." },
  DATABASE_BUSY_RETRY: { status: 409, hint: "Related changes are still committing; retry after `Retry-After` seconds.", retryAfter: 1 },
  BULK_DELETE_NOT_SUPPORTED: {
    status: 422,
    hint: "Bulk supports archive and unarchive only; delete buckets one at a time with DELETE /api/v1/buckets/:id and its confirmation phrase.",
  },
  BUCKET_DELETE_IN_PROGRESS: { status: 409, hint: "Another bucket is being deleted; wait for it to finish." },
  BUCKET_LOCKED: { status: 423, hint: "Another credential holds a lock on this bucket; wait `Retry-After` seconds or ask its holder.", retryAfter: 30 },
  VISIBILITY_LOCKED: { status: 423, hint: "Visibility changes are locked for this bucket; unlock it in the dashboard." },
  BUCKET_ARCHIVED: { status: 409, hint: "The bucket is archived and read-only; unarchive it first." },
  ACCOUNT_READ_ONLY: { status: 403, hint: "The account is read-only; reads work, writes do not. Do not retry." },
  SIGNUP_CLOSED: { status: 403, hint: "This Pier instance does not accept new sign-ups." },
  INVALID_CREDENTIALS: { status: 401, hint: "Email or password is wrong." },
  TWO_FACTOR_REQUIRED: { status: 401, hint: "Enter the code from your authenticator app." },
  INVALID_TWO_FACTOR_CODE: { status: 401, hint: "The authenticator code is wrong or expired; enter the current 6-digit code." },
  INVALID_CODE: {
    status: 401,
    hint: "The email code is wrong, expired or used up (or the account cannot use email codes). Fall back to the browser device sign-in (pier login) instead of retrying.",
  },
  INVITE_REQUIRED: { status: 403, hint: "Sign-up on this instance needs an invite code; ask the operator (pier admin invite create)." },
  INVITE_INVALID: { status: 403, hint: "The invite code is wrong, used, expired or meant for another email; ask for a new one." },
  TOO_MANY_ATTEMPTS: {
    status: 429,
    hint: "Too many wrong guesses (password, sign-in code, Connection ID) from this address; wait `Retry-After` seconds before trying again.",
  },
  RATE_LIMIT_EXCEEDED: { status: 429, hint: "Too many requests; wait `Retry-After` seconds." },
  INVALID_PATH: { status: 422, hint: 'Use a bucket-relative path: no leading "/", no "..", backslashes, NUL or control characters; see error.details.reason.' },
  FORBIDDEN_FILE_TYPE: {
    status: 422,
    hint: "This file type is refused (executables, installers, secrets); see the forbidden file types at /docs/guides/files#forbidden-file-types.",
  },
  FILE_NOT_FOUND: { status: 404, hint: "No file with that id or path in this bucket; list the bucket's files." },
  FILE_EXISTS: { status: 409, hint: "A file already exists at the target path; pick another path or pass overwrite: true." },
  PATH_CONFLICT: {
    status: 409,
    hint: "A file and a folder cannot share a path (`docs` beside `docs/a.txt`); see error.details.conflicting_path, and rename or delete it first, or in the same reorganize or sync.",
  },
  FILE_LOCKED: {
    status: 423,
    hint: "Another credential holds a lock on this file; wait `Retry-After` seconds (until it expires) or ask its holder.",
    retryAfter: 30,
  },
  FILE_TOO_LARGE: { status: 413, hint: "The file is larger than Pier accepts for this operation." },
  MCP_ANSWER_TOO_LARGE: {
    status: 413,
    hint: "The tool calls of this one MCP request already answered as much as one request may; send the remaining calls in another request.",
  },
  NOT_TEXT_FILE: { status: 422, hint: "append_text works on UTF-8 text files only." },
  VERSION_NOT_FOUND: { status: 404, hint: "No such version in this bucket; list the bucket's versions." },
  TEMPLATE_NOT_FOUND: { status: 404, hint: "No such template; GET /api/v1/buckets/templates lists them." },
  UPLOAD_SESSION_NOT_FOUND: { status: 404, hint: "No such upload session for this bucket and credential; create a new one." },
  UPLOAD_SESSION_CLOSED: { status: 409, hint: "The upload session was already finalized or cancelled; create a new session." },
  UPLOAD_SESSION_EXPIRED: { status: 409, hint: "The upload session expired (its lock was released); create a new session and upload again." },
  UPLOAD_INCOMPLETE: { status: 409, hint: "Some expected files were not uploaded yet; PUT them (see error.details.missing) and finalize again." },
  UPLOAD_NOT_FOUND: { status: 404, hint: "The upload (signed blob id or descriptor) is unknown, expired or already used; request a new descriptor." },
  UPLOAD_ALREADY_FINALIZED: { status: 409, hint: "This upload was already committed; request a new descriptor to upload again." },
  BLOB_NOT_UPLOADED: { status: 409, hint: "The bytes were not uploaded yet: PUT them to upload.url with upload.headers first." },
  UPLOAD_SIZE_MISMATCH: { status: 400, hint: "The body size differs from the declared byte_size; nothing was stored. Upload the exact bytes." },
  UPLOAD_CHECKSUM_MISMATCH: { status: 400, hint: "The body's MD5 or SHA-256 differs from the declared checksum; nothing was stored." },
  UPLOAD_HEADER_MISMATCH: { status: 400, hint: "Send the upload.headers returned with the descriptor verbatim (Content-Type, Content-MD5)." },
  STORAGE_URL_INVALID: { status: 403, hint: "The storage URL is malformed or its signature does not match; request a new one from the API." },
  STORAGE_URL_EXPIRED: { status: 403, hint: "The storage URL expired; request a new descriptor or download link from the API." },
  UPLOAD_RATE_LIMIT_EXCEEDED: { status: 429, hint: "Too many upload-control calls; wait `Retry-After` seconds." },
  PUBLICATION_UPGRADE_REQUIRED: {
    status: 402,
    hint: "Password and require_email sites need a plan with protected sites: publish a preview with that access (POST .../publication/preview), upgrade, or publish with access_mode public. See error.details.choices.",
  },
  PUBLICATION_NOT_FOUND: { status: 404, hint: "No such publication for this credential; GET /api/v1/publications lists them." },
  PUBLICATION_BUSY: { status: 409, hint: "The publication is being unpublished; wait until its status is unpublished, then publish again." },
  NOTHING_TO_RETRY: { status: 409, hint: "Retry re-runs a failed (or stuck) build; this publication is not in that state." },
  SLUG_TAKEN: { status: 409, hint: "Another site already uses that slug; pick another." },
  PUBLISH_SESSION_NOT_FOUND: { status: 404, hint: "No such publish session for this account; create one with POST /api/v1/publish_sessions." },
  PUBLISH_SESSION_STALE: {
    status: 409,
    hint: "The bucket changed since the publish session was created; recreate the session from the same manifest and retry once.",
  },
  PUBLISH_SESSION_EXPIRED: { status: 409, hint: "The publish session expired; recreate it from the same manifest and retry once." },
  PUBLISH_SESSION_NOT_PENDING: { status: 409, hint: "The publish session was already finalized; recreate it to publish again." },
  PUBLISH_FILES_MISSING: {
    status: 503,
    hint: "Some declared files are not in storage yet: PUT them to their upload.url (POST .../uploads/refresh for new URLs), then finalize again.",
  },
  PUBLISH_RATE_LIMIT_EXCEEDED: { status: 429, hint: "Too many publishes for this account; wait `Retry-After` seconds." },
  INTERNAL: { status: 500, hint: "Pier hit an unexpected error. Retry; if it persists, report the request_id." },
  JSON_TOO_DEEP: { status: 400, hint: "The JSON body nests arrays and objects too deeply (see details.max_depth); flatten it." },
  BODY_TIMEOUT: { status: 408, hint: "The request body arrived too slowly and was cut off; send it again in one go." },
  REAUTHENTICATION_REQUIRED: {
    status: 403,
    hint: "Account-security actions in a browser need the password entered in the last 10 minutes: confirm it at error.details.reauthenticate_url, then retry.",
  },
  GATE_MAIL_RATE_LIMITED: {
    status: 429,
    hint: "Too many access-code emails for this site or this address; wait `Retry-After` seconds before asking for another code.",
    retryAfter: 600,
  },
  USER_NOT_FOUND: { status: 404, hint: "No user with that email on this instance; check the address." },
  API_KEY_NOT_FOUND: { status: 404, hint: "No such API key in this account; list the account's keys." },
  CONNECTION_NOT_FOUND: {
    status: 404,
    hint: "The Connection ID or connected app is unknown, expired, already used or not yours; start the login again from your terminal.",
  },
  LOGIN_LINK_NOT_FOUND: { status: 404, hint: "The sign-in link is invalid, expired or already used; ask your agent for a new one, or sign in at /signin." },
  DEPLOY_NOT_FOUND: { status: 404, hint: "No such deploy of this publication; list the publication's deploys." },
  CUSTOM_DOMAIN_NOT_FOUND: { status: 404, hint: "No such custom domain on this bucket; GET /api/v1/buckets/:bucket_id/custom_domains lists them." },
  CUSTOM_DOMAIN_LIMIT_REACHED: {
    status: 403,
    hint: "The account's plan allows no more custom domains (limits.max_custom_domains); remove one, or ask the operator for a plan with more (details.ask_operator, details.operator_hint).",
  },
  CUSTOM_DOMAIN_INVALID: {
    status: 422,
    hint: "The hostname is not one Pier can serve: see details.reason (ip_literal, too_long, label_too_long, underscore, wildcard, invalid_characters, single_label, public_suffix) and /docs/guides/custom-domains#hostnames-pier-refuses.",
  },
  CUSTOM_DOMAIN_RESERVED: {
    status: 422,
    hint: "The hostname is Pier's own (the sites domain or a name under it, the API host, the mail host): use a hostname of your own; see details.reason.",
  },
  CUSTOM_DOMAIN_PUBLISH_FIRST: {
    status: 409,
    hint: "Publish the bucket first (POST /api/v1/buckets/:id/publication); a custom domain serves the bucket's published site.",
  },
  USER_DISABLED: { status: 403, hint: "An instance admin disabled this user; ask them to enable it again (pier admin user enable)." },
  DEPLOY_COLLECTED: {
    status: 409,
    hint: "That deploy fell out of the kept history (limits.deploy_history) and its files were freed; roll back to a deploy whose rollback_available is true, or publish again.",
  },
  ROLLBACK_NOT_POSSIBLE: {
    status: 409,
    hint: "The site cannot be rolled back now (details.reason: not_published, build_pending or preview); wait for the build to finish, or publish first.",
  },

  FORM_NOT_FOUND: {
    status: 404,
    hint: "This site offers no form by that name; the owner configures forms in bucket.metadata.publication_forms (/docs/guides/forms#configuration).",
  },
  FORM_FIELDS_MISSING: { status: 422, hint: "Fill in every required field named in error.details.missing and send the form again." },
  FORM_CROSS_ORIGIN: { status: 403, hint: "Forms accept posts only from pages of the same site (same Origin); send the form from the site itself." },
  FORM_CHALLENGE_FAILED: {
    status: 403,
    hint: "The anti-spam check failed (form sent too fast, or the proof-of-work was missing or wrong). Reload the page and send it again.",
  },
  FORM_UNSUPPORTED_TYPE: { status: 415, hint: "Send the form as application/x-www-form-urlencoded, multipart/form-data (no files) or application/json." },
  FORM_RATE_LIMITED: { status: 429, hint: "Too many submissions from this address or to this form; wait `Retry-After` seconds." },
  FORM_QUOTA_EXCEEDED: {
    status: 403,
    hint: "The site's owner has used this month's form submission quota (their plan's form_submission_quota); nothing was stored.",
  },
  FORM_SUBMISSION_NOT_FOUND: { status: 404, hint: "No such form submission in this bucket; list them with GET /api/v1/buckets/:id/form_submissions." },
  GIT_SYNC_NOT_CONNECTED: { status: 404, hint: "The bucket has no git sync connection; connect one at github_sync_setup.settings_url first." },
  GIT_SYNC_ALREADY_CONNECTED: { status: 409, hint: "The bucket is already connected to a repository; disconnect it first (DELETE .../github_sync)." },
  GIT_SYNC_UNAVAILABLE: { status: 403, hint: "Git sync is not available for this bucket; github_sync_setup.blocked_reason says why." },
  GIT_SYNC_CREDENTIAL_REQUIRED: {
    status: 409,
    hint: "Save the repository URL and its credential on the bucket's Git page (github_sync_setup.settings_url); the API never takes git credentials.",
  },
  GIT_SYNC_BUCKET_NOT_EMPTY: { status: 409, hint: "Import needs an empty bucket: choose direction export, or empty the bucket first." },
  GIT_REMOTE_REFUSED: {
    status: 422,
    hint: "The repository URL is not allowed: use https:// (plain http:// only when the operator allows it) and no credentials in the URL.",
  },
  GIT_SYNC_CONFLICT_CHOICE: {
    status: 422,
    hint: "Choose a side (bucket or repository) for every conflicting path listed in github_sync.conflicts, and only for those.",
  },
  GIT_WEBHOOK_SIGNATURE_INVALID: { status: 401, hint: "The webhook's X-Hub-Signature-256 does not match the connection's webhook secret; nothing ran." },
  GITHUB_NOT_CONFIGURED: {
    status: 409,
    hint: "This instance has no GitHub App; the operator sets one up (/docs/guides/git-sync#github-app), or connect any git host by URL on the Git page.",
  },
  GITHUB_SETUP_INVALID: {
    status: 400,
    hint: "The GitHub installation round trip was not started from this browser session, was already used, or expired; start again from the bucket's Git page.",
  },
  GITHUB_INSTALLATION_NOT_VISIBLE: {
    status: 403,
    hint: "GitHub did not confirm that the signed-in GitHub user can see this installation; nothing was linked. Install or authorize from the bucket's Git page.",
  },
  GITHUB_INSTALLATION_REQUIRED: {
    status: 409,
    hint: "No linked GitHub App installation grants that repository or account: install the app from github_sync_setup.settings_url and give it access.",
  },
  GITHUB_REPOSITORY_CREATE_UNAVAILABLE: {
    status: 409,
    hint: "GitHub refused to let the app create the repository: the operator's GitHub App needs the Administration: write repository permission (/docs/guides/git-sync#operator-set-up-step-by-step).",
  },
  GITHUB_UNAVAILABLE: { status: 502, hint: "GitHub did not answer as expected; retry later (details.reason says what it said)." },
  GITHUB_AUTHORIZATION_REQUIRED: {
    status: 409,
    hint: "Pier holds no valid GitHub authorization for that personal account (never given, expired or revoked): authorize the app again on the bucket's Git page (details.settings_url). Nothing was created.",
  },

  BACKUP_FAILED: {
    status: 500,
    hint: "The backup could not be written (target not writable or full); no complete-looking backup was left. See /docs/guides/operations#backups.",
  },
  BACKUP_INVALID: { status: 422, hint: "The folder is not a complete Pier backup, or it is damaged; run `pier backup verify FOLDER`." },
  BACKUP_ENTRY_TOO_LARGE: {
    status: 422,
    hint: "The archive's manifest.json or secret.key is far larger than Pier ever writes: it is not a Pier backup (or was tampered with). Nothing was restored.",
  },
  BACKUP_TOO_NEW: {
    status: 409,
    hint: "The backup was written by a newer Pier (its database has migrations this one does not know): restore it with that version or a later one. Nothing was written.",
  },
  RESTORE_TARGET_NOT_EMPTY: { status: 409, hint: "Restore into a new or empty data dir, or pass --force to replace the database, blobs and key of this one." },
  DATA_DIR_IN_USE: {
    status: 409,
    hint: "A running Pier serves this data dir with an older database than this command's Pier: restart the server with this version (it migrates), then run the command again.",
  },
  DATA_DIR_TOO_NEW: {
    status: 409,
    hint: "The data dir was written by a newer Pier: run that version (or newer), or restore a backup taken before the upgrade.",
  },

  STORAGE_FULL: {
    status: 507,
    hint: "The server's disk is full; nothing was stored. Retry after `Retry-After` seconds (the operator must free space).",
    retryAfter: 60,
  },
  PASSWORD_CHECKS_BUSY: {
    status: 503,
    hint: "Pier is checking many passwords at once right now; send the same request again after `Retry-After` seconds (this try was not counted as a wrong password).",
    retryAfter: 5,
  },
  NOT_READY: { status: 503, hint: "The server cannot take writes right now (see error.details.checks); retry later.", retryAfter: 5 },
} as const satisfies Record<string, { status: number; hint: string; retryAfter?: number }>;

export type ErrorCode = keyof typeof errorCatalogue;

/** Codes that always tell the client when to retry (catalogue entries with a default `retryAfter`). */
const retryDefault = (code: ErrorCode): number | undefined => (errorCatalogue[code] as { retryAfter?: number }).retryAfter;

export class ApiError extends Error {
  readonly details?: Record<string, unknown>;
  /** Seconds the client should wait before retrying (429, busy 409, lock 423): the Retry-After header. */
  readonly retryAfter?: number;

  constructor(
    readonly code: ErrorCode,
    message?: string,
    details?: Record<string, unknown>,
    retryAfter?: number,
  ) {
    super(message ?? errorCatalogue[code].hint);
    this.name = "ApiError";
    // Lock and busy answers must carry Retry-After whoever throws them: fall back to the
    // details' value, then the catalogue default, and mirror it into details.retry_after
    // (clients read either, as the spec says).
    const fromDetails = typeof details?.retry_after === "number" ? details.retry_after : undefined;
    const seconds = retryAfter ?? fromDetails ?? retryDefault(code);
    this.retryAfter = seconds === undefined ? undefined : Math.max(1, Math.ceil(seconds));
    this.details =
      this.retryAfter !== undefined && retryDefault(code) !== undefined && fromDetails === undefined ? { ...details, retry_after: this.retryAfter } : details;
  }

  get status(): number {
    return errorCatalogue[this.code].status;
  }
}
