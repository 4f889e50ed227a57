// SPF, DKIM and DMARC verdicts for a received message, via mailauth (never hand-rolled). The
// verdicts are recorded in message.json; they block nothing unless the operator turns on
// DMARC enforcement (see shouldRejectForDmarc). Any failure here (DNS down, a message too broken
// to verify) becomes a `temperror` verdict, never a lost message.
import { createReadStream } from "node:fs";
import { pipeline } from "node:stream";
import { authenticate, type DNSResolver } from "mailauth";
import { limitDkimSignatures, limitDkimSignaturesInBytes } from "./dkim-limit";

export interface Verdict {
  result: string;
  comment: string | null;
}

export interface AuthenticationResults {
  spf: Verdict & { domain: string | null };
  dkim: (Verdict & { domain: string | null; selector: string | null; aligned: boolean })[];
  dmarc: Verdict & { domain: string | null; policy: string | null };
  /** The Authentication-Results header text mailauth produced (RFC 8601). */
  header: string | null;
  error: string | null;
}

export interface AuthContext {
  /** Connecting client IP. */
  ip: string;
  helo: string;
  /** MAIL FROM (null for bounces: SPF then checks the HELO identity). */
  mailFrom: string | null;
  /** Our host name, written into the Authentication-Results header. */
  mta: string;
  /** DNS lookups; defaults to the system resolver. Tests pass tableResolver(). */
  resolver?: DNSResolver;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 20_000;

const failed = (error: string): AuthenticationResults => ({
  spf: { result: "temperror", comment: error, domain: null },
  dkim: [],
  dmarc: { result: "temperror", comment: error, domain: null, policy: null },
  header: null,
  error,
});

/**
 * `raw`: the message's file (streamed) or its bytes. Only the first MAX_DKIM_SIGNATURES DKIM
 * signatures are verified (dkim-limit.ts); the message itself is never changed.
 */
export async function verifyAuthentication(raw: string | Buffer, ctx: AuthContext): Promise<AuthenticationResults> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const file = typeof raw === "string" ? createReadStream(raw) : null;
  const limited = file ? limitDkimSignatures() : null;
  // pipeline hands a read error on to the transform, whose error mailauth reports.
  if (file && limited) pipeline(file, limited, () => {});
  try {
    const input = limited ?? limitDkimSignaturesInBytes(raw as Buffer);
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("authentication checks timed out")), ctx.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    });
    const r = await Promise.race([
      authenticate(input, {
        ip: ctx.ip,
        helo: ctx.helo,
        sender: ctx.mailFrom ?? "",
        mta: ctx.mta,
        resolver: ctx.resolver,
        disableBimi: true, // BIMI fetches logos over HTTPS: not our business
        disableArc: true,
      }),
      timeout,
    ]);
    const spf = r.spf || null;
    const dmarc = r.dmarc || null;
    return {
      spf: { result: spf?.status.result ?? "none", comment: spf?.status.comment ?? null, domain: spf ? ((spf as { domain?: string }).domain ?? null) : null },
      dkim: (r.dkim?.results ?? []).map((d) => ({
        result: d.status.result,
        comment: d.status.comment ?? null,
        domain: d.signingDomain ?? null,
        selector: d.selector ?? null,
        aligned: Boolean(d.status.aligned),
      })),
      dmarc: {
        result: dmarc ? dmarc.status.result : "none",
        comment: dmarc ? (dmarc.status.comment ?? null) : (r.dmarcSkipReason ?? null),
        domain: dmarc ? (dmarc.domain ?? null) : null,
        policy: dmarc ? (dmarc.policy ?? null) : null,
      },
      header: extractAuthResultsHeader(r.headers),
      error: null,
    };
  } catch (e) {
    return failed((e as Error).message || String(e));
  } finally {
    clearTimeout(timer);
    file?.destroy();
    limited?.destroy();
  }
}

function extractAuthResultsHeader(headers: string): string | null {
  const m = /(?:^|\r\n)Authentication-Results:([\s\S]*?)(?=\r\n[^ \t]|\r\n$|$)/i.exec(headers);
  return m ? m[1]!.replace(/\r\n[ \t]+/g, " ").trim() : null;
}

/**
 * With `--smtp-reject-dmarc-fail` on: refuse a message whose DMARC evaluates to fail when the
 * author domain asks for it (policy reject or quarantine; Pier has no spam folder to quarantine
 * into). A fail under p=none is only recorded, as the domain owner asked.
 */
export function shouldRejectForDmarc(auth: AuthenticationResults, enforce: boolean): boolean {
  return enforce && auth.dmarc.result === "fail" && (auth.dmarc.policy === "reject" || auth.dmarc.policy === "quarantine");
}

/**
 * A resolver that answers only from a table and fails every other lookup with ENOTFOUND, so
 * tests (and air-gapped setups) never send a DNS query. Keys are "name/TYPE", e.g.
 * "example.com/TXT" -> [["v=spf1 ip4:127.0.0.1 -all"]].
 */
export function tableResolver(table: Record<string, string[][] | string[]>): DNSResolver {
  return async (name, rrtype) => {
    const hit = table[`${name.toLowerCase().replace(/\.$/, "")}/${rrtype.toUpperCase()}`];
    if (hit) return hit;
    throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: "ENOTFOUND" });
  };
}
