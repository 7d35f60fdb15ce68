import { startDaemon, type TestDaemon } from './daemon.js';
import { startLlmUpstream, type MockUpstream, type MockBehaviour } from '../fakes/llm-upstream.js';
import { PostgresServer } from './postgres-server.js';
import { RedisServer } from './redis-server.js';
import { until } from './until.js';

/** Gateways on one private PostgreSQL and one private Redis, with provider `oa` (model m1) on a mock. */
export interface GatewayCluster {
  pg: PostgresServer;
  redis: RedisServer;
  mock: MockUpstream;
  daemons: TestDaemon[];
  /** Make a key with a daily budget and wait until every daemon has it. */
  budgetedKey(name: string, dailyLimitUsd: number): Promise<{ key: string; id: string }>;
  close(): Promise<void>;
}

export async function startGatewayCluster(o: { daemons: number; database: string; mock?: MockBehaviour; price: number }): Promise<GatewayCluster> {
  const [pg, redis, mock] = await Promise.all([PostgresServer.start(), RedisServer.start(), startLlmUpstream({ apiKey: 'sk-up', defaults: o.mock ?? {} })]);
  const url = await pg.createDatabase(o.database);
  const opts = { ctlYaml: { storage: { postgres: url, redis: `redis://${redis.host}:${redis.port}` } }, env: { REQUIRE_API_KEY: 'true' } };
  const daemons = await Promise.all(Array.from({ length: o.daemons }, () => startDaemon(opts)));
  const a = daemons[0]!;
  const ok = (r: { status: number; text: string }, what: string) => {
    if (r.status >= 300) throw new Error(`${what}: HTTP ${r.status} ${r.text}`);
  };
  ok(await a.request('gateway', 'POST', '/api/providers', { id: 'oa', kind: 'openai', base_url: mock.baseUrl('openai'), api_key: 'sk-up', models: ['m1'] }), 'provider');
  ok(await a.request('gateway', 'PUT', '/api/pricing', { model: 'oa/m1', input: o.price, output: o.price }), 'pricing');
  return {
    pg,
    redis,
    mock,
    daemons,
    async budgetedKey(name, dailyLimitUsd) {
      const k = await a.request('gateway', 'POST', '/api/keys', { name });
      ok(k, 'key');
      ok(await a.request('gateway', 'POST', '/api/usage/budget', { apiKeyId: k.json.id, dailyLimitUsd }), 'budget');
      for (const d of daemons) await until('the budget on every daemon', async () => (await d.request('gateway', 'GET', `/api/usage/budget?apiKeyId=${k.json.id}`)).status === 200);
      return { key: k.json.key as string, id: k.json.id as string };
    },
    async close() {
      await Promise.all(daemons.map((d) => d.cleanup()));
      await mock.close();
      await redis.stop();
      await pg.destroy();
    },
  };
}
