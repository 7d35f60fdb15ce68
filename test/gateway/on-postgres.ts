/**
 * For the `*.pg.test.ts` files: start a private PostgreSQL for the file and run every gateway of it
 * with `storage.postgres`, one database per state dir (a restart on the same dir finds its data).
 * Call at the top level, before importing the suites to run again.
 */
import { afterAll } from 'vitest';
import pino from 'pino';
import { SharedPostgres } from '../../src/store/postgres.js';
import type { PostgresServer } from '../helpers/postgres-server.js';
import { postgresForThisFile } from '../helpers/file-postgres.js';
import { gatewaysOnPostgres } from './harness.js';

export function gatewaySuitesOnPostgres(prefix: string): { server(): PostgresServer } {
  const server = postgresForThisFile();
  const open = new Map<string, SharedPostgres>();
  // Registered after the server's own hook, so it runs first: connections close before the server goes.
  afterAll(async () => {
    for (const db of open.values()) await db.close();
  });
  gatewaysOnPostgres(async (dir) => {
    let db = open.get(dir);
    if (!db) open.set(dir, (db = await SharedPostgres.connect(await server().createDatabase(`${prefix}_${open.size}`), pino({ level: 'silent' }))));
    return db;
  });
  return { server };
}
