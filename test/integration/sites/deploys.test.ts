// writeDeploy / activateDeploy as the build will call them: blobs from the bucket's store,
// refusals that leave nothing behind, and blob GC that keeps what deploys reference.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { gunzipSync } from "node:zlib";
import { collectGarbage } from "../../../src/blobs/gc";
import { ApiError } from "../../../src/core/errors";
import { deployFiles, deploys } from "../../../src/db/schema";
import { activateDeploy, listDeploys, writeDeploy } from "../../../src/features/publish/deploys";
import { startTestPier, type TestPier } from "../../helpers/pier";
import { publishSite, siteFetch } from "../../helpers/sites";

let t: TestPier;
beforeAll(async () => {
  t = await startTestPier();
});
afterAll(() => t.stop());

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as ApiError).code;
  }
  return "no error";
}

describe("deploys", () => {
  test("files given by blob hash (bucket files) are served and precompressed; types come from names", async () => {
    const js = "export const answer = 42;\n".repeat(100);
    const blob = await t.pier.deps.blobs.putBytes(js);
    const site = await publishSite(t, {
      files: [
        { path: "index.html", bytes: "<h1>x</h1>" },
        { path: "lib/app.mjs", blobSha: blob.sha256 },
      ],
    });
    const r = await siteFetch(t, site.host, "/lib/app.mjs", { headers: { "accept-encoding": "gzip" }, decompress: false });
    expect(r.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(r.headers.get("content-encoding")).toBe("gzip");
    expect(gunzipSync(new Uint8Array(await r.arrayBuffer())).toString()).toBe(js);
    const row = t.pier.deps.db
      .select()
      .from(deployFiles)
      .where(eq(deployFiles.deployId, site.deployId))
      .all()
      .find((f) => f.path === "lib/app.mjs")!;
    expect(row.brSize).toBeLessThan(row.size);
    expect(row.etag).toBe(`"${blob.sha256.slice(0, 40)}"`);
  });

  test("bad input is refused and no deploy is written", async () => {
    const site = await publishSite(t, { files: [{ path: "index.html", bytes: "ok" }] });
    const before = listDeploys(t.pier.deps, site.pub.id).length;
    const cases = [
      [{ path: "../escape.html", bytes: "x" }],
      [{ path: "a\\b.html", bytes: "x" }],
      [{ path: "a\u0000.html", bytes: "x" }],
      [
        { path: "a.html", bytes: "x" },
        { path: "/a.html", bytes: "y" },
      ],
      [{ path: "a.html", blobSha: "0".repeat(64) }],
      [{ path: "a.html" }],
    ];
    for (const files of cases) expect(await codeOf(writeDeploy(t.pier.deps, site.pub.id, files))).toBe("VALIDATION_FAILED");
    expect(await codeOf(writeDeploy(t.pier.deps, "pub_nope", [{ path: "a", bytes: "a" }]))).toBe("PUBLICATION_NOT_FOUND");
    expect(listDeploys(t.pier.deps, site.pub.id).length).toBe(before);
    expect(() => activateDeploy(t.pier.deps, site.pub.id, "dpl_nope")).toThrow(ApiError);
    expect(await (await siteFetch(t, site.host, "/")).text()).toBe("ok");
  });

  test("excluded paths are reported and left out of the deploy", async () => {
    const site = await publishSite(t, { files: [{ path: "index.html", bytes: "ok" }] });
    const d = await writeDeploy(t.pier.deps, site.pub.id, [
      { path: "index.html", bytes: "ok" },
      { path: ".env.local", bytes: "S=1" },
      { path: "yarn.lock", bytes: "" },
    ]);
    expect(d.excluded.sort()).toEqual([".env.local", "yarn.lock"]);
    expect(d.fileCount).toBe(1);
    expect(t.pier.deps.db.select().from(deploys).where(eq(deploys.id, d.deployId)).get()!.fileCount).toBe(1);
  });

  test("blob garbage collection keeps every blob a deploy references (and its variants)", async () => {
    const big = new Uint8Array(700 * 1024).map((_, i) => i % 13);
    const css = "a { color: blue; }\n".repeat(300);
    const site = await publishSite(t, {
      files: [
        { path: "big.dat", bytes: big },
        { path: "s.css", bytes: css },
      ],
    });
    const unreferenced = await t.pier.deps.blobs.putBytes("nobody points at me");
    await collectGarbage(t.pier.deps, 0);
    expect(await t.pier.deps.blobs.has(unreferenced.sha256)).toBe(false);
    const r = await siteFetch(t, site.host, "/big.dat");
    expect(new Uint8Array(await r.arrayBuffer())).toEqual(big);
    const br = await siteFetch(t, site.host, "/s.css", { headers: { "accept-encoding": "br" }, decompress: false });
    expect(br.headers.get("content-encoding")).toBe("br");
  });
});
