/**
 * The store's query layer (src/store/sql.ts) on SQLite: a transaction whose steps await keeps other requests'
 * statements out (they wait for it, so a rollback takes none of theirs); placeholders and table
 * names as PostgreSQL gets them.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { numberPlaceholders, PgText, SqliteSql } from '../../src/store/sql.js';
import { NODES_TABLES } from '../../src/nodes/schema.js';
import { pgPipelineText } from '../../src/pipeline/data/tables.js';
import { Store } from '../../src/store/index.js';

const dir = mkdtempSync(join(tmpdir(), 'ctl-pipeline-sql-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const migrations = [{ version: 1, up: 'CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at TEXT NOT NULL);' }];

describe('SqliteSql', () => {
  it('keeps a statement issued during an awaiting transaction out of it: the rollback takes only its own', async () => {
    const store = new Store(join(dir, 'a.db'), migrations);
    const sql = new SqliteSql(store);
    let release!: () => void;
    const paused = new Promise<void>((r) => (release = r));
    let begun!: () => void;
    const inside = new Promise<void>((r) => (begun = r));
    const tx = sql
      .transaction(async (t) => {
        await t.run("INSERT INTO settings VALUES ('in-tx', '1', 'now')");
        begun();
        await paused;
        throw new Error('roll back');
      })
      .catch((e: Error) => e.message);
    await inside;
    // Another request's write while the transaction waits: it must not land inside it.
    const outside = sql.run("INSERT INTO settings VALUES ('outside', '1', 'now')");
    await new Promise((r) => setTimeout(r, 20));
    expect(store.prepare('SELECT key FROM settings').all()).toEqual([{ key: 'in-tx' }]);
    release();
    expect(await tx).toBe('roll back');
    expect(await outside).toBe(1);
    expect((await sql.all<{ key: string }>('SELECT key FROM settings ORDER BY key')).map((r) => r.key)).toEqual(['outside']);
    store.close();
  });

  it('commits a transaction whose steps await, and answers ids and changed rows', async () => {
    const store = new Store(join(dir, 'b.db'), [{ version: 1, up: 'CREATE TABLE posts (id INTEGER PRIMARY KEY AUTOINCREMENT, content TEXT NOT NULL);' }]);
    const sql = new SqliteSql(store);
    const ids = await sql.transaction(async (t) => [await t.insert("INSERT INTO posts (content) VALUES ('a')"), await t.insert("INSERT INTO posts (content) VALUES ('b')")]);
    expect(ids).toEqual([1, 2]);
    expect(await sql.run("UPDATE posts SET content = 'c' WHERE id > ?", 0)).toBe(2);
    expect(await sql.get<{ n: number }>('SELECT count(*) AS n FROM posts')).toEqual({ n: 2 });
    store.close();
  });
  it('runs two transactions started in the same turn one after the other, not the second inside the first', async () => {
    const store = new Store(join(dir, 'c.db'), migrations);
    const sql = new SqliteSql(store);
    const write = (key: string) =>
      sql.transaction(async (t) => {
        await t.run("INSERT INTO settings VALUES (?, '1', 'now')", key);
        await new Promise((r) => setTimeout(r, 5));
        return (await t.all<{ key: string }>('SELECT key FROM settings ORDER BY key')).map((r) => r.key);
      });
    expect(await Promise.all([write('a'), write('b')])).toEqual([['a'], ['a', 'b']]);
    store.close();
  });

  it('answers a failing statement with a rejected promise, not an exception at the call', async () => {
    const store = new Store(join(dir, 'd.db'), migrations);
    const sql = new SqliteSql(store);
    let answer: Promise<number> | undefined;
    expect(() => (answer = sql.run('INSERT INTO nowhere VALUES (1)'))).not.toThrow();
    await expect(answer).rejects.toThrow(/no such table/);
    await expect(sql.insert("INSERT INTO settings VALUES ('k', '1', 'now')")).resolves.toBe(1);
    await expect(sql.insert("INSERT INTO settings VALUES ('k', '1', 'now')")).rejects.toThrow(/UNIQUE/);
    store.close();
  });
  it('answers rows as arrays of values, leaving the same statement answering objects elsewhere', async () => {
    const store = new Store(join(dir, 'e.db'), migrations);
    const sql = new SqliteSql(store);
    await sql.run("INSERT INTO settings VALUES ('k', 'v', 'now')");
    const text = 'SELECT key, value FROM settings WHERE key = ?';
    expect(await sql.values(text, 'k')).toEqual([['k', 'v']]);
    expect(await sql.all(text, 'k')).toEqual([{ key: 'k', value: 'v' }]);
    store.close();
  });
});

describe('SQL for PostgreSQL', () => {
  it('numbers placeholders outside quoted text and prefixes the pipeline tables, not columns or literals', () => {
    expect(numberPlaceholders("SELECT * FROM posts WHERE a = ? AND b = '?' AND c = ?")).toBe("SELECT * FROM posts WHERE a = $1 AND b = '?' AND c = $2");
    expect(pgPipelineText("UPDATE posts SET category = ? WHERE lower(category) = lower(?) AND content LIKE '%posts%'")).toBe(
      "UPDATE pl_posts SET category = $1 WHERE lower(category) = lower($2) AND content LIKE '%posts%'",
    );
    expect(pgPipelineText('SELECT s.* FROM sources s LEFT JOIN categories c ON lower(c.name) = lower(s.category)')).toBe(
      'SELECT s.* FROM pl_sources s LEFT JOIN pl_categories c ON lower(c.name) = lower(s.category)',
    );
  });

  it('names the node monitor tables as the shared database has them, three of them renamed', () => {
    const text = new PgText(NODES_TABLES);
    expect(text.convert('SELECT * FROM nodes n JOIN node_state s ON s.ip = n.ip WHERE n.ip IN (SELECT ip FROM crawl_nodes) AND s.sync_state = ?')).toBe(
      'SELECT * FROM nm_nodes n JOIN nm_state s ON s.ip = n.ip WHERE n.ip IN (SELECT ip FROM nm_crawl) AND s.sync_state = $1',
    );
    expect(text.convert("DELETE FROM node_history WHERE ip = 'node_history'")).toBe("DELETE FROM nm_history WHERE ip = 'node_history'");
  });
});
