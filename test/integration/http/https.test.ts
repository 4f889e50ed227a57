// The HTTPS listener serves the same API and sites as HTTP, with the operator's certificate or
// a self-signed one covering the API host and every site host.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { startTestPier, type TestPier } from "../../helpers/pier";

let t: TestPier;
let ca: string;
beforeAll(async () => {
  // Certificate clients refuse a wildcard directly under a single label (*.localhost), as they
  // would *.com; a sites domain of two labels is what deployments use.
  t = await startTestPier({ httpsPort: 0, sitesDomain: "pier.localhost" });
  const dir = join(t.dataDir, "https-tls");
  ca = readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith(".crt"))!), "utf8");
});
afterAll(() => t.stop());

describe("HTTPS listener", () => {
  test("binds its own port and answers the API with a certificate for the API host", async () => {
    const port = t.pier.ports.https!;
    expect(port).toBeGreaterThan(0);
    expect(port).not.toBe(t.pier.ports.http);
    const res = await fetch(`https://localhost:${port}/api/v1/status`, { tls: { ca } });
    expect(res.status).toBe(200);
    expect((await res.json()).data.server_version).toBeString();
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
  });

  test("site hosts are covered by the certificate's *.<sites-domain> name and routed to the site server", async () => {
    const res = await fetch(`https://somesite123.pier.localhost:${t.pier.ports.https}/`, { tls: { ca } });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("text/html");
  });

  test("a client that does not trust the certificate is refused (no silent downgrade)", async () => {
    await expect(fetch(`https://localhost:${t.pier.ports.https}/api/v1/status`)).rejects.toThrow();
  });

  test("the generated key is private to Pier", () => {
    const dir = join(t.dataDir, "https-tls");
    const key = readdirSync(dir).find((f) => f.endsWith(".key"))!;
    expect(statSync(join(dir, key)).mode & 0o777).toBe(0o600);
  });
});
