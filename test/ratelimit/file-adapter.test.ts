import { spawn } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/http/clock.js';
import { FileCounterStore, LOCK_RETRY_MS } from '../../src/ratelimit/file-adapter.js';
import { ROOT } from '../helpers/daemon.js';
import { silentLog, tempStateDir } from './harness.js';

describe('file adapter (counters in memory, hit journal, SQLite table)', () => {
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

  it('holds the file: no other connection can read or write it while the store is open', () => {
    store.hit('k', 1000);
    const other = new Database(store.path, { timeout: 10 });
    try {
      expect(() => other.prepare('SELECT count(*) FROM counters').get()).toThrow(/locked|busy/i);
    } finally {
      other.close();
    }
  });

  it('blocks every hit (throws) while another process holds the file, and counts once it can take the lock', async () => {
    await store.close();
    const other = new Database(store.path);
    other.exec('BEGIN EXCLUSIVE');
    try {
      const started = Date.now();
      store = new FileCounterStore({ path: 'ratelimit.db', prefix: 'rl' }, t.dir, clock, silentLog);
      expect(() => store.hit('k', 1000)).toThrow(/locked/i);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    expect(() => store.hit('k', 1000)).toThrow(/locked/i); // not retried before LOCK_RETRY_MS
    clock.advance(LOCK_RETRY_MS);
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

  it('keeps every answered hit when its process is killed with -9, and blocks a second process meanwhile', async () => {
    await store.close();
    // A child process hits 300 times, says so, and is killed before it could fold or close.
    const script = `
      const { FileCounterStore } = await import(process.env.ADAPTER);
      const log = { warn() {}, info() {} };
      const s = new FileCounterStore({ path: 'ratelimit.db', prefix: 'rl' }, process.env.DIR, { now: () => Date.now() }, log);
      let last = 0;
      for (let i = 0; i < 300; i++) last = s.hit('shared', 600000).count;
      process.stdout.write(String(last) + '\\n');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, DIR: t.dir, ADAPTER: pathToFileURL(join(ROOT, 'dist/src/ratelimit/file-adapter.js')).href },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const said = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.endsWith('\n')) resolve(out.trim());
      });
      child.on('exit', (code) => reject(new Error(`child exited ${code} before answering`)));
    });
    expect(said).toBe('300');
    clock.set(Date.now());
    store = new FileCounterStore({ path: 'ratelimit.db', prefix: 'rl' }, t.dir, clock, silentLog);
    expect(() => store.hit('shared', 600_000)).toThrow(/locked/i); // the child still holds the file
    await store.close();
    const exited = new Promise((r) => child.on('exit', r));
    child.kill('SIGKILL');
    await exited;
    store = new FileCounterStore({ path: 'ratelimit.db', prefix: 'rl' }, t.dir, clock, silentLog);
    expect(store.hit('shared', 600_000).count).toBe(301);
  });

  it('replays the journal it finds at open, skipping a torn last line and ended windows', async () => {
    // What a crash can leave: whole lines (full states, oldest first), then half of one.
    const dir = `${t.dir}/replay`;
    mkdirSync(dir);
    const until = clock.now() + 60_000;
    writeFileSync(
      `${dir}/ratelimit.db-hits`,
      `1\t${until}\t"a"\n2\t${until}\t"a"\n1\t${clock.now()}\t"ended"\n5\t${until}\t"gone"\n0\t0\t"gone"\n7\t99`,
    );
    const replayed = new FileCounterStore({ path: 'ratelimit.db', prefix: 'rl' }, dir, clock, silentLog);
    try {
      expect(replayed.hit('a', 60_000)).toEqual({ count: 3, ttlMs: 60_000 });
      expect(replayed.hit('ended', 60_000).count).toBe(1);
      expect(replayed.hit('gone', 60_000).count).toBe(1);
      expect(statSync(`${dir}/ratelimit.db-hits`).size).toBeGreaterThan(0); // this open folded, then these hits
    } finally {
      await replayed.close();
    }
  });

  it('folds the journal into the table and empties it', () => {
    for (let i = 0; i < 10; i++) store.hit(`k${i}`, 60_000);
    expect(statSync(`${store.path}-hits`).size).toBeGreaterThan(0);
    store.fold();
    expect(statSync(`${store.path}-hits`).size).toBe(0);
    expect(store.hit('k3', 60_000).count).toBe(2);
  });
});
