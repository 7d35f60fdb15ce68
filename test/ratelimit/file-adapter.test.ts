import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/http/clock.js';
import { FileCounterStore } from '../../src/ratelimit/file-adapter.js';
import { silentLog, tempStateDir } from './harness.js';

describe('file adapter (SQLite counters)', () => {
  let t: ReturnType<typeof tempStateDir>;
  let clock: ManualClock;
  let store: FileCounterStore;

  beforeEach(() => {
    t = tempStateDir();
    clock = new ManualClock();
    store = new FileCounterStore({ path: 'ratelimit.db', prefix: 'rl' }, t.dir, clock, silentLog);
  });
  afterEach(async () => {
    await store.close();
    t.cleanup();
  });

  it('keeps the file under the state dir, with the prefix on every key', () => {
    expect(store.path).toBe(join(t.dir, 'ratelimit.db'));
    expect(store.prefix).toBe('rl:');
  });

  it('counts every hit in a window anchored at the first hit, and starts a new one after it ends', () => {
    expect(store.hit('k', 60_000)).toEqual({ count: 1, ttlMs: 60_000 });
    clock.advance(25_000);
    expect(store.hit('k', 60_000)).toEqual({ count: 2, ttlMs: 35_000 });
    clock.advance(34_999);
    expect(store.hit('k', 60_000)).toEqual({ count: 3, ttlMs: 1 });
    clock.advance(1);
    expect(store.hit('k', 60_000)).toEqual({ count: 1, ttlMs: 60_000 });
  });

  it('keeps keys apart', () => {
    store.hit('a', 1000);
    store.hit('a', 1000);
    expect(store.hit('b', 1000).count).toBe(1);
  });

  it('allows exactly the limit: the 100th hit counts 100, the 101st 101', () => {
    let last = 0;
    for (let i = 0; i < 100; i++) last = store.hit('edge', 60_000).count;
    expect(last).toBe(100);
    expect(store.hit('edge', 60_000).count).toBe(101);
  });

  it('throws (the guard then blocks) when another writer holds the lock past the wait', () => {
    const other = new Database(store.path);
    other.exec('BEGIN EXCLUSIVE');
    try {
      const started = Date.now();
      expect(() => store.hit('k', 1000)).toThrow(/locked|busy/i);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    expect(store.hit('k', 1000).count).toBe(1);
  });

  it('throws when the state cannot be read (closed database)', async () => {
    await store.close();
    expect(() => store.hit('k', 1000)).toThrow();
  });

  it('deletes exact keys and prefixes, counting live counters only', async () => {
    store.hit('rl:s:GET:/a:1.1.1.1', 1000);
    store.hit('rl:s:GET:/a:2.2.2.2', 1000);
    store.hit('rl:s:GET:/a/b:1.1.1.1', 1000);
    store.hit('rl:s:POST:/a:1.1.1.1', 10);
    clock.advance(20); // the POST window ended
    expect(await store.deleteKeys(['rl:s:POST:/a:1.1.1.1', 'rl:missing'])).toBe(0);
    expect(await store.deleteByPrefix('rl:s:GET:/a:', (rest) => !rest.includes('/'))).toBe(2);
    expect(store.hit('rl:s:GET:/a/b:1.1.1.1', 1000).count).toBe(2);
    expect(await store.deleteByPrefix('rl:', () => true)).toBe(1);
  });

  it('pages through many keys when deleting by prefix', async () => {
    for (let i = 0; i < 1234; i++) store.hit(`rl:s:GET:/p:10.0.${i >> 8}.${i & 255}`, 1000);
    store.hit('rl:s:GET:/q:10.0.0.1', 1000);
    expect(await store.deleteByPrefix('rl:s:GET:/p:', () => true)).toBe(1234);
    expect(store.hit('rl:s:GET:/q:10.0.0.1', 1000).count).toBe(2);
  });

  it('sweeps ended windows', async () => {
    for (let i = 0; i < 1200; i++) store.hit(`old${i}`, 1000);
    store.hit('fresh', 10_000);
    clock.advance(5000);
    expect(await store.sweep()).toBe(1200);
    expect(store.hit('fresh', 10_000).count).toBe(2);
  });

  it('keeps counters across a close and reopen (they are on disk)', async () => {
    store.hit('k', 60_000);
    store.hit('k', 60_000);
    await store.close();
    store = new FileCounterStore({ path: 'ratelimit.db', prefix: 'rl' }, t.dir, clock, silentLog);
    expect(store.hit('k', 60_000).count).toBe(3);
  });

  it('counts exactly when several processes hit the same file at once (SQLite locking)', async () => {
    // Four processes, 250 hits each, with this process's store open too: the file must end at 1000 + 1.
    const script = `
      const Database = require('better-sqlite3');
      const db = new Database(process.env.DB);
      db.pragma('busy_timeout = 5000');
      const st = db.prepare(process.env.SQL).raw(true);
      let max = 0;
      for (let i = 0; i < 250; i++) max = Math.max(max, st.get('shared', Date.now(), 600000, Date.now(), Date.now(), Date.now(), 600000)[0]);
      process.stdout.write(String(max));
    `;
    const { HIT_SQL_FOR_TESTS } = await import('../../src/ratelimit/file-adapter.js');
    const runs = Array.from({ length: 4 }, () =>
      new Promise<number>((resolve, reject) => {
        const p = spawn(process.execPath, ['-e', script], {
          env: { ...process.env, DB: store.path, SQL: HIT_SQL_FOR_TESTS },
          cwd: process.cwd(),
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let out = '';
        p.stdout.on('data', (d: Buffer) => (out += d.toString()));
        p.on('exit', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`child exited ${code}`))));
      }),
    );
    const maxes = await Promise.all(runs);
    expect(Math.max(...maxes)).toBeLessThanOrEqual(1000);
    clock.set(Date.now());
    expect(store.hit('shared', 600_000).count).toBe(1001);
  });
});
