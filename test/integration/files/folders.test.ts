// listFolder (the dashboard's file browser): for any set of paths, walking a folder page by
// page gives exactly its immediate children, each once, in path order, whatever the page size;
// names sorting around "/" ("a-b", "a.c", "a/x", "a0") and non-ASCII names included.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { Actor } from "../../../src/core/context";
import { commitChanges, listFolder } from "../../../src/features/files";
import { createBucket } from "../../helpers/buckets";
import { apiKeyActorOf, startTestPier, type TestPier, type TestUser } from "../../helpers/pier";

let t: TestPier;
let u: TestUser;
let actor: Actor;

beforeAll(async () => {
  t = await startTestPier();
  u = await t.user({ email: "folders@example.com" });
  actor = apiKeyActorOf(u, "bucket_read");
});
afterAll(async () => {
  await t?.stop();
});

/** The children of `prefix` computed the obvious way, in SQLite's (byte) order. */
function expectedChildren(paths: string[], prefix: string): string[] {
  const children = new Set<string>();
  for (const p of paths) {
    if (!p.startsWith(prefix)) continue;
    const rest = p.slice(prefix.length);
    const slash = rest.indexOf("/");
    children.add(slash < 0 ? rest : `${rest.slice(0, slash)}/`);
  }
  // A folder sorts where its first path does ("a/x" bytes), so compare with the slash kept.
  const bytes = (s: string) => Buffer.from(s);
  return [...children].sort((a, b) => Buffer.compare(bytes(a), bytes(b)));
}

const segment = fc.constantFrom("a", "b", "a-b", "a.c", "a0", "é", "z z", "A");
const pathArb = fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => s.join("/"));

describe("listFolder", () => {
  test("pages through exactly the immediate children of a folder", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(pathArb, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 7 }), fc.nat(), async (raw, limit, pick) => {
        // A path cannot also be a folder ("a" and "a/b"): keep the first of such pairs.
        const paths = raw.filter((p) => !raw.some((q) => q !== p && q.startsWith(`${p}/`)));
        const bucket = await createBucket(t, u, { title: "folders" });
        commitChanges(
          t.pier.deps,
          { kind: "system", name: "test" },
          bucket.id,
          paths.map((path, i) => ({
            path,
            blob: { sha256: i.toString(16).padStart(64, "0"), size: 1, md5: "1B2M2Y8AsgTpgAmY7PhCfg==", contentType: "text/plain" },
          })),
          { kind: "write" },
        );
        const folders = [
          "",
          ...new Set(
            paths.flatMap((p) =>
              p
                .split("/")
                .slice(0, -1)
                .map((_, i, segs) => `${segs.slice(0, i + 1).join("/")}/`),
            ),
          ),
        ];
        const prefix = folders[pick % folders.length]!;
        const seen: string[] = [];
        let after: string | undefined;
        for (let pages = 0; pages < 100; pages++) {
          const page = listFolder(t.pier.deps, actor, bucket.id, { prefix, after, limit });
          expect(page.entries.length).toBeLessThanOrEqual(limit);
          seen.push(...page.entries.map((e) => (e.kind === "folder" ? `${e.name}/` : e.name)));
          if (!page.pagination.next_cursor) break;
          after = page.pagination.next_cursor;
        }
        expect(seen).toEqual(expectedChildren(paths, prefix));
      }),
      { numRuns: 60 },
    );
  }, 60_000);

  test("a cursor from another folder is refused", async () => {
    const bucket = await createBucket(t, u, { title: "cursor" });
    expect(() => listFolder(t.pier.deps, actor, bucket.id, { prefix: "docs/", after: "img/a.png" })).toThrow("another folder");
  });
});
