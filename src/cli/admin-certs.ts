// `pier admin certs` and `pier admin certs forget`: the automatic (ACME) certificates.
import type { listCertificates } from "../acme";
import type { AdminCommand } from "./admin";
import { required, UsageError } from "./client/args";

export const certificateCommands: Record<string, AdminCommand> = {
  certs: {
    usage: "certs [--json]",
    summary:
      "List the automatic (ACME) certificates: host, status (pending, issued, failed), expiry, last error and the next attempt (renewal or retry). --json: one JSON line each.",
    options: [{ name: "json", help: "One JSON line per certificate instead of the table" }],
    async run(deps, o, io) {
      const { listCertificates } = await import("../acme"); // loaded to run, not for --help
      const rows = listCertificates(deps);
      if (o.json) {
        for (const r of rows) io.out(JSON.stringify(r));
        return;
      }
      if (!rows.length) {
        io.err(deps.certificates ? "no automatic certificates yet" : "no automatic certificates (automatic HTTPS is off: see --acme)");
        return;
      }
      io.out(certTable(rows));
    },
  },
  "certs forget": {
    usage: "certs forget HOST",
    summary:
      "Delete a host's automatic certificate (files and state). A running Pier stops serving it at its next sweep (within a minute) and orders it again at the host's next request if the host is still one of its own.",
    positional: "HOST",
    async run(deps, o, io) {
      const { forgetCertificate } = await import("../acme");
      const host = required(o, "host").toLowerCase().replace(/\.$/, "");
      if (!forgetCertificate(deps, host)) throw new UsageError(`no automatic certificate for ${host} (pier admin certs lists them)`);
      io.out(JSON.stringify({ host, forgotten: true }));
    },
  },
};

function certTable(rows: ReturnType<typeof listCertificates>): string {
  const cells = rows.map((r) => [r.host, r.status, r.expiresAt ?? "-", r.nextAttemptAt ?? "-", r.lastError ?? "-"]);
  const head = ["HOST", "STATUS", "EXPIRES", "NEXT ATTEMPT", "LAST ERROR"];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => (i === 4 ? 0 : c[i]!.length))));
  const line = (c: string[]) => c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i]!))).join("  ");
  return [line(head), ...cells.map(line)].join("\n");
}
