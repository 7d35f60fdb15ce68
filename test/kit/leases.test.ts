/**
 * Leases for scheduled work on a private PostgreSQL: one holder at a time, kept while its connection
 * lives, handed to the next asker when it is released, when its daemon closes, or when the server
 * ends its session (what a killed daemon leaves behind).
 */
import { afterAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import pino from 'pino';
import { SharedPostgres } from '../../src/store/postgres.js';
import { postgresForThisFile } from '../helpers/file-postgres.js';
import { PG_BIN } from '../helpers/postgres-server.js';

const quiet = pino({ level: 'silent' });

describe.skipIf(!PG_BIN)('leases', () => {
  const server = postgresForThisFile();
  const open: SharedPostgres[] = [];
  afterAll(async () => {
    for (const db of open) await db.close();
  });
  const daemon = async () => {
    const db = await SharedPostgres.connect(server().url(), quiet);
    open.push(db);
    return db;
  };

  it('one holder at a time; released, closed or cut off, the next asker gets it', async () => {
    const [a, b] = [await daemon(), await daemon()];
    expect(await a.leases.hold('job')).toBe(true);
    expect(await a.leases.hold('job')).toBe(true); // still its own
    expect(await b.leases.hold('job')).toBe(false);
    expect(await b.leases.hold('other')).toBe(true); // leases are per name
    expect(a.heldLeases()).toEqual(['job']);

    await a.leases.release('job');
    expect(await b.leases.hold('job')).toBe(true);
    expect(await a.leases.hold('job')).toBe(false);

    await b.close();
    expect(await a.leases.hold('job')).toBe(true);

    // The server ends the holder's lease session (as when its daemon is killed): the next asker gets it.
    const c = await daemon();
    expect(await c.leases.hold('job')).toBe(false);
    const admin = new pg.Client({ connectionString: server().url() });
    await admin.connect();
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'ctl-leases' AND pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted)");
    await admin.end();
    // pg_terminate_backend returns before the backend has exited and let go of its locks.
    const until = Date.now() + 5000;
    let got = await c.leases.hold('job');
    while (!got && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
      got = await c.leases.hold('job');
    }
    expect(got).toBe(true);
    expect(await a.leases.hold('job')).toBe(false); // its connection is gone: it knows it no longer holds it
  });
});
