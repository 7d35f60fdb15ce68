/**
 * Three gateways on one PostgreSQL and one Redis under load while things break: Redis stopped and
 * started again mid-load (every request still gets an answer, 200 or 503, none hangs; service comes
 * back by itself), and one daemon killed with -9 mid-load (the others keep serving; what it
 * acknowledged just before is in force on them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { startGatewayCluster, type GatewayCluster } from '../helpers/gateway-cluster.js';
import type { MockUpstream } from '../fakes/llm-upstream.js';
import { PG_BIN, PG_SKIP_REASON } from '../helpers/postgres-server.js';
import { REDIS_SERVER, REDIS_SKIP_REASON, RedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

describe.skipIf(!PG_BIN || !REDIS_SERVER)('three gateways under load while Redis or a daemon goes away', () => {
  if (!PG_BIN) console.log(PG_SKIP_REASON);
  if (!REDIS_SERVER) console.log(REDIS_SKIP_REASON);
  let cluster: GatewayCluster;
  let daemons: TestDaemon[] = [];
  let mock: MockUpstream;
  let redis: RedisServer;
  let key: string;

  beforeAll(async () => {
    cluster = await startGatewayCluster({ daemons: 3, database: 'outages', mock: { latencyMs: 10 }, price: 1 });
    ({ daemons, mock, redis } = cluster);
    // A budget far from reached: every request goes through the shared windows.
    ({ key } = await cluster.budgetedKey('load', 1000));
  }, 60_000);
  afterAll(async () => {
    await cluster?.close();
  });

  const live = () => daemons.filter((d) => d.child.exitCode === null && d.child.signalCode === null);
  const chat = async (d: TestDaemon, apiKey = key): Promise<number> => {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), 8000);
    try {
      const r = await fetch(`${await d.baseUrl('gateway')}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({ model: 'oa/m1', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }),
        signal: ctl.signal,
      });
      await r.arrayBuffer();
      return r.status;
    } catch (e) {
      return (e as Error).name === 'AbortError' ? -1 : 0;
    } finally {
      clearTimeout(timer);
    }
  };
  /** Closed loops of requests on every live daemon until `stop` resolves; every status seen. */
  const load = async (stop: Promise<void>, clients = 10): Promise<number[]> => {
    const statuses: number[] = [];
    let done = false;
    void stop.then(() => (done = true));
    await Promise.all(
      live().flatMap((d) =>
        Array.from({ length: clients }, async () => {
          for (let i = 0; i < 2000 && !done; i++) {
            if (d.child.signalCode !== null) return;
            statuses.push(await chat(d));
          }
        }),
      ),
    );
    return statuses;
  };

  it('a provider breaker that opens on one daemon is open on the others within moments', async () => {
    const [a, b] = daemons;
    expect((await a!.request('gateway', 'POST', '/api/providers', { id: 'flaky', kind: 'openai', base_url: mock.baseUrl('openai'), api_key: 'sk-up', models: ['m1'] })).status).toBe(201);
    await until('b to know flaky', async () => ((await b!.request('gateway', 'GET', '/api/providers')).json.providers as { id: string }[]).some((p) => p.id === 'flaky'));
    const state = async (d: TestDaemon) => ((await d.request('gateway', 'GET', '/api/resilience')).json.breakers as { provider: string; state: string }[]).find((x) => x.provider === 'flaky')?.state;
    // Failures on a alone until its breaker opens.
    for (let i = 0; i < 30 && (await state(a!)) !== 'OPEN'; i++) {
      mock.enqueue({ status: 500 }, 'openai');
      await fetch(`${await a!.baseUrl('gateway')}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: 'flaky/m1', messages: [{ role: 'user', content: 'hi' }] }),
      }).then((r) => r.arrayBuffer());
    }
    expect(await state(a!)).toBe('OPEN');
    mock.reset();
    // b sent nothing to flaky, yet holds it back.
    await until('b to see the breaker open', async () => (await state(b!)) === 'OPEN', 4000);
    const before = mock.requests.length;
    const r = await fetch(`${await b!.baseUrl('gateway')}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'flaky/m1', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(r.status).toBe(503);
    expect(r.headers.get('x-gateway-provider-breaker')).toBe('open');
    expect(mock.requests.length).toBe(before);
  }, 30_000);

  it('a session pinned on one gateway is pinned on the others (its next turn keeps the account)', async () => {
    const [a, b] = daemons;
    const r = await fetch(`${await a!.baseUrl('gateway')}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-session-id': 'agent-across-daemons' },
      body: JSON.stringify({ model: 'oa/m1', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(r.status).toBe(200);
    await r.arrayBuffer();
    const pinsOn = async (d: TestDaemon) =>
      ((await d.request('gateway', 'GET', '/api/sessions')).json.sessions as { sessionId: string; pins: { scope: string; target: string }[] }[]).find((x) => x.sessionId === 'agent-across-daemons')?.pins;
    const onA = await pinsOn(a!);
    expect(onA?.[0]?.scope).toBe('provider:oa');
    await until('b to hold the same pin', async () => JSON.stringify(await pinsOn(b!)) === JSON.stringify(onA), 3000);
  });

  it('an answer cached by one gateway is a hit on another', async () => {
    const [a, , c] = daemons;
    expect((await a!.request('gateway', 'PATCH', '/api/cache', { enabled: true })).status).toBe(200);
    await until('c to have the cache on', async () => (await c!.request('gateway', 'GET', '/api/cache')).json.settings.enabled === true);
    const ask = async (d: TestDaemon) => {
      const r = await fetch(`${await d.baseUrl('gateway')}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: 'oa/m1', temperature: 0, messages: [{ role: 'user', content: 'cache me across daemons' }] }),
      });
      return { status: r.status, hit: r.headers.get('x-gateway-cache-hit'), body: await r.text() };
    };
    const before = mock.requests.length;
    const first = await ask(a!);
    expect(first).toMatchObject({ status: 200, hit: 'false' });
    await new Promise((r) => setTimeout(r, 100));
    const second = await ask(c!);
    expect(second).toMatchObject({ status: 200, hit: 'true' });
    expect(mock.requests.length - before).toBe(1);
    // Clearing the cache through one gateway clears the shared tier too.
    expect((await c!.request('gateway', 'DELETE', '/api/cache/entries')).status).toBe(200);
    expect((await ask(daemons[1]!)).hit).toBe('false');
    expect((await a!.request('gateway', 'PATCH', '/api/cache', { enabled: false })).status).toBe(200);
  });

  it('Redis stopped and started again mid-load: every request is answered (200 or 503), none hangs, service comes back', async () => {
    const stop = (async () => {
      await new Promise((r) => setTimeout(r, 700));
      await redis.stop();
      await new Promise((r) => setTimeout(r, 1000));
      await redis.start();
      await new Promise((r) => setTimeout(r, 1500));
    })();
    const statuses = await load(stop);
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(50);
    // Back to normal on every daemon.
    for (const d of live()) await until('a 200 again', async () => (await chat(d)) === 200, 5000);
  }, 60_000);

  it('one daemon killed with -9 mid-load: the others keep serving, and a key it acknowledged works on them', async () => {
    const [victim, ...others] = daemons;
    const stop = (async () => {
      await new Promise((r) => setTimeout(r, 500));
      const made = await victim!.request('gateway', 'POST', '/api/keys', { name: 'acknowledged-then-killed' });
      expect(made.status).toBe(201);
      await victim!.kill9();
      await new Promise((r) => setTimeout(r, 1000));
      return made.json.key as string;
    })();
    const statuses = await load(stop.then(() => undefined));
    const acknowledged = await stop;
    // Requests in flight on the killed daemon fail at the socket (0); everything else is a 200.
    expect(statuses.filter((s) => s !== 200 && s !== 0)).toEqual([]);
    for (const d of others) {
      expect(await chat(d)).toBe(200);
      await until('the acknowledged key on a survivor', async () => (await chat(d, acknowledged)) === 200, 2000);
    }
  }, 60_000);
});
