import { isAbsolute, join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../http/clock.js';
import { Store, type Migration } from '../store/index.js';
import type { CounterStore, HitResult } from './adapter.js';
import type { FileAdapterConfig } from './config.js';
import { HitJournal } from './hit-journal.js';

const MIGRATIONS: Migration[] = [
  {
    version: 1,
    // No index on reset_at: it would be rewritten on every fold; the sweep scans instead, in chunks.
    up: `CREATE TABLE counters (
           key TEXT PRIMARY KEY,
           count INTEGER NOT NULL,
           reset_at INTEGER NOT NULL
         ) WITHOUT ROWID;`,
  },
];

/**
 * How long opening the file waits for another process's lock. better-sqlite3 waits synchronously,
 * so this is kept short: while the lock cannot be had, hits are blocked (the seed's fail-closed rule).
 */
export const LOCK_WAIT_MS = 25;
/** How often a store that could not take the file's lock tries again (on a hit). */
export const LOCK_RETRY_MS = 1000;
const FOLD_EVERY_MS = 1000;
const FOLD_AFTER_RECORDS = 5000;
const SWEEP_EVERY_MS = 60_000;
const SWEEP_CHUNK = 500;
/** Live counters kept in memory; past this, the ones already in the table are dropped and read back on demand. */
const MAX_CACHED = 100_000;

interface Counter {
  count: number;
  resetAt: number;
}

/**
 * The embedded adapter. The daemon owns its counter file: the SQLite database is opened with an
 * exclusive lock held for as long as the store is open, so the counters in memory are the truth
 * and a hit costs a map update plus one appended journal line (`ratelimit.db-hits`), written
 * before the hit is answered. Journal lines are folded into the `counters` table every second (and
 * on close), then the journal is emptied. A process killed with -9 replays the journal on the next
 * open. Another process cannot use the file meanwhile; a store that finds the file locked by one
 * blocks every hit until it can take the lock (tried again at most every LOCK_RETRY_MS).
 */
export class FileCounterStore implements CounterStore {
  readonly name = 'file' as const;
  readonly onStoreError = 'block' as const;
  /** Key prefix; a reload that keeps the file but changes `file.prefix` sets it (see usePrefix). */
  prefix: string;
  readonly path: string;
  readonly journalPath: string;
  private store: Store | null = null;
  private journal: HitJournal | null = null;
  private readonly counters = new Map<string, Counter>();
  /** Keys changed since the last fold (a key without a counter is to be deleted from the table). */
  private dirty = new Set<string>();
  /** True once the table holds live counters the map does not (after eviction, or a large file). */
  private partial = false;
  private records = 0;
  private nextLockTry = 0;
  private foldQueued = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private closed = false;

  constructor(
    cfg: FileAdapterConfig,
    stateDir: string,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.prefix = keyPrefix(cfg.prefix);
    this.path = fileAdapterPath(cfg, stateDir);
    this.journalPath = `${this.path}-hits`;
    if (!this.take()) {
      this.nextLockTry = this.clock.now() + LOCK_RETRY_MS;
      this.log.warn({ path: this.path }, 'rate limit: the counter file is locked by another process; limited routes answer 429 until it is free');
    }
    this.timers.push(setInterval(() => this.foldSafely(), FOLD_EVERY_MS), setInterval(() => void this.sweep(), SWEEP_EVERY_MS));
    for (const t of this.timers) t.unref();
  }

  /**
   * A reload that names the same file keeps this store (a second store on the file could not take
   * its lock); counters under the old prefix are simply left to end.
   */
  usePrefix(prefix: string): void {
    this.prefix = keyPrefix(prefix);
  }

  hit(key: string, windowMs: number): HitResult {
    const journal = this.journal ?? this.retake();
    const now = this.clock.now();
    let c = this.counters.get(key);
    if (c === undefined && this.partial) c = this.readCounter(key, now);
    let count: number;
    let resetAt: number;
    if (c === undefined || c.resetAt <= now) {
      count = 1;
      resetAt = now + windowMs;
    } else {
      count = c.count + 1;
      resetAt = c.resetAt;
    }
    journal.append(key, count, resetAt); // throws when it cannot be written: the guard blocks the hit
    if (c === undefined) this.counters.set(key, { count, resetAt });
    else {
      c.count = count;
      c.resetAt = resetAt;
    }
    this.dirty.add(key);
    if (++this.records >= FOLD_AFTER_RECORDS && !this.foldQueued) {
      this.foldQueued = true;
      setImmediate(() => this.foldSafely());
    }
    return { count, ttlMs: resetAt - now };
  }

  async deleteKeys(keys: readonly string[]): Promise<number> {
    const now = this.clock.now();
    let live = 0;
    // Chunked so a reset of many keys never holds the loop for long.
    for (let i = 0; i < keys.length; i += SWEEP_CHUNK) {
      const { store, journal } = this.owned();
      const del = store.prepare('DELETE FROM counters WHERE key = ? RETURNING reset_at').pluck(true);
      live += store.transaction(() => {
        let n = 0;
        for (const k of keys.slice(i, i + SWEEP_CHUNK)) {
          const c = this.counters.get(k);
          const stored = del.get(k) as number | undefined;
          if (c === undefined && stored === undefined) continue;
          journal.append(k, 0, 0); // so a replay does not bring the counter back
          this.counters.delete(k);
          this.dirty.delete(k);
          if ((c?.resetAt ?? stored!) > now) n++;
        }
        return n;
      });
      if (i + SWEEP_CHUNK < keys.length) await yieldLoop();
    }
    return live;
  }

  async deleteByPrefix(prefix: string, accept: (rest: string) => boolean): Promise<number> {
    this.fold(); // the table now has every counter
    // Range scan on the primary key: every key that starts with `prefix` sorts in [prefix, prefix + U+FFFF).
    const matched: string[] = [];
    // `prefix` itself is never a whole key (a bucket always follows).
    let after = prefix;
    for (;;) {
      const page = this.owned().store.prepare('SELECT key FROM counters WHERE key > ? AND key < ? ORDER BY key LIMIT ?').pluck(true);
      const batch = page.all(after, `${prefix}\uffff`, SWEEP_CHUNK) as string[];
      for (const k of batch) if (accept(k.slice(prefix.length))) matched.push(k);
      if (batch.length < SWEEP_CHUNK) break;
      after = batch[batch.length - 1]!;
      await yieldLoop();
    }
    return this.deleteKeys(matched);
  }

  /** Delete ended windows, a chunk at a time, yielding between chunks; resolves to how many were deleted. */
  async sweep(): Promise<number> {
    if (!this.store) return 0;
    let total = 0;
    const del = 'DELETE FROM counters WHERE key IN (SELECT key FROM counters WHERE reset_at <= ? LIMIT ?)';
    try {
      this.fold();
      for (let i = 0; i < 10_000 && this.store; i++) {
        const n = this.store.prepare(del).run(this.clock.now(), SWEEP_CHUNK).changes;
        total += n;
        if (n < SWEEP_CHUNK) break;
        await yieldLoop();
      }
      const now = this.clock.now();
      for (const [k, c] of this.counters) if (c.resetAt <= now) this.counters.delete(k);
    } catch (e) {
      this.log.warn({ err: e }, 'rate limit: sweeping ended counters failed (will retry)');
    }
    return total;
  }

  /**
   * Write the changed counters into the table in one transaction, then empty the journal. A crash
   * between the two replays lines whose states the table already has: harmless.
   */
  fold(): void {
    this.foldQueued = false;
    const { store, journal } = this;
    if (!store || !journal || (this.dirty.size === 0 && this.records === 0)) return;
    const keys = this.dirty;
    const up = store.prepare(
      'INSERT INTO counters (key, count, reset_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET count = excluded.count, reset_at = excluded.reset_at',
    );
    const del = store.prepare('DELETE FROM counters WHERE key = ?');
    store.transaction(() => {
      for (const k of keys) {
        const c = this.counters.get(k);
        if (c) up.run(k, c.count, c.resetAt);
        else del.run(k);
      }
    });
    this.dirty = new Set();
    journal.clear();
    this.records = 0;
    if (this.counters.size > MAX_CACHED) {
      // Every counter is in the table now: drop the oldest from memory.
      for (const k of this.counters.keys()) {
        if (this.counters.size <= MAX_CACHED * 0.9) break;
        this.counters.delete(k);
      }
      this.partial = true;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.foldSafely();
    this.release();
  }

  /** Open the file with its lock held, load the table and replay the journal; false while another process holds the lock. */
  private take(): boolean {
    let store: Store;
    try {
      store = new Store(this.path, MIGRATIONS, { exclusive: true, busyTimeoutMs: LOCK_WAIT_MS });
    } catch (e) {
      if (isLockError(e)) return false;
      throw e;
    }
    try {
      this.store = store;
      this.journal = new HitJournal(this.journalPath);
      this.load();
      return true;
    } catch (e) {
      this.release();
      throw e;
    }
  }

  /** A hit on a store without the lock: try to take it (not more often than LOCK_RETRY_MS), else throw. */
  private retake(): HitJournal {
    if (this.closed) throw new Error(`rate limit file ${this.path} is closed`);
    const now = this.clock.now();
    if (now >= this.nextLockTry) {
      this.nextLockTry = now + LOCK_RETRY_MS;
      if (this.take()) {
        this.log.info({ path: this.path }, 'rate limit: took the counter file lock');
        return this.journal!;
      }
    }
    throw new Error(`rate limit file ${this.path} is locked by another process`);
  }

  private owned(): { store: Store; journal: HitJournal } {
    if (!this.store || !this.journal) this.retake();
    return { store: this.store!, journal: this.journal! };
  }

  /** The table's live counters (as many as fit), then the journal's lines over them. */
  private load(): void {
    const now = this.clock.now();
    this.counters.clear();
    this.dirty = new Set();
    const rows = this.store!.prepare('SELECT key, count, reset_at FROM counters WHERE reset_at > ? LIMIT ?')
      .raw(true)
      .all(now, MAX_CACHED + 1) as Array<[string, number, number]>;
    this.partial = rows.length > MAX_CACHED;
    for (const [key, count, resetAt] of rows.slice(0, MAX_CACHED)) this.counters.set(key, { count, resetAt });
    const replayed = this.journal!.read();
    for (const r of replayed) {
      if (r.count === 0 || r.resetAt <= now) this.counters.delete(r.key);
      else this.counters.set(r.key, { count: r.count, resetAt: r.resetAt });
      this.dirty.add(r.key);
    }
    this.records = replayed.length;
    this.fold();
  }

  private readCounter(key: string, now: number): Counter | undefined {
    const row = this.store!.prepare('SELECT count, reset_at FROM counters WHERE key = ?').raw(true).get(key) as [number, number] | undefined;
    if (!row || row[1] <= now) return undefined;
    const c = { count: row[0], resetAt: row[1] };
    this.counters.set(key, c);
    return c;
  }

  private foldSafely(): void {
    try {
      this.fold();
    } catch (e) {
      // The journal keeps every line until a fold succeeds.
      this.log.warn({ err: e }, 'rate limit: writing counters to the table failed (will retry)');
    }
  }

  private release(): void {
    try {
      this.journal?.close();
    } catch (e) {
      this.log.warn({ err: e, path: this.journalPath }, 'rate limit: closing the hit journal failed');
    }
    this.journal = null;
    this.store?.close();
    this.store = null;
  }
}

/** Where the file adapter keeps its counters: `file.path`, relative to the state dir. */
export function fileAdapterPath(cfg: FileAdapterConfig, stateDir: string): string {
  return isAbsolute(cfg.path) ? cfg.path : join(stateDir, cfg.path);
}

function keyPrefix(prefix: string): string {
  return prefix === '' || prefix.endsWith(':') ? prefix : `${prefix}:`;
}

function isLockError(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || /database is locked/i.test(String((e as Error).message));
}

function yieldLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
