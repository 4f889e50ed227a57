// How a failed `pier` command reports: one line with the message and a stable code, one line
// that says what to do next, and the stack only with --debug (or PIER_DEBUG=1). A stack trace
// tells a user nothing they can act on; the code and the next step do.
import { UsageError, usageErrorText, type CommandSpec } from "./args";

/** A failure the CLI understands: exit 1 (or `exitCode`), message, code, next step. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly next?: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** An error answer from a Pier server (the `{ error: { code, message, docs_url } }` envelope). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly docsUrl?: string,
  ) {
    super(message);
  }
}

/** What to do next for the server answers a CLI user meets most; else the code's docs page. */
function nextStepFor(e: ApiFailure, baseUrl?: string): string | undefined {
  const login = `pier login${baseUrl ? ` ${baseUrl}` : ""}`;
  if (e.status === 401) return `The key was revoked, expired or mistyped: run ${login} (or set a valid PIER_API_KEY).`;
  if (e.code === "FORBIDDEN" && e.details.required_scope)
    return `The key lacks ${e.details.required_scope}: run ${login} --scope ${e.details.required_scope}, or ask the account owner.`;
  if (e.code === "BUCKET_NOT_FOUND") return "Check the bucket id (--bucket), or leave it out to use the bucket titled like the folder.";
  if (e.code === "PUBLICATION_NOT_FOUND") return "Nothing is published for this bucket; there is nothing to take down.";
  if (e.docsUrl) return `See ${e.docsUrl}`;
  return undefined;
}

export function isDebug(env: Record<string, string | undefined> = process.env): boolean {
  return env.PIER_DEBUG === "1" || env.PIER_DEBUG === "true";
}

/**
 * Print `e` for `pier <command>` and return the exit code. Usage errors exit 2 with the usage;
 * anything unexpected is named as a bug (exit 1) and its stack shown only when debugging.
 */
export function reportFailure(
  e: unknown,
  command: string,
  opts: { spec?: CommandSpec; debug: boolean; baseUrl?: string; err?: (text: string) => void },
): number {
  const err = opts.err ?? ((t: string) => process.stderr.write(t.endsWith("\n") ? t : `${t}\n`));
  if (e instanceof UsageError) {
    err(opts.spec ? usageErrorText(opts.spec, e.message) : `pier ${command}: ${e.message}\nRun "pier --help" for the commands.`);
    return 2;
  }
  let text: string;
  let code = 1;
  if (e instanceof CliError) {
    text = `pier ${command}: ${e.message} (${e.code})${e.next ? `\n${e.next}` : ""}`;
    code = e.exitCode;
  } else if (e instanceof ApiFailure) {
    const next = nextStepFor(e, opts.baseUrl);
    text = `pier ${command}: ${e.message} (${e.code})${next ? `\n${next}` : ""}`;
  } else if (typeof (e as { error?: unknown })?.error === "string") {
    // An OAuth error answer (oauth4webapi's ResponseBodyError): the server's words, not a bug.
    const o = e as { error: string; error_description?: string };
    text = `pier ${command}: the server refused: ${o.error_description ?? o.error} (OAUTH_${o.error.toUpperCase()})\nRun the command again; if it keeps failing, check the server's log.`;
  } else {
    text =
      `pier ${command}: ${(e as Error)?.message ?? String(e)} (INTERNAL_ERROR)\n` +
      (opts.debug ? "" : "This looks like a bug in the CLI; run the command again with --debug to see where it happened, and report it.");
  }
  if (opts.debug && e instanceof Error && e.stack) text += `\n${e.stack}`;
  err(text);
  return code;
}
