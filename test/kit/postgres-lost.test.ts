/**
 * PostgreSQL going away in the middle of a transaction (the server killed, as a crash or a pulled
 * cable): the transaction fails as unavailable, the database is marked down, and the process lives
 * on. The pool stops listening to a connection while it is lent out, so the client's 'error' event
 * used to go unheard and crash the daemon (every daemon writing at that moment died). Once the
 * server answers again every subscriber reloads, whether or not its notification connection broke.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { SharedPostgres } from '../../src/store/postgres.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';

describe.skipIf(!PG_BIN)('PostgreSQL lost during a transaction', () => {
  if (!PG_BIN) console.log(PG_SKIP_REASON);
  let server: PostgresServer;
  let db: SharedPostgres;
  beforeAll(async () => {
    server = await PostgresServer.start();
    db = await SharedPostgres.connect(await server.createDatabase('lost'), pino({ level: 'silent' }));
    await db.query('CREATE TABLE t (v INTEGER)');
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await server?.destroy();
  });

  it('fails the transaction without an uncaught error, and writes work again once the server is back', async () => {
    const uncaught: unknown[] = [];
    const record = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', record);
    try {
      let inside!: () => void;
      const entered = new Promise<void>((r) => (inside = r));
      const tx = db.transaction(async (q) => {
        await q.command('INSERT INTO t VALUES (1)');
        inside();
        // Between two statements (no query running) the server goes away.
        await new Promise((r) => setTimeout(r, 500));
        await q.command('INSERT INTO t VALUES (2)');
      });
      await entered;
      await server.stop();
      await expect(tx).rejects.toThrow(/unavailable|terminated/i);
      expect(db.available).toBe(false);
      await new Promise((r) => setTimeout(r, 200));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', record);
      await server.start();
    }
    let ok = false;
    for (let i = 0; i < 100 && !ok; i++) {
      // The test server runs with synchronous_commit off: a kill may lose the table itself.
      ok = await db.transaction(async (q) => {
        await q.command('CREATE TABLE IF NOT EXISTS t (v INTEGER)');
        await q.command('INSERT INTO t VALUES (3)');
      }).then(
        () => true,
        () => false,
      );
      if (!ok) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ok).toBe(true);
    expect((await db.query<{ v: number }>('SELECT v FROM t ORDER BY v')).map((r) => r.v)).toEqual([3]);
  }, 30_000);

  it('subscribers reload once the database answers again, also when their listener stayed connected', async () => {
    // Reloads that read something: what a subscriber does after missing notifications.
    let reloaded = 0;
    const unsubscribe = await db.subscribe('ctl_test_lost', () => {}, () => {
      void db.query('SELECT 1').then(() => reloaded++, () => {});
    });
    try {
      // A frozen server keeps the notification connection open: only the queries notice it.
      server.freeze();
      try {
        await expect(db.query('SELECT 1')).rejects.toThrow();
        expect(db.available).toBe(false);
      } finally {
        server.thaw();
      }
      // The probe finds the server back within a second (every 0.5 s); a follow-up read of a
      // notification failed meanwhile, and nothing had the subscribers read again.
      const t0 = Date.now();
      while (reloaded === 0 && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 50));
      expect(db.available).toBe(true);
      expect(reloaded).toBeGreaterThan(0);
    } finally {
      unsubscribe();
    }
  }, 30_000);
});
