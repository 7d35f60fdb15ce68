/**
 * Backups of the gateway's database (DIR/backups/gateway/): made with SQLite's online backup, so a
 * copy taken under write load is consistent. A restore or an import first stages a copy next to the
 * database and checks and migrates it there, off the event loop (restore-lane.ts): an SQLite file
 * that passes its integrity check, of a schema version this build knows, brought to this build's
 * schema and compared with it. Only then is the gateway component restarted with the copy swapped
 * in; the audit trail of the live database is carried across, and the data it replaces is kept as a
 * backup.
 */
import { createWriteStream, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { copyFile, rename, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import Database from 'better-sqlite3';
import { HttpError } from '../../http/errors.js';
import type { Migration, Store } from '../../store/index.js';
import { carryAuditLog, prepareCandidate } from './restore-lane.js';
import { GatewayError } from '../errors.js';

export interface BackupInfo {
  id: string;
  file: string;
  bytes: number;
  createdAt: string;
  schemaVersion: number | null;
}

const ID = /^gateway-[A-Za-z0-9_.-]{1,120}\.db$/;

export class GatewayBackups {
  /** This build's migrations as SQL (they run on staged copies, on the restore thread). */
  private readonly migrations: string[];

  constructor(
    readonly dir: string,
    private readonly store: Store,
    migrations: readonly Migration[],
    private readonly now: () => number,
  ) {
    this.migrations = migrations.map((m) => {
      if (typeof m.up !== 'string') throw new Error(`gateway migration ${m.version} is code: restores can only run SQL migrations`);
      return m.up;
    });
  }

  private ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** The path of a backup id, or a 404 (ids never reach the file system unchecked). */
  pathOf(id: string): string {
    if (!ID.test(id) || id.includes('..')) throw new GatewayError('not-found', `backup ${id} not found`, { code: 'not_found' });
    const p = join(this.dir, id);
    if (!existsSync(p)) throw new GatewayError('not-found', `backup ${id} not found`, { code: 'not_found' });
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

  /**
   * Stage `source` next to the live database (moved when `move`, else copied) and check and migrate
   * the staged file: its original schema version, or a 400 naming why it cannot be used (the staged
   * file is removed then; `source` is never changed).
   */
  async stage(source: string, dbPath: string, move: boolean): Promise<{ staged: string; version: number }> {
    const staged = `${dbPath}.restore-${randomBytes(4).toString('hex')}`;
    try {
      if (move) await rename(source, staged).catch(() => copyFile(source, staged));
      else await copyFile(source, staged);
      const out = await prepareCandidate(staged, this.migrations);
      if (out.reason !== undefined) throw new GatewayError('invalid', out.reason, { code: 'invalid_backup' });
      return { staged, version: out.version! };
    } catch (e) {
      await rm(staged, { force: true });
      if (move) await rm(source, { force: true });
      throw e;
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
      throw new GatewayError('invalid', 'the upload is empty: send the database file as the request body', { code: 'invalid_backup' });
    }
    return path;
  }

  /**
   * The swap, run while the gateway is stopped and its database closed: the live audit trail is
   * carried into the staged file, the current file is kept as a backup, and the staged one renamed
   * over it (one atomic step), WAL files gone. A failure before the rename leaves the data as it was.
   */
  async swapIn(staged: string, dbPath: string): Promise<void> {
    this.ensureDir();
    try {
      if (existsSync(dbPath)) {
        await carryAuditLog(staged, dbPath);
        const kept = join(this.dir, this.stamp('before-restore'));
        await rename(dbPath, kept).catch(() => copyFile(dbPath, kept));
      }
    } catch (e) {
      await rm(staged, { force: true });
      throw e;
    }
    await rename(staged, dbPath);
    await rm(`${dbPath}-wal`, { force: true });
    await rm(`${dbPath}-shm`, { force: true });
  }
}
