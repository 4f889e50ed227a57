// The HTTPS listener with certificates chosen by SNI. Bun cannot change a running server's TLS
// (`server.reload({ tls })` does not apply it, and there is no SNI callback), so a new or renewed
// certificate starts a second listener on the same port (reusePort) with the new list, and the
// old one stops accepting and finishes its in-flight requests: no restart, no dropped connection.
import type { Server } from "bun";
import { MAX_BODY_BYTES } from "./server";

export interface SniCertificate {
  serverName: string;
  cert: string;
  key: string;
}

export interface HttpsListenerOptions {
  hostname: string;
  port: number;
  fetch: (req: Request, server: Server<unknown>) => Response | Promise<Response>;
  /** Served when the client's SNI matches no entry (or it sent none): the operator's or a self-signed certificate. */
  fallback: { cert: string; key: string };
  /** --idle-timeout. */
  idleTimeoutSeconds: number;
}

export class HttpsListener {
  private server: Server<unknown>;
  private swapping: Promise<void> = Promise.resolve();
  private stopped = false;
  private paused = false;
  private readonly boundPort: number;

  constructor(
    private readonly opts: HttpsListenerOptions,
    private entries: SniCertificate[] = [],
  ) {
    this.server = this.listen(opts.port, entries);
    this.boundPort = this.server.port!;
  }

  get port(): number {
    return this.boundPort;
  }

  get current(): Server<unknown> {
    return this.server;
  }

  private listen(port: number, entries: SniCertificate[]): Server<unknown> {
    return Bun.serve({
      hostname: this.opts.hostname,
      port,
      reusePort: true,
      fetch: this.opts.fetch,
      maxRequestBodySize: MAX_BODY_BYTES,
      idleTimeout: this.opts.idleTimeoutSeconds,
      // The first entry (no server name) is the fallback for unknown or missing SNI.
      tls: [{ cert: this.opts.fallback.cert, key: this.opts.fallback.key }, ...entries.map((e) => ({ serverName: e.serverName, cert: e.cert, key: e.key }))],
    });
  }

  /**
   * Serve this list from now on (swaps are serialized; the last list wins). A refused list
   * (a certificate the TLS library rejects) fails this call and keeps the listener as it was;
   * the chain goes on, so the next list is still applied.
   */
  update(entries: SniCertificate[]): Promise<void> {
    return this.chain(async () => {
      if (this.stopped) return;
      if (this.paused) return void (this.entries = entries);
      const old = this.server;
      this.server = this.listen(this.boundPort, entries);
      this.entries = entries;
      await old.stop();
    });
  }

  /**
   * Stop taking connections and keep the certificates; `resume()` listens on the same port again
   * (the primary handing the port to its serving workers, and taking it back when none listens).
   */
  pause(): Promise<void> {
    return this.chain(async () => {
      if (this.stopped || this.paused) return;
      this.paused = true;
      await this.server.stop();
    });
  }

  resume(): Promise<void> {
    return this.chain(async () => {
      if (this.stopped || !this.paused) return;
      this.server = this.listen(this.boundPort, this.entries);
      this.paused = false;
    });
  }

  private chain(step: () => Promise<void>): Promise<void> {
    const next = this.swapping.then(step);
    this.swapping = next.catch(() => {});
    return next;
  }

  async stop(force = false): Promise<void> {
    this.stopped = true;
    await this.swapping.catch(() => {});
    await this.server.stop(force);
  }
}
