import { isAbsolute, join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../http/clock.js';
import { Store, type Migration, type Statement } from '../store/index.js';
import type { CounterStore, HitResult } from './adapter.js';
import type { FileAdapterConfig } from './config.js';

const MIGRATIONS: Migration[] = [
  {
    version: 1,
    // No index on reset_at: it would be rewritten on every hit; the sweep scans instead, in chunks.
    up: `CREATE TABLE counters (
           key TEXT PRIMARY KEY,
           count INTEGER NOT NULL,
           reset_at INTEGER NOT NULL
         ) WITHOUT ROWID;`,
  },
];

/**
 * One statement does the whole hit under SQLite's write lock (so other processes on the same file
 * serialise with us): start a window at the first hit or once the old one ended, else count up.
 * SET expressions read the row as it was, so both CASEs see the old reset_at.
 */
const HIT_SQL = `INSERT INTO counters (key, count, reset_at) VALUES (?, 1, ? + ?)
  ON CONFLICT (key) DO UPDATE SET
    count = CASE WHEN reset_at <= ? THEN 1 ELSE count + 1 END,
    reset_at = CASE WHEN reset_at <= ? THEN ? + ? ELSE reset_at END
  RETURNING count, reset_at`;

/** The hit statement, for tests that drive the same file from other processes (parameters as in hit()). */
export const HIT_SQL_FOR_TESTS = HIT_SQL;

/**
 * How long a hit may wait for another writer's lock. better-sqlite3 waits synchronously, so this is
 * kept short: a hit that cannot get the lock in time is blocked (the seed's fail-closed rule).
 */
export const LOCK_WAIT_MS = 25;
const SWEEP_EVERY_MS = 60_000;
const SWEEP_CHUNK = 500;

/** The embedded adapter: counters in an SQLite file (WAL) under the state dir. */
export class FileCounterStore implements CounterStore {
  readonly name = 'file' as const;
  readonly onStoreError = 'block' as const;
  readonly prefix: string;
  readonly path: string;
  private readonly store: Store;
  private hitStmt: Statement;
  private sweepTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    cfg: FileAdapterConfig,
    stateDir: string,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    this.prefix = cfg.prefix === '' || cfg.prefix.endsWith(':') ? cfg.prefix : `${cfg.prefix}:`;
    this.path = isAbsolute(cfg.path) ? cfg.path : join(stateDir, cfg.path);
    this.store = new Store(this.path, MIGRATIONS);
    this.store.db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
    this.hitStmt = this.store.prepare(HIT_SQL).raw(true);
    this.sweepTimer = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    this.sweepTimer.unref();
  }

  hit(key: string, windowMs: number): HitResult {
    const now = this.clock.now();
    // Positional parameters in statement order (key, now, window, now, now, now, window).
    const row = this.hitStmt.get(key, now, windowMs, now, now, now, windowMs) as [number, number];
    return { count: row[0], ttlMs: row[1] - now };
  }

  async deleteKeys(keys: readonly string[]): Promise<number> {
    const now = this.clock.now();
    const del = this.store.prepare('DELETE FROM counters WHERE key = ? RETURNING reset_at').pluck(true);
    let live = 0;
    // Chunked so a reset of many keys never holds the loop for long.
    for (let i = 0; i < keys.length; i += SWEEP_CHUNK) {
      const chunk = keys.slice(i, i + SWEEP_CHUNK);
      live += this.store.transaction(() => {
        let n = 0;
        for (const k of chunk) {
          const resetAt = del.get(k) as number | undefined;
          if (resetAt !== undefined && resetAt > now) n++;
        }
        return n;
      });
      if (i + SWEEP_CHUNK < keys.length) await yieldLoop();
    }
    return live;
  }

  async deleteByPrefix(prefix: string, accept: (rest: string) => boolean): Promise<number> {
    // Range scan on the primary key: every key that starts with `prefix` sorts in [prefix, prefix + U+FFFF).
    const page = this.store
      .prepare('SELECT key FROM counters WHERE key > ? AND key < ? ORDER BY key LIMIT ?')
      .pluck(true);
    const matched: string[] = [];
    // '' sorts before any key, and `prefix` itself is never a whole key (a bucket always follows).
    let after = prefix;
    for (;;) {
      const batch = page.all(after, `${prefix}\uffff`, SWEEP_CHUNK) as string[];
      for (const k of batch) if (accept(k.slice(prefix.length))) matched.push(k);
      if (batch.length < SWEEP_CHUNK) break;
      after = batch[batch.length - 1]!;
      await yieldLoop();
    }
    return this.deleteKeys(matched);
  }

  /** Delete ended windows, a chunk at a time, yielding between chunks. */
  async sweep(): Promise<number> {
    let total = 0;
    const del = 'DELETE FROM counters WHERE key IN (SELECT key FROM counters WHERE reset_at <= ? LIMIT ?)';
    try {
      for (let i = 0; i < 10_000 && !this.closed; i++) {
        const n = this.store.prepare(del).run(this.clock.now(), SWEEP_CHUNK).changes;
        total += n;
        if (n < SWEEP_CHUNK) break;
        await yieldLoop();
      }
    } catch (e) {
      this.log.warn({ err: e }, 'rate limit: sweeping ended counters failed (will retry)');
    }
    return total;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweepTimer);
    this.store.close();
  }
}

function yieldLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
