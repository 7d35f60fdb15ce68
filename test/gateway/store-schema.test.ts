/**
 * The gateway's SQLite schema is assembled from the tables each capability declares beside its
 * queries. These tests pin the result to what the single-file store created (fixtures written by it):
 * a fresh database gets the same objects in the same order, every intermediate version is the same,
 * and a database an older daemon left at version 5 migrates to the same schema with its rows kept.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { assembleMigrations, GATEWAY_MIGRATIONS, gatewayPgMigrations, type SchemaStep } from '../../src/gateway/schema.js';
import { CONFIG_PG_SCHEMA } from '../../src/gateway/config/pg-store.js';
import { REQUEST_LOG_MIGRATION } from '../../src/gateway/request-log/store.js';
import { MEMORY_MIGRATION } from '../../src/gateway/memory/store.js';
import { FILES_MIGRATION } from '../../src/gateway/files/store.js';
import { BATCHES_MIGRATION } from '../../src/gateway/batches/store.js';
import { WEBHOOK_QUEUE_MIGRATION } from '../../src/gateway/webhooks/store.js';

const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);

interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

const objects = (s: Store): SchemaObject[] =>
  s.db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid').all() as SchemaObject[];

/** sha256 (first 16 hex digits) of the schema at each version, as the single-file store created it. */
const AT_VERSION: Record<number, string> = {
  1: 'c5e3201414d3e37b',
  2: '0e431e5e903e8710',
  3: 'ac87d7732fb28813',
  4: '4ab6f50ac595e310',
  5: '6f80d00289130b5e',
  6: '1a8cf60790422102',
  7: '553eb99abc20e1b8',
  8: 'e1c903750e00287f',
  9: 'a09175626b1d5548',
  10: '55d4f3c28bc47959',
  11: '936dc38f8bbf0634',
  12: '060b95ccbf5268ca',
  13: '007fd546e5b3551b',
  14: 'c94ce7df2e0b82ae',
  15: 'ab0366920d389d49',
  16: 'ff2c22118889e745',
  17: 'cd92d3d1806daf37',
  18: '0a06c19c395abde8',
  19: 'e4885252d484489f',
};

const dir = mkdtempSync(join(tmpdir(), 'ctl-gw-schema-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('gateway SQLite schema', () => {
  it('gives a fresh database the same tables, indexes and triggers, in the same order', () => {
    const expected = JSON.parse(readFileSync(fixture('gateway-schema-v19.json'), 'utf8')) as { version: number; objects: SchemaObject[] };
    const s = openStore(':memory:', GATEWAY_MIGRATIONS);
    expect(s.version()).toBe(expected.version);
    expect(objects(s)).toEqual(expected.objects);
    s.close();
  });

  it('reaches the same schema at every intermediate version', () => {
    expect(GATEWAY_MIGRATIONS.length).toBe(Object.keys(AT_VERSION).length);
    for (let v = 1; v <= GATEWAY_MIGRATIONS.length; v++) {
      const s = openStore(':memory:', GATEWAY_MIGRATIONS.slice(0, v));
      const hash = createHash('sha256').update(JSON.stringify(objects(s))).digest('hex').slice(0, 16);
      expect({ v, hash }).toEqual({ v, hash: AT_VERSION[v] });
      s.close();
    }
  });

  it('migrates a database an older daemon left at version 5, keeping its rows', () => {
    const path = join(dir, 'gateway.db');
    const old = new Database(path);
    old.exec(readFileSync(fixture('gateway-v5.sql'), 'utf8'));
    old.prepare(`INSERT INTO providers (id, kind, name, base_url, created_at, updated_at) VALUES ('p1', 'openai', 'P', 'http://127.0.0.1:1', 1, 1)`).run();
    old.prepare(`INSERT INTO request_log (request_id, ts, endpoint, status) VALUES ('r1', 5, '/v1/chat/completions', 200)`).run();
    old.prepare(`INSERT INTO api_keys (id, name, key_hash, key_prefix, models, scopes, created_at) VALUES ('k1', 'k', 'h', 'sk-', '[]', '[]', 1)`).run();
    expect(old.pragma('user_version', { simple: true })).toBe(5);
    old.close();

    const s = openStore(path, GATEWAY_MIGRATIONS);
    expect(s.version()).toBe(GATEWAY_MIGRATIONS.length);
    const fresh = openStore(':memory:', GATEWAY_MIGRATIONS);
    expect(objects(s)).toEqual(objects(fresh));
    expect(s.db.prepare('SELECT id, name FROM providers').all()).toEqual([{ id: 'p1', name: 'P' }]);
    expect(s.db.prepare('SELECT request_id, guardrails FROM request_log').all()).toEqual([{ request_id: 'r1', guardrails: null }]);
    expect(s.db.prepare('SELECT id, rpm, account_id FROM api_keys').all()).toEqual([{ id: 'k1', rpm: null, account_id: null }]);
    s.close();
    fresh.close();
  });
});

describe('gateway PostgreSQL schema', () => {
  it('places the tables of each capability at the version that daemons sharing a database have already recorded', () => {
    const tables = (sql: string) => [...sql.matchAll(/CREATE TABLE (\w+)/g)].map((m) => m[1]);
    expect(gatewayPgMigrations().map((m) => ({ version: m.version, tables: tables(m.up) }))).toEqual([
      { version: 1, tables: ['gw_config'] },
      { version: 2, tables: tables(REQUEST_LOG_MIGRATION) },
      { version: 3, tables: tables(MEMORY_MIGRATION) },
      { version: 4, tables: [...tables(FILES_MIGRATION), ...tables(BATCHES_MIGRATION)] },
      { version: 5, tables: tables(WEBHOOK_QUEUE_MIGRATION) },
    ]);
    expect(gatewayPgMigrations().map((m) => m.up)).toEqual([
      CONFIG_PG_SCHEMA[0]!.up,
      REQUEST_LOG_MIGRATION,
      MEMORY_MIGRATION,
      `${FILES_MIGRATION}\n${BATCHES_MIGRATION}`,
      WEBHOOK_QUEUE_MIGRATION,
    ]);
  });
});

describe('assembleMigrations', () => {
  it('joins the steps of each version in the order the schemas are listed', () => {
    const a: SchemaStep[] = [
      { version: 1, up: 'CREATE TABLE a (x);' },
      { version: 2, up: 'ALTER TABLE a ADD COLUMN y;' },
    ];
    const b: SchemaStep[] = [{ version: 1, up: 'CREATE TABLE b (x);' }];
    expect(assembleMigrations([a, b])).toEqual([
      { version: 1, up: 'CREATE TABLE a (x);\nCREATE TABLE b (x);' },
      { version: 2, up: 'ALTER TABLE a ADD COLUMN y;' },
    ]);
  });

  it('refuses a gap in the version numbers', () => {
    expect(() => assembleMigrations([[{ version: 1, up: 'SELECT 1;' }, { version: 3, up: 'SELECT 3;' }]])).toThrow(/no step has version 2/);
  });
});
