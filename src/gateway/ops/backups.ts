/**
 * Backups of the gateway's database (DIR/backups/gateway/): made with SQLite's online backup, so a
 * copy taken under write load is consistent; checked before a restore (an SQLite file that passes
 * its integrity check, with the gateway's tables and a schema version this build knows); restored by
 * restarting the gateway component with the file swapped in, the data it replaces kept as a backup.
 */
import { createWriteStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, copyFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Database from 'better-sqlite3';
import { HttpError, badRequest } from '../../http/errors.js';
import type { Store } from '../../store/index.js';

export interface BackupInfo {
  id: string;
  file: string;
  bytes: number;
  createdAt: string;
  schemaVersion: number | null;
}

const ID = /^gateway-[A-Za-z0-9_.-]{1,120}\.db$/;
const REQUIRED_TABLES = ['providers', 'provider_accounts', 'api_keys', 'request_log'];

export class GatewayBackups {
  constructor(
    readonly dir: string,
    private readonly store: Store,
    /** The newest schema version this build has (its migrations). */
    private readonly schemaVersion: number,
    private readonly now: () => number,
  ) {}

  private ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** The path of a backup id, or a 404 (ids never reach the file system unchecked). */
  pathOf(id: string): string {
    if (!ID.test(id) || id.includes('..')) throw new HttpError(404, `backup ${id} not found`, { code: 'not_found' });
    const p = join(this.dir, id);
    if (!existsSync(p)) throw new HttpError(404, `backup ${id} not found`, { code: 'not_found' });
    return p;
  }

  list(): BackupInfo[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir)
      .filter((f) => ID.test(f))
      .map((f) => this.info(join(this.dir, f)))
      .sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
  }

  private info(path: string): BackupInfo {
    const st = statSync(path);
    let schemaVersion: number | null = null;
    try {
      const db = new Database(path, { readonly: true, fileMustExist: true });
      try {
        schemaVersion = db.pragma('user_version', { simple: true }) as number;
      } finally {
        db.close();
      }
    } catch {
      // not readable: listed without a version
    }
    return { id: basename(path), file: path, bytes: st.size, createdAt: st.mtime.toISOString(), schemaVersion };
  }

  private stamp(label?: string): string {
    const t = new Date(this.now()).toISOString().replace(/[:]/g, '-').replace(/\.\d+Z$/, 'Z');
    return `gateway-${t}${label ? `-${label.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 40)}` : ''}-${randomBytes(3).toString('hex')}.db`;
  }

  /** A consistent copy of the live database, made while it keeps serving. */
  async create(label?: string): Promise<BackupInfo> {
    this.ensureDir();
    const path = join(this.dir, this.stamp(label));
    await this.store.db.backup(path);
    return this.info(path);
  }

  /** Keep the newest `keep` scheduled backups (ids with the `scheduled` label); delete the rest. */
  prune(keep: number): number {
    const scheduled = this.list().filter((b) => b.id.includes('-scheduled-'));
    let removed = 0;
    for (const b of scheduled.slice(keep)) {
      rmSync(b.file, { force: true });
      removed++;
    }
    return removed;
  }

  private timer: NodeJS.Timeout | undefined;

  /** Take a backup every `intervalMs`, keeping the newest `keep` (ctl.yaml gateway.backups). */
  schedule(intervalMs: number, keep: number, onError: (e: unknown) => void): void {
    this.stop();
    this.timer = setInterval(() => {
      void this.create('scheduled')
        .then(() => this.prune(keep))
        .catch(onError);
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** A consistent copy into a temporary file (for export); the caller removes it. */
  async snapshot(): Promise<string> {
    this.ensureDir();
    const path = join(this.dir, `.export-${randomBytes(6).toString('hex')}.tmp`);
    await this.store.db.backup(path);
    return path;
  }

  /** Refuse anything that is not a gateway database this build can open (400 naming why). */
  check(path: string): number {
    let db: Database.Database;
    try {
      db = new Database(path, { readonly: true, fileMustExist: true });
    } catch (e) {
      throw badRequest(`not an SQLite database: ${(e as Error).message}`, { code: 'invalid_backup' });
    }
    try {
      const ok = db.pragma('integrity_check', { simple: true });
      if (ok !== 'ok') throw badRequest(`the database fails its integrity check: ${String(ok)}`, { code: 'invalid_backup' });
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version < 1 || version > this.schemaVersion) throw badRequest(`schema version ${version} is not one this build knows (1 to ${this.schemaVersion})`, { code: 'invalid_backup' });
      const tables = new Set((db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((r) => r.name));
      const missing = REQUIRED_TABLES.filter((t) => !tables.has(t));
      if (missing.length) throw badRequest(`not a gateway database (no ${missing.join(', ')} table)`, { code: 'invalid_backup' });
      return version;
    } catch (e) {
      if (e instanceof HttpError) throw e;
      throw badRequest(`not a readable SQLite database: ${(e as Error).message}`, { code: 'invalid_backup' });
    } finally {
      db.close();
    }
  }

  /** Write an upload to a temporary file in the backups folder (at most `max` bytes). */
  async receive(body: Readable, max: number): Promise<string> {
    this.ensureDir();
    const path = join(this.dir, `.import-${randomBytes(6).toString('hex')}.tmp`);
    let size = 0;
    try {
      await pipeline(
        body,
        async function* (source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            size += chunk.length;
            if (size > max) throw new HttpError(413, `the upload is larger than ${max} bytes`, { code: 'payload_too_large' });
            yield chunk;
          }
        },
        createWriteStream(path, { mode: 0o600 }),
      );
    } catch (e) {
      rmSync(path, { force: true });
      throw e;
    }
    if (size === 0) {
      rmSync(path, { force: true });
      throw badRequest('the upload is empty: send the database file as the request body', { code: 'invalid_backup' });
    }
    return path;
  }

  /**
   * The swap, run while the gateway is stopped and its database closed: the current file is kept
   * as a backup, the new one copied next to it and renamed over it (one atomic step), WAL files gone.
   */
  swapIn(source: string, dbPath: string, removeSource: boolean): void {
    this.ensureDir();
    if (existsSync(dbPath)) copyFileSync(dbPath, join(this.dir, this.stamp('before-restore')));
    const staged = `${dbPath}.restore-${randomBytes(4).toString('hex')}`;
    copyFileSync(source, staged);
    renameSync(staged, dbPath);
    rmSync(`${dbPath}-wal`, { force: true });
    rmSync(`${dbPath}-shm`, { force: true });
    if (removeSource) rmSync(source, { force: true });
  }
}
