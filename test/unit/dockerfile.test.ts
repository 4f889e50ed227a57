// The Dockerfile cannot be built in the test environment (no container daemon), so this checks
// what would silently break it: the build stage compiles dist/pier with the README's npm
// commands, the runtime stage runs that binary unprivileged with /data as a volume, and every
// PIER_* variable it sets is a real option whose value Pier accepts.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { configOptions, envName, loadConfig } from "../../src/config";
import pkg from "../../package.json";

const root = join(import.meta.dir, "../..");
const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
// Instructions with line continuations joined, comments dropped.
const lines = dockerfile
  .replace(/\\\n/g, " ")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"));
const stages = lines
  .join("\n")
  .split(/^FROM /m)
  .slice(1)
  .map((s) => `FROM ${s}`);

describe("Dockerfile", () => {
  test("two stages: a Node build stage that compiles dist/pier, a slim runtime with only the binary", () => {
    expect(stages).toHaveLength(2);
    const [build, runtime] = stages as [string, string];
    expect(build).toMatch(/^FROM node:\S+ AS build/);
    expect(build).toContain("RUN npm ci");
    expect(build).toContain("npm run build");
    expect(pkg.scripts.build).toBe("bun run scripts/build.ts");
    expect(runtime).toMatch(/^FROM debian:\S+-slim/);
    expect(runtime).toContain("COPY --from=build /src/dist/pier /usr/local/bin/pier");
    expect(runtime).not.toMatch(/COPY (?!--from=build)/); // no sources or node_modules in the image
  });

  test("runs `pier serve` as a non-root user with its data in the /data volume and a self health check", () => {
    const runtime = stages[1]!;
    expect(runtime).toContain("VOLUME /data");
    expect(runtime).toMatch(/^USER (?!root|0\b)\S+/m);
    expect(runtime).toMatch(/^ENTRYPOINT \["pier"\]$/m);
    expect(runtime).toMatch(/^CMD \["serve"\]$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*CMD \["pier", "healthcheck"\]$/m);
    expect(runtime).toMatch(/^STOPSIGNAL SIGTERM$/m);
  });

  test("its PIER_* settings are real options with valid values, and EXPOSE matches the ports", () => {
    const envLine = stages[1]!.split("\n").find((l) => l.startsWith("ENV "))!;
    const env = Object.fromEntries([...envLine.matchAll(/(PIER_[A-Z_]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
    expect(env.PIER_DATA_DIR).toBe("/data");
    // loadConfig ignores variables it does not know, so a renamed option would go unnoticed.
    const known = new Set(configOptions.map(envName));
    for (const name of Object.keys(env)) expect(known.has(name)).toBe(true);
    const config = loadConfig(env, {});
    expect(config.dataDir).toBe("/data");
    expect(config.host).toBe(env.PIER_HOST!);
    expect(config.httpPort).toBe(Number(env.PIER_HTTP_PORT));
    expect(config.smtpPort).toBe(Number(env.PIER_SMTP_PORT));
    const exposed = /^EXPOSE (.+)$/m.exec(stages[1]!)![1]!.split(/\s+/).map(Number).sort();
    expect(exposed).toEqual([config.httpPort, config.smtpPort ?? -1].sort());
  });
});
