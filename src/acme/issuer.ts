// Orders one certificate from the ACME CA with `acme-client` (RFC 8555: account, order, HTTP-01
// challenge, CSR, finalize); nothing of the protocol is written here. The account key is made
// once and kept in the data dir; each certificate gets a fresh key.
import { AsyncLocalStorage } from "node:async_hooks";
import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import https from "node:https";
import { rootCertificates } from "node:tls";
import * as acme from "acme-client";
import type { Config } from "../config";
import { IssueError } from "./issue-error";
import type { CertificateStore } from "./store";

export interface IssuedCertificate {
  cert: string;
  key: string;
  notBefore: Date;
  notAfter: Date;
}

/** Where HTTP-01 answers are kept while an order is validated (read by every request on the HTTP listener). */
export interface ChallengeBoard {
  set(token: string, keyAuthorization: string): void;
  delete(token: string): void;
}

// acme-client retries a 429 by sleeping for the whole Retry-After (hours at Let's Encrypt) inside
// the request: Pier turns that off and schedules the retry itself, reading Retry-After here.
const orderContext = new AsyncLocalStorage<{ retryAfterMs: number | null }>();
let interceptorInstalled = false;
function installRetryAfterReader(): void {
  if (interceptorInstalled) return;
  interceptorInstalled = true;
  (acme.axios.defaults as unknown as { acmeSettings: { retryMaxAttempts: number } }).acmeSettings.retryMaxAttempts = 0;
  acme.axios.interceptors.response.use(null, (error: { response?: { status: number; headers: Record<string, string | undefined> } }) => {
    const res = error.response;
    const ctx = orderContext.getStore();
    if (ctx && res && (res.status === 429 || res.status === 503)) {
      const raw = res.headers["retry-after"];
      const seconds = raw === undefined ? NaN : /^\d+$/.test(raw) ? Number(raw) : (Date.parse(raw) - Date.now()) / 1000;
      if (Number.isFinite(seconds) && seconds > 0) ctx.retryAfterMs = Math.ceil(seconds * 1000);
    }
    return Promise.reject(error);
  });
}

export class AcmeIssuer {
  private client: acme.Client | null = null;

  constructor(
    private readonly config: Config,
    private readonly store: CertificateStore,
    private readonly board: ChallengeBoard,
  ) {
    installRetryAfterReader();
    if (config.acmeCaRoot) {
      // Trusted in addition to the system roots, for acme-client's requests only (a test CA).
      acme.axios.defaults.httpsAgent = new https.Agent({ ca: [...rootCertificates, readFileSync(config.acmeCaRoot, "utf8")] });
    }
  }

  private async account(): Promise<acme.Client> {
    if (this.client) return this.client;
    let accountKey = this.store.readAccountKey();
    if (!accountKey) {
      accountKey = (await acme.crypto.createPrivateEcdsaKey()).toString();
      this.store.writeAccountKey(accountKey);
    }
    const { acmeEabKid, acmeEabHmac } = this.config;
    this.client = new acme.Client({
      directoryUrl: this.config.acmeDirectory,
      accountKey,
      externalAccountBinding: acmeEabKid && acmeEabHmac ? { kid: acmeEabKid, hmacKey: acmeEabHmac } : undefined,
      // Polls of a pending order: quick at first (a local CA validates in milliseconds), then spaced out.
      backoffAttempts: 12,
      backoffMin: 250,
      backoffMax: 10_000,
    });
    return this.client;
  }

  async issue(host: string): Promise<IssuedCertificate> {
    const ctx = { retryAfterMs: null as number | null };
    return orderContext.run(ctx, async () => {
      try {
        const client = await this.account();
        // acme-client's forge CSR builder: its newer asn1-schema one fails under Bun ("Cannot get schema for
        // 'CertificationRequestInfo'"), and forge makes RSA keys only (2048 bits, what every client accepts).
        const [key, csr] = await acme.forge.createCsr({ commonName: host, altNames: [host], keySize: 2048 });
        const cert = await this.order(client, host, csr);
        const leaf = new X509Certificate(cert);
        return { cert, key: key.toString(), notBefore: new Date(leaf.validFrom), notAfter: new Date(leaf.validTo) };
      } catch (e) {
        const message = readableAcmeError(e);
        throw new IssueError(message, ctx.retryAfterMs, ctx.retryAfterMs !== null || /ratelimited|rate limit|too many/i.test(message));
      }
    });
  }

  /**
   * acme-client's auto() steps, called one by one: auto() reads the domains back from the CSR with
   * @peculiar/asn1-schema, of which the installed tree holds two copies that do not see each
   * other's schemas ("Cannot get schema for 'CertificationRequest'"). Same calls, same order.
   */
  private async order(client: acme.Client, host: string, csr: Buffer): Promise<string> {
    try {
      client.getAccountUrl();
    } catch {
      await client.createAccount({ termsOfServiceAgreed: true, contact: this.config.acmeEmail ? [`mailto:${this.config.acmeEmail}`] : undefined });
    }
    const order = await client.createOrder({ identifiers: [{ type: "dns", value: host }] });
    for (const authz of await client.getAuthorizations(order)) {
      if (authz.status === "valid") continue;
      const challenge = authz.challenges.find((c) => c.type === "http-01");
      if (!challenge) throw new Error(`the CA offered no http-01 challenge for ${host}`);
      const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
      let completed = false;
      this.board.set(challenge.token, keyAuthorization);
      try {
        // acme-client's self-check fetches http://<host>:80/ first; it only means something when Pier itself listens on 80.
        if (this.config.httpPort === 80) await client.verifyChallenge(authz, challenge);
        await client.completeChallenge(challenge);
        completed = true;
        await client.waitForValidStatus(challenge);
      } catch (e) {
        // A challenge never submitted leaves a pending authorization: deactivate it, as auto() does.
        if (!completed) await client.deactivateAuthorization(authz).catch(() => {});
        throw e;
      } finally {
        this.board.delete(challenge.token);
      }
    }
    const finalized = await client.finalizeOrder(order, csr);
    return client.getCertificate(finalized);
  }
}

/** One line an operator can act on: acme-client's problem text, without stack or axios noise. */
function readableAcmeError(e: unknown): string {
  const err = e as { message?: string; code?: string; response?: { status?: number } };
  let message = err.message ?? String(e);
  if (err.code === "ECONNREFUSED" || err.code === "ENOTFOUND" || err.code === "ETIMEDOUT") message = `cannot reach the ACME directory (${err.code})`;
  else if (err.response?.status) message = `the ACME server answered ${err.response.status}: ${message}`;
  return message.replace(/\s+/g, " ").slice(0, 500);
}
