// The one argument parser of every `pier` command: options, flags, server config flags and
// positionals told apart; unknown or malformed input refused with a UsageError; help text made
// from the same declaration, so every declared option is documented.
import { describe, expect, test } from "bun:test";
import { helpText, parseCommand, usageErrorText, UsageError, type CommandSpec } from "../../src/cli/client/args";
import { busyPortMessage } from "../../src/cli/serve";
import { humanBytes, progressLine } from "../../src/cli/client/folder";
import { slugNotice } from "../../src/cli/publish";

const spec: CommandSpec = {
  name: "thing",
  summary: "Does a thing.",
  usage: "thing DIR [options]",
  config: true,
  positionals: [{ name: "DIR", required: true }],
  options: [
    { name: "email", value: "EMAIL", help: "An address" },
    { name: "plan", value: "PLAN", help: "A plan" },
    { name: "off", help: "Turn it off" },
  ],
};

describe("parseCommand", () => {
  test("options, booleans, config flags and positionals are told apart", () => {
    const r = parseCommand(spec, ["site", "--email", "a@b.c", "--off", "--data-dir=/tmp/x", "--plan=pro"]);
    expect(r.positionals).toEqual({ DIR: "site" });
    expect(r.options).toEqual({ email: "a@b.c", off: "true", plan: "pro" });
    expect(r.config).toEqual({ "data-dir": "/tmp/x" });
    expect(r.help).toBe(false);
  });

  test("unknown or malformed input is a UsageError naming the problem", () => {
    expect(() => parseCommand(spec, ["d", "--nope", "1"])).toThrow(/unknown option --nope/);
    expect(() => parseCommand(spec, ["d", "-x"])).toThrow(UsageError);
    expect(() => parseCommand(spec, ["d", "--email"])).toThrow(/needs a value/);
    expect(() => parseCommand(spec, ["d", "--email", "--off"])).toThrow(/needs a value/);
    expect(() => parseCommand(spec, ["d", "--off=1"])).toThrow(/takes no value/);
    expect(() => parseCommand(spec, ["d", "stray"])).toThrow(/unexpected argument "stray"/);
    expect(() => parseCommand(spec, [])).toThrow(/missing DIR/);
    // Server config flags only where the command says it takes them.
    expect(() => parseCommand({ ...spec, config: false }, ["d", "--data-dir", "/x"])).toThrow(/unknown option --data-dir/);
  });

  test("--help or -h anywhere asks for help, even with missing arguments", () => {
    expect(parseCommand(spec, ["--help"]).help).toBe(true);
    expect(parseCommand(spec, ["d", "--nope", "-h"]).help).toBe(true);
  });

  test("the help lists every declared option; a usage error repeats the usage", () => {
    const help = helpText(spec);
    expect(help).toStartWith("Usage: pier thing DIR [options]");
    for (const o of spec.options!) expect(help).toContain(`--${o.name}`);
    const err = usageErrorText(spec, "unknown option --nope");
    expect(err).toStartWith("pier thing: unknown option --nope\n");
    expect(err).toContain("Usage: pier thing DIR [options]");
  });
});

describe("CLI wording", () => {
  test("a busy port is one sentence that names the port and the option that moves it", () => {
    const config = { httpPort: 18777, httpsPort: null, smtpPort: 2525 };
    const http = busyPortMessage(Object.assign(new Error("Failed to start server. Is port 18777 in use?"), { code: "EADDRINUSE" }), config);
    expect(http).toBe(
      "pier: port 18777 (HTTP) is already in use by another program. Stop that program (or the other Pier), or choose another port with --http-port.",
    );
    expect(http).not.toContain("?.");
    const smtp = busyPortMessage(Object.assign(new Error("listen EADDRINUSE: address already in use 127.0.0.1:2525"), { port: 2525 }), config);
    expect(smtp).toContain("port 2525 (SMTP)");
    expect(smtp).toContain("--smtp-port");
  });

  test("sizes use one unit style", () => {
    expect(humanBytes(512)).toBe("512 B");
    expect(humanBytes(3.4 * 1024 * 1024)).toBe("3.4 MB");
    expect(progressLine(3, 12, 3.4 * 1024 * 1024, 12 * 1024 * 1024)).toBe("Uploading 3 of 12 files: 3.4 MB of 12.0 MB");
    expect(progressLine(0, 2, 0, 2048)).toBe("Uploading 0 of 2 files: 0 B of 2.0 KB");
  });

  test("a lengthened or changed site name is explained with the way to choose one", () => {
    const short = slugNotice("mysite", "mysite-site", "bkt_1")!;
    expect(short).toContain('"mysite-site"');
    expect(short).toContain("at least 9 characters");
    expect(short).toContain("--slug");
    expect(short).toContain("PATCH /api/v1/buckets/bkt_1/custom_domains/public_slug");
    expect(slugNotice("my-holiday-pics", "my-holiday-pics-2")).toContain("is taken");
    expect(slugNotice("My Holiday Pics", "my-holiday-pics")).toBeNull();
  });
});
