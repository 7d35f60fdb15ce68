/**
 * The pipeline's API, run, publishing and schedule suites again on PostgreSQL (`storage.postgres`):
 * every harness keeps its data in a database of a private server (one per state dir, so a restart
 * on the same dir finds its data) instead of its SQLite file.
 */
import { describe, it } from 'vitest';
import { postgresForThisFile } from '../helpers/file-postgres.js';
import { PG_BIN, PG_SKIP_REASON } from '../helpers/postgres-server.js';
import { pipelineOnPostgres } from './harness.js';

if (PG_BIN) {
  pipelineOnPostgres(postgresForThisFile());
  await import('./api.test.js');
  await import('./run.test.js');
  await import('./publish.test.js');
  await import('./scheduler.test.js');
} else {
  describe.skip(PG_SKIP_REASON, () => it('needs PostgreSQL', () => undefined));
}
