/**
 * The pipeline's API, run, publishing and schedule suites again on PostgreSQL (`storage.postgres`):
 * every harness keeps its data in a database of a private server (one per state dir, so a restart
 * on the same dir finds its data) instead of its SQLite file.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';
import { pipelineOnPostgres } from './harness.js';

let server: PostgresServer | undefined;
if (PG_BIN) {
  beforeAll(async () => {
    server = await PostgresServer.start();
  }, 60_000);
  afterAll(async () => {
    await server?.destroy();
  });
  pipelineOnPostgres(() => server!);
  await import('./api.test.js');
  await import('./run.test.js');
  await import('./publish.test.js');
  await import('./scheduler.test.js');
} else {
  describe.skip(PG_SKIP_REASON, () => it('needs PostgreSQL', () => undefined));
}
