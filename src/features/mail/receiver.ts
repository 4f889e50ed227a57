// Starts the SMTP receiver for `pier serve` from the config: limits, STARTTLS certificate
// (configured or self-signed), temp dir, and the inbound handler.
import { join } from "node:path";
import type { Deps } from "../../core/context";
import { startSmtpServer, type InboundHandler, type RunningSmtp } from "../../smtp/server";
import { loadSmtpTls } from "../../tls/material";
import { createInboundHandler, type InboundOptions } from "./filer";
import type { SyncBarrier } from "../../blobs/barrier";
import type { GroupCommitter } from "./group-commit";

export interface MailReceiver extends RunningSmtp {
  tlsSource: "configured" | "self-signed" | "off";
  /** Group-commit counters of the built-in filer (absent with a custom handler). */
  commitStats?: GroupCommitter["stats"];
  /** The syncfs barrier's counts (D225); undefined where every blob is fsynced. */
  syncStats?: SyncBarrier["stats"];
}

export async function startMailReceiver(deps: Deps, opts: InboundOptions & { handler?: InboundHandler } = {}): Promise<MailReceiver> {
  const filer = opts.handler ? null : createInboundHandler(deps, opts);
  const handler = opts.handler ?? filer!;
  const { config, urls } = deps;
  const tls = await loadSmtpTls({ certFile: config.smtpTlsCert, keyFile: config.smtpTlsKey, dataDir: config.dataDir, serverName: urls.mailDomain });
  const smtp = await startSmtpServer(handler, {
    host: config.host,
    port: config.smtpPort ?? 0,
    serverName: urls.mailDomain,
    maxMessageBytes: config.smtpMaxMessageBytes,
    maxRecipients: config.smtpMaxRecipients,
    perIpPerMinute: config.smtpRateLimitPerIp,
    perRecipientPerMinute: config.smtpRateLimitPerRecipient,
    tls,
    tempDir: join(config.dataDir, "tmp", "smtp"),
    log: deps.log,
    clock: deps.clock,
    metrics: deps.metrics,
  });
  return {
    ...smtp,
    tlsSource: tls?.source ?? "off",
    commitStats: filer?.committer.stats,
    syncStats: filer?.barrier?.stats,
    async stop() {
      await smtp.stop();
      filer?.close();
    },
  };
}
