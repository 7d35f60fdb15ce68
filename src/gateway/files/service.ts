/**
 * Uploaded files (OpenAI's Files API): each upload is spooled to a temp file while its SHA-256 is
 * computed, then renamed into `uploads/gateway/files/<id>` and recorded; a failed or cut upload
 * leaves nothing. Files belong to the API key that uploaded them. A timer deletes expired ones; at
 * start, bytes on disk without a row (a kill -9 between rename and insert) are removed.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, renameSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../../http/clock.js';
import type { Store } from '../../store/index.js';
import { FileStore, type FileRecord } from './store.js';

/** `file-` and 24 hex digits; only ids of this shape ever reach a path. */
const FILE_ID = /^file-[0-9a-f]{24}$/;
const SWEEP_MS = 60_000;

export class FileService {
  readonly store: FileStore;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    db: Store,
    private readonly dir: string,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.store = new FileStore(db);
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

  /** A file of `owner`, or undefined (another key's file is as absent as a missing one). */
  get(owner: string, id: string): FileRecord | undefined {
    if (!FILE_ID.test(id)) return undefined;
    const f = this.store.get(id);
    return f && f.owner === owner && !this.isExpired(f) ? f : undefined;
  }

  private isExpired(f: FileRecord): boolean {
    return f.expiresAt !== undefined && f.expiresAt <= this.clock.now();
  }

  /** Moves a spooled temp file into place and records it (the row is written last: it is the commit). */
  adopt(tmpPath: string, f: Omit<FileRecord, 'id' | 'createdAt'>): FileRecord {
    const rec: FileRecord = { ...f, id: `file-${randomBytes(12).toString('hex')}`, createdAt: this.clock.now() };
    mkdirSync(this.filesDir, { recursive: true, mode: 0o700 });
    renameSync(tmpPath, this.pathOf(rec.id));
    this.store.insert(rec);
    return rec;
  }

  async delete(id: string): Promise<boolean> {
    if (!FILE_ID.test(id)) return false;
    const gone = this.store.delete(id);
    await rm(this.pathOf(id), { force: true }).catch(() => undefined);
    return gone;
  }

  /** Deletes expired files, and (at start) bytes on disk that no row records. */
  async sweep(orphans = false): Promise<number> {
    let n = 0;
    for (const f of this.store.expired(this.clock.now())) if (await this.delete(f.id)) n++;
    if (orphans) {
      let names: string[] = [];
      try {
        names = readdirSync(this.filesDir);
      } catch {
        names = [];
      }
      const known = this.store.ids();
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
