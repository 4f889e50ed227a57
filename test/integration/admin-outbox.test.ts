// `pier admin mail outbox`: without an SMTP relay, the email gate's codes wait in the outbox and
// the instance admin reads them with the CLI (against the data dir, as in production).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startTestPier, type TestPier } from "../helpers/pier";
import { publishSite, siteFetch } from "../helpers/sites";

const root = join(import.meta.dir, "../..");
const SECRET = "test-secret-key-test-secret-key-test-secret-key";
let t: TestPier;
beforeAll(async () => {
  t = await startTestPier({ secretKey: SECRET });
});
afterAll(() => t.stop());

async function admin(args: string[]) {
  const proc = Bun.spawn([join(root, "node_modules/.bin/bun"), "run", join(root, "src/main.ts"), "admin", ...args, "--data-dir", t.dataDir], {
    cwd: root, env: { ...process.env, PIER_SECRET_KEY: SECRET }, stdin: "ignore", stdout: "pipe", stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code, lines: stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l)) };
}

describe("pier admin mail outbox", () => {
  test("lists held messages newest first; --to filters; the code read there opens the site", async () => {
    const site = await publishSite(t, { access: "require_email", files: [{ path: "index.html", bytes: "<h1>members</h1>" }] });
    const form = { "content-type": "application/x-www-form-urlencoded" };
    let requestId = "";
    for (const email of ["first@example.com", "second@example.com"]) {
      const r = await siteFetch(t, site.host, "/_pier/gate/email", { method: "POST", headers: form, body: new URLSearchParams({ email, next: "/" }).toString() });
      expect(r.status).toBe(200);
      if (email === "second@example.com") requestId = /name="request" value="([^"]+)"/.exec(await r.text())![1]!;
    }
    const all = await admin(["mail", "outbox"]);
    expect(all.code).toBe(0);
    expect(all.lines.map((m) => m.to)).toEqual(["second@example.com", "first@example.com"]);
    expect(all.lines[0]).toMatchObject({ kind: expect.any(String), subject: expect.any(String), text: expect.stringMatching(/\b\d{6}\b/) });

    const mine = await admin(["mail", "outbox", "--to", "Second@Example.com", "--limit", "1"]);
    expect(mine.lines).toHaveLength(1);
    expect(mine.stderr).toContain("1 message in the outbox for second@example.com");
    const code = /\b(\d{6})\b/.exec(mine.lines[0].text)![1]!;
    const ok = await siteFetch(t, site.host, "/_pier/gate/code", { method: "POST", headers: form, body: new URLSearchParams({ request: requestId, code, next: "/" }).toString() });
    expect(ok.status).toBe(303);

    expect((await admin(["mail", "outbox", "--limit", "0"])).code).toBe(2);
    expect((await admin(["mail", "outbox", "--to", "nobody@example.com"])).lines).toEqual([]);
  }, 30_000);
});
