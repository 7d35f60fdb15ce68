/**
 * For the `*.pg.test.ts` files: start a private PostgreSQL for the file and run every gateway of it
 * with `storage.postgres`, one database per state dir (a restart on the same dir finds its data).
 * Call at the top level, before importing the suites to run again.
 */
import { afterAll, beforeAll } from 'vitest';
import pino from 'pino';
import { SharedPostgres } from '../../src/store/postgres.js';
import { PostgresServer } from '../helpers/postgres-server.js';
import { gatewaysOnPostgres } from './harness.js';

export function gatewaySuitesOnPostgres(prefix: string): { server(): PostgresServer } {
  let server: PostgresServer | undefined;
  const open = new Map<string, SharedPostgres>();
  beforeAll(async () => {
    server = await PostgresServer.start();
  }, 60_000);
  afterAll(async () => {
    for (const db of open.values()) await db.close();
    await server?.destroy();
  });
  gatewaysOnPostgres(async (dir) => {
    let db = open.get(dir);
    if (!db) open.set(dir, (db = await SharedPostgres.connect(await server!.createDatabase(`${prefix}_${open.size}`), pino({ level: 'silent' }))));
    return db;
  });
  return { server: () => server! };
}
