import { describe, expect, test } from "bun:test";
import { parseBuildArgs } from "../../scripts/build";

describe("npm run build arguments", () => {
  test("--outfile and --target, with or without =", () => {
    expect(parseBuildArgs([])).toEqual({});
    expect(parseBuildArgs(["--outfile", "/tmp/p", "--target=bun-linux-arm64"])).toEqual({ outfile: "/tmp/p", target: "bun-linux-arm64" });
    expect(parseBuildArgs(["--no-gen", "--outfile=x"])).toEqual({ gen: false, outfile: "x" });
  });

  test("unknown options and missing values are refused", () => {
    expect(() => parseBuildArgs(["--minify", "yes"])).toThrow("unknown option --minify");
    expect(() => parseBuildArgs(["--outfile"])).toThrow("--outfile needs a value");
  });
});
