// The file a running `pier serve` keeps in its data dir: the ports it really bound. Apart from
// serve.ts so that the commands that read it (`pier admin`, `pier backup`) do not load the server.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const RUNNING_FILE = "running.json";

export interface RunningServer {
  pid: number;
  host: string;
  http_port: number;
  https_port: number | null;
  smtp_port: number | null;
  started_at: string;
}

/**
 * The Pier serving this data dir, when one is running: what `pier admin mail test` sends to, so
 * it reaches the port the server was started with rather than the default.
 */
export function runningServer(dataDir: string): RunningServer | null {
  const file = join(dataDir, RUNNING_FILE);
  if (!existsSync(file)) return null;
  try {
    const r = JSON.parse(readFileSync(file, "utf8")) as RunningServer;
    process.kill(r.pid, 0); // throws when no such process: a file left by a crash
    return r;
  } catch {
    return null;
  }
}
