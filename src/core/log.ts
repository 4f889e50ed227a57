// Structured, leveled logging. Anything that looks secret is redacted before it is written,
// so a careless `log.info("...", { body })` can never leak a key or password.

export type LogLevel = "debug" | "info" | "warn" | "error";
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const secretField = /pass(word)?|secret|token|api_?key|authorization|cookie|code_verifier|totp|seed/i;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 5 || value === null || typeof value !== "object") return value;
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = secretField.test(k) ? "[redacted]" : redact(v, depth + 1);
  return out;
}

export type LogFormat = "json" | "text";

export function createLogger(level: LogLevel = "info", sink: (line: string) => void = (l) => console.error(l), format: LogFormat = "json"): Logger {
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < order[level]) return;
    const t = new Date().toISOString();
    const safe = fields ? (redact(fields) as Record<string, unknown>) : {};
    sink(format === "json" ? JSON.stringify({ t, level: lvl, msg, ...safe }) : textLine(t, lvl, msg, safe));
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
  };
}

/**
 * `2026-01-02T03:04:05.678Z INFO  request status=200 ms=1.2 route=api`: logfmt-style pairs, values
 * quoted when they hold spaces, quotes or "=", objects as JSON; one line whatever the message holds.
 */
function textLine(t: string, level: LogLevel, msg: string, fields: Record<string, unknown>): string {
  let line = `${t} ${level.toUpperCase().padEnd(5)} ${oneLine(msg)}`;
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    const s = typeof v === "string" ? v : typeof v === "object" && v !== null ? JSON.stringify(v) : String(v);
    line += ` ${k}=${/[\s"=]/.test(s) || s === "" ? JSON.stringify(s) : s}`;
  }
  return line;
}

const oneLine = (s: string) => s.replace(/[\r\n]+/g, " ");

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
