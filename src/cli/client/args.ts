// The one argument parser of every `pier` command: `--name value`, `--name=value`, boolean
// `--name`, positionals, and `--help`/`-h` anywhere. Each command declares its options once, and
// the same declaration prints its help, so a command cannot accept an option its help hides.
// Unknown options are errors that come with the command's usage, never silently ignored.
import { configOptions } from "../../config";

export interface OptionSpec {
  name: string;
  /** Placeholder of the value (`DIR`, `ID`); absent for a boolean flag. */
  value?: string;
  help: string;
}

export interface CommandSpec {
  /** The words after `pier`: "publish", "admin user create". */
  name: string;
  /** One line for the command lists. */
  summary: string;
  /** Usage line(s) after "pier": "publish DIR [options]". */
  usage: string;
  /** Positionals by name, in order; optional ones may be left out (all after the first optional). */
  positionals?: Array<{ name: string; required?: boolean }>;
  options?: OptionSpec[];
  /** Accepts every `pier serve` configuration flag (--data-dir, --smtp-port, ...). */
  config?: boolean;
  /** Paragraphs printed after the options. */
  details?: string;
}

export class UsageError extends Error {}

export interface Parsed {
  positionals: Record<string, string>;
  /** Command options by name (flags as "true"). */
  options: Record<string, string>;
  /** Server configuration flags for loadConfig. */
  config: Record<string, string>;
  help: boolean;
}

const configNames = () => new Set(configOptions.map((o) => o.name));

export function parseCommand(spec: CommandSpec, argv: string[]): Parsed {
  const byName = new Map((spec.options ?? []).map((o) => [o.name, o]));
  const config = spec.config ? configNames() : new Set<string>();
  const out: Parsed = { positionals: {}, options: {}, config: {}, help: false };
  const loose: string[] = [];
  if (argv.includes("--help") || argv.includes("-h")) return { ...out, help: true };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      loose.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      loose.push(arg);
      continue;
    }
    if (!arg.startsWith("--")) throw new UsageError(`unknown option ${arg}`);
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const option = byName.get(name);
    if (option && !option.value) {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      out.options[name] = "true";
      continue;
    }
    if (!option && !config.has(name)) throw new UsageError(`unknown option --${name}`);
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined || (eq === -1 && value.startsWith("--"))) throw new UsageError(`--${name} needs a value`);
    (option ? out.options : out.config)[name] = value;
  }
  const wanted = spec.positionals ?? [];
  if (loose.length > wanted.length) throw new UsageError(`unexpected argument "${loose[wanted.length]}"`);
  wanted.forEach((p, i) => {
    if (loose[i] !== undefined) out.positionals[p.name] = loose[i]!;
    else if (p.required) throw new UsageError(`missing ${p.name}`);
  });
  return out;
}

export function required(options: Record<string, string>, name: string): string {
  const v = options[name];
  if (v === undefined || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

function optionRows(options: OptionSpec[]): string[] {
  const left = options.map((o) => `  --${o.name}${o.value ? ` ${o.value}` : ""}`);
  const width = Math.min(28, Math.max(...left.map((l) => l.length)) + 2);
  return options.map((o, i) => {
    const l = left[i]!;
    return l.length + 1 > width ? `${l}\n${" ".repeat(width)}${o.help}` : `${l.padEnd(width)}${o.help}`;
  });
}

/** The text `pier <command> --help` prints. */
export function helpText(spec: CommandSpec): string {
  const parts = [
    `Usage: ${spec.usage
      .split("\n")
      .map((l, i) => (i ? `       ${l}` : `pier ${l}`))
      .join("\n")}`,
    "",
    spec.summary,
  ];
  if (spec.options?.length) parts.push("", "Options:", ...optionRows(spec.options));
  if (spec.config) parts.push("", "Also every `pier serve` option (--data-dir, --smtp-port, ...): see pier serve --help.");
  if (spec.details) parts.push("", spec.details.trimEnd());
  return parts.join("\n") + "\n";
}

/** What a usage error prints: the problem, then the usage (the whole help when it is short). */
export function usageErrorText(spec: CommandSpec, message: string): string {
  const help = helpText(spec);
  const shown = help.split("\n").length <= 30 ? help : `Usage: pier ${spec.usage.split("\n")[0]}\nRun "pier ${spec.name} --help" for the options.\n`;
  return `pier ${spec.name}: ${message}\n\n${shown}`;
}
