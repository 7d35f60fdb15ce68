import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openStore, Store } from '../../src/store/index.js';

describe('Store', () => {
  it('applies numbered migrations once, in WAL mode, and reopens', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctl-store-'));
    try {
      const path = join(dir, 'database', 'x.db');
      const migrations = [
        { version: 1, up: 'CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)' },
        { version: 2, up: 'ALTER TABLE t ADD COLUMN w INTEGER NOT NULL DEFAULT 0' },
      ];
      const s = openStore(path, migrations);
      expect(s.version()).toBe(2);
      expect(s.db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(s.db.pragma('foreign_keys', { simple: true })).toBe(1);
      s.transaction(() => {
        for (let i = 0; i < 100; i++) s.prepare('INSERT INTO t (v, w) VALUES (?, ?)').run(`v${i}`, i);
      });
      s.reopen();
      expect(s.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 100 });
      s.close();
      const again = openStore(path, [...migrations, { version: 3, up: 'CREATE INDEX t_w ON t (w)' }]);
      expect(again.version()).toBe(3);
      again.close();
      expect(() => openStore(path, migrations)).toThrow(/newer than this program knows/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses gaps in migration numbers and rolls back a failing migration', () => {
    expect(() => openStore(':memory:', [{ version: 2, up: 'SELECT 1' }])).toThrow(/numbered 1..n/);
    const dir = mkdtempSync(join(tmpdir(), 'ctl-store-'));
    try {
      const path = join(dir, 'y.db');
      expect(() => openStore(path, [{ version: 1, up: 'CREATE TABLE a (x); CREATE TABLE broken (' }])).toThrow();
      const s = openStore(path, [{ version: 1, up: 'CREATE TABLE a (x)' }]);
      expect(s.version()).toBe(1);
      s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an exclusive store holds its file from open to close; a busy file fails the open within the wait', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctl-store-'));
    try {
      const path = join(dir, 'x.db');
      const migrations = [{ version: 1, up: 'CREATE TABLE t (x)' }];
      const owner = new Store(path, migrations, { exclusive: true, busyTimeoutMs: 10 });
      const other = new Database(path, { timeout: 10 });
      expect(() => other.prepare('SELECT count(*) FROM t').get()).toThrow(/locked/);
      const started = Date.now();
      expect(() => new Store(path, migrations, { exclusive: true, busyTimeoutMs: 10 })).toThrow(/locked/);
      expect(Date.now() - started).toBeLessThan(1000);
      owner.close();
      expect(other.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 });
      other.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Store.transaction', () => {
  it('commits, rolls back on a throw, nests as a savepoint, and works again after the store is reopened', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctl-store-tx-'));
    const s = new Store(join(dir, 'tx.db'), [{ version: 1, up: 'CREATE TABLE t (v INTEGER)' }]);
    try {
      const count = () => (s.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n;
      expect(s.transaction(() => (s.prepare('INSERT INTO t VALUES (1)').run(), 'done'))).toBe('done');
      expect(() =>
        s.transaction(() => {
          s.prepare('INSERT INTO t VALUES (2)').run();
          throw new Error('no');
        }),
      ).toThrow('no');
      expect(count()).toBe(1);
      s.transaction(() => {
        s.prepare('INSERT INTO t VALUES (3)').run();
        expect(() =>
          s.transaction(() => {
            s.prepare('INSERT INTO t VALUES (4)').run();
            throw new Error('inner');
          }),
        ).toThrow('inner');
      });
      expect(count()).toBe(2);
      s.reopen();
      s.transaction(() => s.prepare('INSERT INTO t VALUES (5)').run());
      expect(count()).toBe(3);
    } finally {
      s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
