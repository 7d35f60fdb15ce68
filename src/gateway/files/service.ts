/**
 * Uploaded files (OpenAI's Files API): each upload is spooled to a temp file while its SHA-256 is
 * computed, then renamed into `uploads/gateway/files/<id>` and recorded; a failed or cut upload
 * leaves nothing. Files belong to the API key that uploaded them. A timer deletes expired ones; at
 * start, bytes on disk without a row (a kill -9 between rename and insert) are removed. With several
 * daemons on one database the bytes are kept there as well: a daemon copies a file uploaded through
 * another to its own files directory the first time it needs it (`localPath`), and drops copies of
 * files deleted elsewhere at its next sweep.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../http/clock.js';
import { FileStore, type FileData, type FileRecord } from './store.js';
import type { Store } from '../../store/index.js';
import { sqliteSql } from '../sql.js';

/** `file-` and 24 hex digits; only ids of this shape ever reach a path. */
const FILE_ID = /^file-[0-9a-f]{24}$/;
const SWEEP_MS = 60_000;

export class FileService {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly store: FileData,
    private readonly dir: string,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** On the daemon's own SQLite store. */
  static local(db: Store, dir: string, clock: Clock, log: Logger): FileService {
    return new FileService(new FileStore(sqliteSql(db)), dir, clock, log);
  }

  /** Where temp uploads are spooled (same file system as the files, so the rename is atomic). */
  get tmpDir(): string {
    return join(this.dir, 'tmp');
  }

  private get filesDir(): string {
    return join(this.dir, 'files');
  }

  now(): number {
    return this.clock.now();
  }

  static validId(id: string): boolean {
    return FILE_ID.test(id);
  }

  pathOf(id: string): string {
    if (!FILE_ID.test(id)) throw new Error(`not a file id: ${id}`);
    return join(this.filesDir, id);
  }

  /** The path of a recorded file's bytes on this daemon, copied from the shared database when they are not here yet. */
  async localPath(id: string): Promise<string> {
    const path = this.pathOf(id);
    if (!this.store.fetchBytes || existsSync(path)) return path;
    mkdirSync(this.filesDir, { recursive: true, mode: 0o700 });
    await this.store.fetchBytes(id, path);
    return path;
  }

  /** A file of `owner`, or undefined (another key's file is as absent as a missing one). */
  async get(owner: string, id: string): Promise<FileRecord | undefined> {
    if (!FILE_ID.test(id)) return undefined;
    const f = await this.store.get(id);
    return f && f.owner === owner && !this.isExpired(f) ? f : undefined;
  }

  private isExpired(f: FileRecord): boolean {
    return f.expiresAt !== undefined && f.expiresAt <= this.clock.now();
  }

  /** Moves a spooled temp file into place and records it (the row is written last: it is the commit). */
  async adopt(tmpPath: string, f: Omit<FileRecord, 'id' | 'createdAt'>): Promise<FileRecord> {
    const rec: FileRecord = { ...f, id: `file-${randomBytes(12).toString('hex')}`, createdAt: this.clock.now() };
    mkdirSync(this.filesDir, { recursive: true, mode: 0o700 });
    renameSync(tmpPath, this.pathOf(rec.id));
    try {
      await this.store.insert(rec, this.pathOf(rec.id));
    } catch (e) {
      await rm(this.pathOf(rec.id), { force: true }).catch(() => undefined);
      throw e;
    }
    return rec;
  }

  async delete(id: string): Promise<boolean> {
    if (!FILE_ID.test(id)) return false;
    const gone = await this.store.delete(id);
    await rm(this.pathOf(id), { force: true }).catch(() => undefined);
    return gone;
  }

  /** Deletes expired files, and (at start, or always when files are shared) bytes on disk that no row records. */
  async sweep(orphans = false): Promise<number> {
    let n = 0;
    for (const f of await this.store.expired(this.clock.now())) if (await this.delete(f.id)) n++;
    if (orphans || this.store.fetchBytes) {
      let names: string[] = [];
      try {
        names = readdirSync(this.filesDir);
      } catch {
        names = [];
      }
      const known = await this.store.ids();
      for (const name of names) if (!known.has(name)) await rm(join(this.filesDir, name), { force: true }).catch(() => undefined);
    }
    return n;
  }

  start(): void {
    void this.sweep(true).catch((e: unknown) => this.log.warn({ err: e }, 'gateway: file sweep failed'));
    this.timer = setInterval(() => {
      void this.sweep().catch((e: unknown) => this.log.warn({ err: e }, 'gateway: file sweep failed'));
    }, SWEEP_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
