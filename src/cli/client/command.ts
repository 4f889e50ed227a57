// What every `pier` command module exports: its declaration (options, help) and a run function
// that gets the parsed arguments. Failures are thrown (CliError, ApiFailure, UsageError) and
// reported in one place (errors.ts), so every command fails the same way.
import type { CommandSpec, Parsed } from "./args";

export interface RunContext {
  /** --debug or PIER_DEBUG=1: failures print their stack. */
  debug: boolean;
  /** The server the command talks to, once known (error hints name it). */
  baseUrl?: string;
}

export interface Command {
  spec: CommandSpec;
  run(args: Parsed, ctx: RunContext): Promise<number>;
}
