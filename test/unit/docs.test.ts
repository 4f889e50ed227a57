import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { configTable, withConfigTable } from "../../scripts/gen-docs";
import { configOptions, envName } from "../../src/config";

const root = join(import.meta.dir, "../..");
const readme = readFileSync(join(root, "README.md"), "utf8");

describe("README", () => {
  test("the configuration table matches configOptions (run: bun run scripts/gen-docs.ts)", () => {
    expect(withConfigTable(readme)).toBe(readme);
    for (const o of configOptions) expect(configTable()).toContain(`\`${envName(o)}\``);
  });

  test("the quick start has the two command lines", () => {
    expect(readme).toContain("npm ci && npm start");
    expect(readme).toContain("npm ci && npm test");
  });

  test(".ci/run runs exactly the README's test line", () => {
    expect(readFileSync(join(root, ".ci/run"), "utf8")).toContain("(npm ci && npm test)");
  });
});
