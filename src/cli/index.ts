// The `pier` command: server and client side in one binary. Every command parses its arguments
// with the one parser (client/args.ts), answers --help, and fails through one reporter
// (client/errors.ts): message, code and next step, the stack only with --debug.
import { usePrivateUmask } from "../core/data-dir-modes";
import { serverVersion } from "../core/version";
import { helpText, parseCommand, type CommandSpec } from "./client/args";
import type { Command, RunContext } from "./client/command";
import { isDebug, reportFailure } from "./client/errors";

const usage = `Usage: pier <command> [options]

Server:
  serve              Run Pier (HTTP, HTTPS, SMTP and the background worker)
  admin ...          Operator commands: users, accounts, plans, API keys, mail (pier admin --help)
  healthcheck        Exit 0 if the local server answers /api/v1/status (for Docker, monitors)
  backup --to DIR    Back up the data dir while Pier runs (pier backup verify FOLDER checks one)
  restore FOLDER     Rebuild a data dir from a backup (--data-dir NEW [--force])

Client (after pier login, no --url or --key needed):
  login [URL]        Connect this computer to a Pier (browser confirmation; --scope, --no-browser)
  whoami [URL]       Show the account and scope of the saved key
  logout [URL]       Revoke and forget the saved key
  publish DIR        Publish a folder as a website
  preview DIR        Publish a folder as a temporary, noindex preview (--expires MINUTES)
  unpublish DIR      Take the folder's site offline (--preview: only its preview)
  push DIR           Copy a folder into a bucket's files without publishing
  deploys [DIR]      List the folder's site deploys (which is live, which can be rolled back to)
  rollback [ID]      Serve an earlier deploy at once (default: the one before the live one)

  version            Print the version

Every command answers --help. Add --debug to see where a failure happened.
`;

/** Client commands, loaded on use so `pier serve` starts without them. */
const clientCommands: Record<string, () => Promise<Command>> = {
  login: async () => (await import("./login")).login,
  logout: async () => (await import("./login")).logout,
  whoami: async () => (await import("./login")).whoami,
  publish: async () => (await import("./publish")).publish,
  preview: async () => (await import("./publish")).preview,
  unpublish: async () => (await import("./unpublish")).unpublish,
  push: async () => (await import("./push")).push,
  deploys: async () => (await import("./deploys")).deploys,
  rollback: async () => (await import("./deploys")).rollback,
  restore: async () => (await import("./backup")).restore,
};

const versionSpec: CommandSpec = { name: "version", summary: "Print the version of this pier binary.", usage: "version" };

/** Parse, answer --help, run, and report any failure; resolves to the exit code. */
export async function runCommand(command: Command, argv: string[], debug: boolean): Promise<number> {
  const ctx: RunContext = { debug };
  try {
    const args = parseCommand(command.spec, argv);
    if (args.help) {
      process.stdout.write(helpText(command.spec));
      return 0;
    }
    return await command.run(args, ctx);
  } catch (e) {
    return reportFailure(e, command.spec.name, { spec: command.spec, debug, baseUrl: ctx.baseUrl });
  }
}

export async function runCli(argv: string[]): Promise<void> {
  const debug = argv.includes("--debug") || isDebug();
  const [name, ...rest] = argv.filter((a) => a !== "--debug");
  // The commands that write a data dir or a backup create their files for Pier's user only (D262).
  if (name === "serve" || name === "admin" || name === "backup" || name === "restore") usePrivateUmask();
  // `pier backup verify FOLDER` is its own command; `pier backup --to DIR` the other.
  if (name === "backup") {
    const { backup, backupVerify } = await import("./backup");
    process.exit(rest[0] === "verify" ? await runCommand(backupVerify, rest.slice(1), debug) : await runCommand(backup, rest, debug));
  }
  const load = name !== undefined ? clientCommands[name] : undefined;
  if (load) process.exit(await runCommand(await load(), rest, debug));
  switch (name) {
    case "serve":
      return (await import("./serve")).serve(rest, debug);
    case "admin":
      process.exit(await (await import("./admin")).admin(rest, undefined, debug));
    case "healthcheck":
      process.exit(await (await import("./healthcheck")).healthcheck(rest));
    case "version":
    case "--version":
    case "-v":
      process.exit(await runCommand({ spec: versionSpec, run: async () => (console.log(serverVersion), 0) }, rest, debug));
    case "help":
      // `pier help publish` is `pier publish --help`.
      if (rest[0]) return runCli([rest[0], "--help"]);
    // falls through
    case undefined:
    case "--help":
    case "-h":
      process.stdout.write(usage);
      return;
    default:
      process.stderr.write(`pier: unknown command "${name}"\n\n${usage}`);
      process.exit(2);
  }
}
