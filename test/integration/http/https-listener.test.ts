// The HTTPS listener's certificate swaps over real TLS: a swap that fails (a certificate the
// TLS library refuses) is reported, and the next swap still takes effect.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:tls";
import { generate } from "selfsigned";
import { HttpsListener } from "../../../src/http/https-listener";

async function selfSigned(name: string) {
  const pems = await generate([{ name: "commonName", value: name }], {
    keySize: 2048,
    days: 2,
    algorithm: "sha256",
    extensions: [{ name: "subjectAltName", altNames: [{ type: 2, value: name }] }],
  } as Parameters<typeof generate>[1]);
  return { cert: pems.cert, key: pems.private };
}

/** The subject CN of the certificate the listener presents for this SNI name. */
function presentedName(port: number, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false }, () => {
      const cn = socket.getPeerCertificate().subject?.CN;
      socket.end();
      resolve(String(cn));
    });
    socket.on("error", reject);
    socket.setTimeout(20_000, () => socket.destroy(new Error("TLS handshake timed out")));
  });
}

let listener: HttpsListener | null = null;
let fallback: { cert: string; key: string };
let good: { cert: string; key: string };
beforeAll(async () => {
  fallback = await selfSigned("fallback.test");
  good = await selfSigned("good.test");
});
afterAll(async () => {
  await listener?.stop(true);
});

describe("HTTPS listener certificate swaps", () => {
  test("a refused certificate list fails its own swap only: the next list is served", async () => {
    listener = new HttpsListener({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("ok"), fallback, idleTimeoutSeconds: 120 });
    const port = listener.port;
    expect(await presentedName(port, "good.test")).toBe("fallback.test");

    await expect(listener.update([{ serverName: "broken.test", cert: "not a certificate", key: "not a key" }])).rejects.toThrow();
    await listener.update([{ serverName: "good.test", ...good }]);
    expect(await presentedName(port, "good.test")).toBe("good.test");
    expect(await presentedName(port, "other.test")).toBe("fallback.test");
  });
});
