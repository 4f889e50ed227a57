// Where automatic certificates live: PEM files in the data dir (the account key and, per host,
// cert.pem + key.pem) and a row per host in the `certificates` table with its state. Private keys
// are 0600 and every file is written whole or not at all (temp file, fsync, rename), so a crash
// mid-write never leaves a half-written key or certificate.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { asc, eq, lte, sql } from "drizzle-orm";
import { writeAtomically } from "../core/atomic-file";
import type { Db } from "../db/client";
import { certificates } from "../db/schema";

export type CertificateRow = typeof certificates.$inferSelect;

export interface CertificateFiles {
  cert: string;
  key: string;
}

export class CertificateStore {
  readonly dir: string;

  constructor(
    dataDir: string,
    private readonly db: Db,
  ) {
    this.dir = join(dataDir, "acme");
  }

  private hostDir(host: string): string {
    // Host names reach here only after the host policy (DNS names); checked again so no name can leave the folder.
    if (!/^[a-z0-9][a-z0-9.-]*$/.test(host) || host.includes("..")) throw new Error(`not a host name: ${host}`);
    return join(this.dir, "certs", host);
  }

  readAccountKey(): string | null {
    const file = join(this.dir, "account.key");
    return existsSync(file) ? readFileSync(file, "utf8") : null;
  }

  writeAccountKey(pem: string): void {
    writeAtomically(join(this.dir, "account.key"), pem, 0o600);
  }

  readFiles(host: string): CertificateFiles | null {
    const dir = this.hostDir(host);
    try {
      return { cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") };
    } catch {
      return null;
    }
  }

  /** The key first: whoever reads the new cert.pem finds its key already in place. */
  writeFiles(host: string, files: CertificateFiles): void {
    const dir = this.hostDir(host);
    writeAtomically(join(dir, "key.pem"), files.key, 0o600);
    writeAtomically(join(dir, "cert.pem"), files.cert, 0o644);
  }

  deleteFiles(host: string): void {
    rmSync(this.hostDir(host), { recursive: true, force: true });
  }

  rows(): CertificateRow[] {
    return this.db.select().from(certificates).orderBy(asc(certificates.host)).all();
  }

  /** The row count and the latest update: what a serving worker compares before reading the table. */
  changeMark(): { rows: number; latest: string | null } {
    return this.db
      .select({ rows: sql<number>`count(*)`, latest: sql<string | null>`max(${certificates.updatedAt})` })
      .from(certificates)
      .get()!;
  }

  /** Rows whose next attempt (retry or renewal) is due. */
  due(now: Date): CertificateRow[] {
    return this.db.select().from(certificates).where(lte(certificates.nextAttemptAt, now.toISOString())).all();
  }

  row(host: string): CertificateRow | undefined {
    return this.db.select().from(certificates).where(eq(certificates.host, host)).get();
  }

  /** Insert the host as pending unless it has a row; returns the row either way. */
  ensureRow(host: string, now: Date): CertificateRow {
    const at = now.toISOString();
    this.db.insert(certificates).values({ host, status: "pending", nextAttemptAt: at, createdAt: at, updatedAt: at }).onConflictDoNothing().run();
    return this.row(host)!;
  }

  update(host: string, change: Partial<Omit<CertificateRow, "host" | "createdAt">>, now: Date): CertificateRow | undefined {
    this.db
      .update(certificates)
      .set({ ...change, updatedAt: now.toISOString() })
      .where(eq(certificates.host, host))
      .run();
    return this.row(host);
  }

  deleteRow(host: string): void {
    this.db.delete(certificates).where(eq(certificates.host, host)).run();
  }
}
