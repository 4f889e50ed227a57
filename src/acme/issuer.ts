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
import { settlesWithin } from "../core/deadline";
import { acmeLimits } from "./limits";
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

/** What the interceptors know of the order running in this async context. */
interface OrderContext {
  retryAfterMs: number | null;
  /** Aborted at the order's deadline: every request of the order fails from then on. */
  deadline: AbortSignal;
  /** The latest request: its origin and its own timeout, to name what did not answer. */
  last: { origin: string; timeout: AbortSignal } | null;
}

// acme-client retries a 429 by sleeping for the whole Retry-After (hours at Let's Encrypt) inside
// the request: Pier turns that off and schedules the retry itself, reading Retry-After here.
// acme-client's axios also has no timeout: a CA that accepts and never answers would hold the
// order, and with it the serial job runner, forever (D235). Every request gets one here.
const orderContext = new AsyncLocalStorage<OrderContext>();
let interceptorInstalled = false;
function installInterceptors(): void {
  if (interceptorInstalled) return;
  interceptorInstalled = true;
  (acme.axios.defaults as unknown as { acmeSettings: { retryMaxAttempts: number } }).acmeSettings.retryMaxAttempts = 0;
  acme.axios.interceptors.request.use((config) => {
    // Read per request (not set once as defaults) so the limits apply as they stand.
    const timeout = AbortSignal.timeout(acmeLimits.requestTimeoutMs);
    const ctx = orderContext.getStore();
    config.timeout = acmeLimits.requestTimeoutMs;
    config.maxContentLength = acmeLimits.maxResponseBytes;
    config.maxRedirects = acmeLimits.maxRedirects;
    config.signal = ctx ? AbortSignal.any([ctx.deadline, timeout]) : timeout;
    if (ctx) ctx.last = { origin: originOf(config.url), timeout };
    return config;
  });
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

const seconds = (ms: number) => `${+(ms / 1000).toFixed(1)} s`;

function originOf(url: string | undefined): string {
  try {
    return new URL(url ?? "").origin;
  } catch {
    return "the ACME server";
  }
}

export class AcmeIssuer {
  private client: acme.Client | null = null;

  constructor(
    private readonly config: Config,
    private readonly store: CertificateStore,
    private readonly board: ChallengeBoard,
  ) {
    installInterceptors();
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
    const deadline = new AbortController();
    const ctx: OrderContext = { retryAfterMs: null, deadline: deadline.signal, last: null };
    const work = orderContext.run(ctx, async () => {
      const client = await this.account();
      // acme-client's forge CSR builder: its newer asn1-schema one fails under Bun ("Cannot get schema for
      // 'CertificationRequestInfo'"), and forge makes RSA keys only (2048 bits, what every client accepts).
      const [key, csr] = await acme.forge.createCsr({ commonName: host, altNames: [host], keySize: 2048 });
      const cert = await this.order(client, host, csr);
      const leaf = new X509Certificate(cert);
      return { cert, key: key.toString(), notBefore: new Date(leaf.validFrom), notAfter: new Date(leaf.validTo) };
    });
    work.catch(() => {}); // after the deadline its own failure has nobody to tell
    try {
      // The deadline also ends the wait itself: acme-client sleeps between its polls, and a sleep
      // does not notice an aborted signal.
      if (!(await settlesWithin(work, acmeLimits.orderDeadlineMs))) {
        deadline.abort();
        throw new Error(`the order did not finish within ${seconds(acmeLimits.orderDeadlineMs)} (last request to ${ctx.last?.origin ?? "the ACME server"})`);
      }
      return await work;
    } catch (e) {
      const message =
        ctx.last?.timeout.aborted && !deadline.signal.aborted
          ? `${ctx.last.origin} did not answer within ${seconds(acmeLimits.requestTimeoutMs)}`
          : readableAcmeError(e, ctx.last?.origin);
      throw new IssueError(message, ctx.retryAfterMs, ctx.retryAfterMs !== null || /ratelimited|rate limit|too many/i.test(message));
    }
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
        // No acme-client self-check (verifyChallenge) first: it fetched the customer's own host from
        // here, and the scheduler's backoff already keeps failed validations under the CA's limits (D235).
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
function readableAcmeError(e: unknown, origin = "the ACME server"): string {
  const err = e as { message?: string; code?: string; response?: { status?: number } };
  let message = err.message ?? String(e);
  if (err.code === "ECONNREFUSED" || err.code === "ENOTFOUND" || err.code === "ETIMEDOUT") message = `cannot reach the ACME directory (${err.code})`;
  // acme-client's retry interceptor, given a request that got no answer at all (refused, reset,
  // aborted), fails reading the missing response and replaces the error with that TypeError.
  else if (e instanceof TypeError && /response\.config|reading 'config'/.test(message)) message = `no answer from ${origin} (the connection failed)`;
  else if (err.response?.status) message = `the ACME server answered ${err.response.status}: ${message}`;
  return message.replace(/\s+/g, " ").slice(0, 500);
}
