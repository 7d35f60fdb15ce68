/**
 * The node monitor's method, poller and network suites again, on PostgreSQL (`storage.postgres`):
 * every harness keeps its data in a fresh database of a private server instead of its SQLite file.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';
import { nodesOnPostgres } from './harness.js';

let server: PostgresServer | undefined;
if (PG_BIN) {
  beforeAll(async () => {
    server = await PostgresServer.start();
  }, 60_000);
  afterAll(async () => {
    await server?.destroy();
  });
  nodesOnPostgres(() => server!);
  await import('./methods.test.js');
  await import('./poller.test.js');
  await import('./network.test.js');
} else {
  describe.skip(PG_SKIP_REASON, () => it('needs PostgreSQL', () => undefined));
}
