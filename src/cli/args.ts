// Flag parsing for `pier` subcommands: `--name value`, `--name=value` and boolean `--name`.
// Server configuration flags (--data-dir, --plans-file, ...) are accepted everywhere and
// passed to loadConfig; anything unknown is an error, never silently ignored.
import { configOptions, ConfigError } from "../config";

export class UsageError extends Error {}

export interface ParsedArgs {
  /** Command options by name (booleans as "true"). */
  options: Record<string, string>;
  /** Config flags for loadConfig. */
  config: Record<string, string>;
}

export function parseArgs(argv: string[], spec: { values?: string[]; flags?: string[] }): ParsedArgs {
  const values = new Set(spec.values ?? []);
  const flags = new Set(spec.flags ?? []);
  const configNames = new Set(configOptions.map((o) => o.name));
  const options: Record<string, string> = {};
  const config: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("--")) throw new UsageError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (flags.has(name)) {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      options[name] = "true";
      continue;
    }
    if (!values.has(name) && !configNames.has(name)) throw new UsageError(`unknown option --${name}`);
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined || (eq === -1 && value.startsWith("--"))) throw new UsageError(`--${name} needs a value`);
    (values.has(name) ? options : config)[name] = value;
  }
  return { options, config };
}

export function required(options: Record<string, string>, name: string): string {
  const v = options[name];
  if (v === undefined || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

export { ConfigError };
