/**
 * A frozen PostgreSQL (every server process SIGSTOPped: connections open, nothing answers): a write
 * through SharedPostgres fails after QUERY_TIMEOUT_MS (it used to hang 10 s), the next ones fail at
 * once while the database is marked down, and it is used again by itself once the server answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { QUERY_TIMEOUT_MS, SharedPostgres } from '../../src/store/postgres.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';

describe.skipIf(!PG_BIN)('a frozen PostgreSQL', () => {
  if (!PG_BIN) console.log(PG_SKIP_REASON);
  let server: PostgresServer;
  let db: SharedPostgres;
  beforeAll(async () => {
    server = await PostgresServer.start();
    db = await SharedPostgres.connect(await server.createDatabase('frozen'), pino({ level: 'silent' }));
    await db.query('CREATE TABLE t (v INTEGER)');
  }, 60_000);
  afterAll(async () => {
    server?.thaw();
    await db?.close();
    await server?.destroy();
  });

  it('writes fail within the query timeout, then at once, and work again after the thaw', async () => {
    server.freeze();
    try {
      const t0 = Date.now();
      await expect(db.command('INSERT INTO t VALUES (1)')).rejects.toThrow();
      const first = Date.now() - t0;
      const t1 = Date.now();
      await expect(db.command('INSERT INTO t VALUES (2)')).rejects.toThrow();
      const next = Date.now() - t1;
      console.log(`frozen PostgreSQL: first write failed after ${first} ms, the next after ${next} ms`);
      expect(first).toBeLessThan(QUERY_TIMEOUT_MS + 1500);
      expect(next).toBeLessThan(100);
    } finally {
      server.thaw();
    }
    let ok = false;
    for (let i = 0; i < 100 && !ok; i++) {
      ok = await db.command('INSERT INTO t VALUES (3)').then(
        () => true,
        () => false,
      );
      if (!ok) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ok).toBe(true);
  }, 30_000);
});
