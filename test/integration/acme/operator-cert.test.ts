// --tls-cert stays supported with automatic HTTPS and wins for the names it covers: a wildcard
// for the sites domain means no site host is ever ordered, while the API host (not covered) is.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "selfsigned";
import { listCertificates } from "../../../src/acme";
import { presentedCertificate, startAcmePier, type AcmeSetup } from "../../helpers/acme";
import { publishSite, siteFetch } from "../../helpers/sites";

let s: AcmeSetup;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "pier-wildcard-"));
  const pems = await generate([{ name: "commonName", value: "*.sites.localhost" }], {
    keySize: 2048,
    days: 30,
    algorithm: "sha256",
    extensions: [{ name: "subjectAltName", altNames: [{ type: 2, value: "*.sites.localhost" }] }],
  } as Parameters<typeof generate>[1]);
  writeFileSync(join(dir, "cert.pem"), pems.cert);
  writeFileSync(join(dir, "key.pem"), pems.private);
  s = await startAcmePier({ overrides: { tlsCert: join(dir, "cert.pem"), tlsKey: join(dir, "key.pem") } });
});
afterAll(() => s?.stop());

test("the operator's wildcard serves the site hosts and none of them is ordered; the API host still gets its own", async () => {
  const orders = s.pebble.orderCount();
  const site = await publishSite(s.t, { files: [{ path: "index.html", bytes: "<p>wildcard</p>" }] });
  expect((await siteFetch(s.t, site.host, "/")).status).toBe(200); // not redirected: no ACME certificate for it
  await Bun.sleep(500);
  expect(s.pebble.orderCount()).toBe(orders);
  expect(listCertificates(s.t.pier.deps).map((c) => c.host)).toEqual([s.apiHost]);
  expect((await presentedCertificate(s.t.pier.ports.https!, site.host)).subjectAltName).toBe("DNS:*.sites.localhost");
  expect((await presentedCertificate(s.t.pier.ports.https!, s.apiHost)).subjectAltName).toBe(`DNS:${s.apiHost}`);
});
