/**
 * The node monitor's method, poller and network suites again, on PostgreSQL (`storage.postgres`):
 * every harness keeps its data in a fresh database of a private server instead of its SQLite file.
 */
import { describe, it } from 'vitest';
import { postgresForThisFile } from '../helpers/file-postgres.js';
import { PG_BIN, PG_SKIP_REASON } from '../helpers/postgres-server.js';
import { nodesOnPostgres } from './harness.js';

if (PG_BIN) {
  nodesOnPostgres(postgresForThisFile());
  await import('./methods.test.js');
  await import('./poller.test.js');
  await import('./network.test.js');
} else {
  describe.skip(PG_SKIP_REASON, () => it('needs PostgreSQL', () => undefined));
}
