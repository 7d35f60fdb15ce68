/**
 * The memory suite again with `storage.postgres`: memories in the shared database, full-text
 * search by PostgreSQL instead of FTS5, a restart reading them back from the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { SharedPostgres } from '../../src/store/postgres.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';
import { startLlmUpstream } from '../fakes/llm-upstream.js';
import { until } from '../helpers/until.js';
import { gatewaysOnPostgres, startGateway } from './harness.js';

const KEY = 'sk-memory-shared-cccccccccccc';

let server: PostgresServer | undefined;
let db: SharedPostgres | undefined;
if (PG_BIN) {
  beforeAll(async () => {
    server = await PostgresServer.start();
    db = await SharedPostgres.connect(await server.createDatabase('gw_memory'), pino({ level: 'silent' }));
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await server?.destroy();
  });
  gatewaysOnPostgres(async () => db!);
  await import('./memory.test.js');

  describe('memories on two gateways sharing the database', () => {
    it('kept what the suite saved in PostgreSQL', async () => {
      expect((await db!.query<{ content: string }>('SELECT content FROM gw_memories')).map((r) => r.content)).toContain('Durable fact about zebras');
    });

    it('a memory saved through one gateway is injected by the other', async () => {
      const mock = await startLlmUpstream();
      const yaml = `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: "sk-up", models: [m1]}\nkeys:\n  - {name: a, key: "${KEY}", models: ["*"]}\n`;
      const [a, b] = await Promise.all([startGateway({ yaml }), startGateway({ yaml })]);
      try {
        expect((await a.req('POST', '/api/memory/clear', {})).status).toBe(200);
        const chat = async () => {
          mock.requests.length = 0;
          const r = await b.req('POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'user', content: 'Which ferry do I take?' }] }, { Authorization: `Bearer ${KEY}` });
          expect(r.status, r.text).toBe(200);
          return JSON.stringify(mock.requests[0]?.body ?? {});
        };
        expect(await chat()).not.toContain('Memory context');
        expect((await a.req('POST', '/api/memory', { content: 'The ferry to the island leaves from pier 3', scope: 'global' })).status).toBe(201);
        await until('the other gateway injects it', async () => (await chat()).includes('ferry to the island leaves from pier 3'), 3000);
        expect((await b.req('GET', '/api/memory/search?q=ferry')).json.results).toHaveLength(1);
      } finally {
        await Promise.all([a.close(), b.close()]);
        await mock.close();
      }
    });
  });
} else {
  describe.skip(PG_SKIP_REASON, () => it('needs PostgreSQL', () => undefined));
}
