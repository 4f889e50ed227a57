// The `pier` command: server and client side in one binary.
import { serverVersion } from "../core/version";
import { serve } from "./serve";

const usage = `Usage: pier <command> [options]

Commands:
  serve              Run Pier (HTTP, HTTPS, SMTP and the background worker)
  admin ...          Operator commands: users, accounts, plans, API keys (pier admin --help)
  publish DIR        Publish a folder as a website (pier publish --help)
  preview DIR        Publish a folder as a temporary, noindex preview (--expires MINUTES)
  healthcheck        Exit 0 if the local server answers /api/v1/status (for Docker, monitors)
  login [URL]        Connect this computer to a Pier (browser confirmation; --scope, --no-browser)
  logout [URL]       Revoke and forget the saved key
  whoami [URL]       Show the account and scope of the saved key
  version            Print the version

Run "pier serve --help" for the configuration options.
`;

export async function runCli(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case "serve":
      return serve(rest);
    case "admin": {
      const { admin } = await import("./admin");
      const code = await admin(rest);
      process.exit(code);
    }
    case "publish":
    case "preview":
      process.exit(await (await import("./publish")).publishCommand(rest, command));
    case "healthcheck":
      process.exit(await (await import("./healthcheck")).healthcheck(rest));
    case "login":
    case "logout":
    case "whoami": {
      const cmd = await import("./login");
      process.exit(await cmd[command](rest).catch((e: Error) => (console.error(`pier ${command}: ${e.message}`), 1)));
    }
    case "version":
    case "--version":
    case "-v":
      console.log(serverVersion);
      return;
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(usage);
      return;
    default:
      console.error(`pier: unknown command "${command}"\n\n${usage}`);
      process.exit(2);
  }
}
