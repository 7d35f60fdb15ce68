import { afterAll, beforeAll } from 'vitest';
import { PostgresServer } from './postgres-server.js';

/** A private PostgreSQL for one test file: started before its suites, destroyed after. Call at the top level. */
export function postgresForThisFile(): () => PostgresServer {
  let server: PostgresServer | undefined;
  beforeAll(async () => {
    server = await PostgresServer.start();
  }, 60_000);
  afterAll(async () => {
    await server?.destroy();
  });
  return () => {
    if (!server) throw new Error('PostgreSQL has not started yet');
    return server;
  };
}
