/**
 * Three gateways on one PostgreSQL and one Redis (ctl.yaml storage.postgres + storage.redis, private servers):
 * 3 daemons × 50 concurrent clients spend a key's daily budget, and 20 simultaneous calls hit one
 * daemon; one atomic reservation per call in Redis keeps the cluster's spend within the one request
 * that crosses the limit. A daemon killed mid-request holds its reservation only until its lease
 * ends. Then Redis goes away (budgeted requests answer 503 at once, others are served) and comes back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDaemon } from '../helpers/daemon.js';
import { startGatewayCluster, type GatewayCluster } from '../helpers/gateway-cluster.js';
import type { MockUpstream } from '../fakes/llm-upstream.js';
import { PG_BIN, PG_SKIP_REASON } from '../helpers/postgres-server.js';
import { REDIS_SERVER, REDIS_SKIP_REASON, RedisServer } from '../helpers/redis-server.js';

/** Price per 1M tokens; the mock answers 11 input + 7 output tokens: $0.018 a request. */
const PRICE = 1000;
const PER_REQUEST = ((11 + 7) * PRICE) / 1e6;
const BUDGET = 0.18; // ten requests

describe.skipIf(!PG_BIN || !REDIS_SERVER)('three gateways sharing PostgreSQL and Redis: budgets, token limits, idempotency', () => {
  if (!PG_BIN) console.log(PG_SKIP_REASON);
  if (!REDIS_SERVER) console.log(REDIS_SKIP_REASON);
  let cluster: GatewayCluster;
  let daemons: TestDaemon[] = [];
  let mock: MockUpstream;
  let redis: RedisServer;
  let key: string;
  let keyId: string;
  let free: string;

  beforeAll(async () => {
    cluster = await startGatewayCluster({ daemons: 3, database: 'budget', mock: { latencyMs: 40 }, price: PRICE });
    ({ daemons, mock, redis } = cluster);
    ({ key, id: keyId } = await cluster.budgetedKey('budgeted', BUDGET));
    free = (await daemons[0]!.request('gateway', 'POST', '/api/keys', { name: 'free' })).json.key;
  }, 60_000);
  afterAll(async () => {
    await cluster?.close();
  });

  const chat = async (d: TestDaemon, apiKey: string) => {
    const base = await d.baseUrl('gateway');
    const r = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ model: 'oa/m1', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await r.arrayBuffer();
    return r.status;
  };

  it('one daemon, 20 simultaneous calls: never more than the budget plus the call that crosses it', async () => {
    const d = daemons[1]!;
    const k = await daemons[0]!.request('gateway', 'POST', '/api/keys', { name: 'burst' });
    expect((await daemons[0]!.request('gateway', 'POST', '/api/usage/budget', { apiKeyId: k.json.id, dailyLimitUsd: BUDGET })).status).toBe(201);
    for (let i = 0; i < 40 && (await d.request('gateway', 'GET', `/api/usage/budget?apiKeyId=${k.json.id}`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 25));
    const statuses = await Promise.all(Array.from({ length: 20 }, () => chat(d, k.json.key)));
    const served = statuses.filter((s) => s === 200).length;
    console.log(`one daemon, 20 simultaneous calls on a budget of ${BUDGET / PER_REQUEST} requests: ${served} served`);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(served).toBeLessThanOrEqual(BUDGET / PER_REQUEST + 1);
    expect(served).toBeGreaterThanOrEqual(BUDGET / PER_REQUEST - 1);
  }, 30_000);

  it('3 daemons × 50 concurrent clients: spend stays within one request of the budget', async () => {
    const statuses: number[] = [];
    // Each client keeps asking until it is refused; bounded in count.
    const client = async (d: TestDaemon) => {
      for (let i = 0; i < 20; i++) {
        const s = await chat(d, key);
        statuses.push(s);
        if (s !== 200) return;
      }
    };
    await Promise.all(daemons.flatMap((d) => Array.from({ length: 50 }, () => client(d))));
    const served = statuses.filter((s) => s === 200).length;
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    const spent = served * PER_REQUEST;
    // What was measured, shown only when an assertion fails (a passing test prints nothing).
    const measured = `cluster budget: $${BUDGET} limit, ${served} requests served = $${spent.toFixed(3)} (overshoot ${(spent - BUDGET).toFixed(3)}, ${((spent - BUDGET) / PER_REQUEST).toFixed(1)} requests)`;
    // The reservation of an admitted request is pessimistic (max_tokens), so at most the request
    // crossing the limit overshoots it, for the whole cluster.
    expect(spent, measured).toBeLessThanOrEqual(BUDGET + PER_REQUEST + 1e-9);
    expect(served, measured).toBeGreaterThanOrEqual(Math.floor(BUDGET / PER_REQUEST) - 5);
    // Every daemon reports the cluster's spend.
    await new Promise((r) => setTimeout(r, 200));
    for (const d of daemons) {
      const v = (await d.request('gateway', 'GET', `/api/usage/budget?apiKeyId=${keyId}`)).json;
      expect(v.periods.daily.spentUsd).toBeCloseTo(spent, 6);
      expect(v.exceeded).toBe(true);
    }
    expect(await chat(daemons[2]!, key)).toBe(429);
  }, 60_000);

  it('a token limit holds for the cluster too, within one request of it', async () => {
    const a = daemons[0]!;
    const k = await a.request('gateway', 'POST', '/api/keys', { name: 'tokens' });
    const limited = k.json.key as string;
    const limit = 10 * 18; // ten requests of 11 + 7 tokens
    expect((await a.request('gateway', 'POST', '/api/usage/token-limits', { apiKeyId: k.json.id, scopeType: 'global', tokenLimit: limit, resetInterval: 'daily' })).status).toBe(201);
    for (const d of daemons) {
      for (let i = 0; i < 40; i++) {
        if (((await d.request('gateway', 'GET', `/api/usage/token-limits?apiKeyId=${k.json.id}`)).json.total ?? 0) === 1) break;
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    const statuses: number[] = [];
    const client = async (d: TestDaemon) => {
      for (let i = 0; i < 20; i++) {
        const s = await chat(d, limited);
        statuses.push(s);
        if (s !== 200) return;
      }
    };
    await Promise.all(daemons.flatMap((d) => Array.from({ length: 50 }, () => client(d))));
    const served = statuses.filter((s) => s === 200).length;
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    const measured = `cluster token limit: ${limit} tokens, ${served} requests served = ${served * 18} tokens`;
    expect(served * 18, measured).toBeLessThanOrEqual(limit + 18);
    expect(served, measured).toBeGreaterThanOrEqual(5);
    await new Promise((r) => setTimeout(r, 200));
    const view = (await daemons[2]!.request('gateway', 'GET', `/api/usage/token-limits?apiKeyId=${k.json.id}`)).json.limits[0];
    expect(view.tokensUsed).toBe(served * 18);
  }, 60_000);

  it('the rpm of a key holds for the cluster: 3 daemons × 5 simultaneous requests, rpm 5, exactly 5 served', async () => {
    const k = await daemons[0]!.request('gateway', 'POST', '/api/keys', { name: 'rpm-5', rpm: 5 });
    expect(k.status).toBe(201);
    for (const d of daemons) for (let i = 0; i < 40 && (await d.request('gateway', 'GET', `/api/keys/${k.json.id}`)).json.rpm !== 5; i++) await new Promise((r) => setTimeout(r, 25));
    // Not across a minute's end.
    if (Date.now() % 60_000 > 50_000) await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 100));
    const statuses = await Promise.all(daemons.flatMap((d) => Array.from({ length: 5 }, () => chat(d, k.json.key))));
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
  }, 30_000);

  it('an idempotency key holds across daemons: one upstream call, the duplicate elsewhere replays it', async () => {
    const [a, b] = daemons;
    const send = async (d: TestDaemon, idem: string, content = 'once') => {
      const r = await fetch(`${await d.baseUrl('gateway')}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${free}`, 'idempotency-key': idem },
        body: JSON.stringify({ model: 'oa/m1', messages: [{ role: 'user', content }] }),
      });
      return { status: r.status, replay: r.headers.get('x-gateway-idempotent'), body: await r.text() };
    };
    mock.reset();
    mock.enqueue({ latencyMs: 400, text: 'only one of these' }, 'openai');
    const before = mock.requests.length;
    const [first, second] = await Promise.all([send(a!, 'idem-1'), new Promise((r) => setTimeout(r, 100)).then(() => send(b!, 'idem-1'))]);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(mock.requests.length - before).toBe(1);
    expect(JSON.parse(second.body).choices[0].message.content).toBe('only one of these');
    expect(JSON.parse(second.body).id).toBe(JSON.parse(first.body).id);
    expect([first.replay, second.replay]).toContain('true');
    // Within the window: another daemon replays; another body under the same key is refused.
    const again = await send(b!, 'idem-1');
    expect(again.replay).toBe('true');
    expect(mock.requests.length - before).toBe(1);
    expect((await send(b!, 'idem-1', 'something else')).status).toBe(409);
  });

  it('a daemon killed with a reservation held gives it up once its lease runs out', async () => {
    const [a, , c] = daemons;
    const k = await a!.request('gateway', 'POST', '/api/keys', { name: 'killed-mid-request' });
    expect((await a!.request('gateway', 'POST', '/api/usage/budget', { apiKeyId: k.json.id, dailyLimitUsd: BUDGET })).status).toBe(201);
    for (let i = 0; i < 40; i++) {
      if ((await c!.request('gateway', 'GET', `/api/usage/budget?apiKeyId=${k.json.id}`)).status === 200) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    // One slow request on c reserves its estimate ($0.051 for max_tokens 50), then c is killed.
    mock.enqueue({ latencyMs: 10_000 }, 'openai');
    const stuck = chat(c!, k.json.key).catch(() => 0);
    await new Promise((r) => setTimeout(r, 300));
    await c!.kill9();
    await stuck;
    const spend = async () => {
      let n = 0;
      for (let i = 0; i < 20 && (await chat(a!, k.json.key)) === 200; i++) n++;
      return n;
    };
    // While c's reservation is held the others can spend only what is left beside it.
    const before = await spend();
    expect(before).toBeLessThan(10);
    // c's reservation has a 15 s lease nobody renews now: then it no longer counts, and the rest is spent.
    await new Promise((r) => setTimeout(r, 16_000));
    const after = await spend();
    // All ten of the budget, and at most the one call that crosses the limit on top.
    expect(before + after).toBeGreaterThanOrEqual(10);
    expect(before + after).toBeLessThanOrEqual(11);
  }, 60_000);

  it('Redis frozen (SIGSTOP) for 3 s mid-calls: nothing stays reserved or claimed once it answers again', async () => {
    const [a, b] = daemons;
    const k = await a!.request('gateway', 'POST', '/api/keys', { name: 'frozen-redis' });
    expect((await a!.request('gateway', 'POST', '/api/usage/budget', { apiKeyId: k.json.id, dailyLimitUsd: BUDGET })).status).toBe(201);
    for (let i = 0; i < 40 && (await b!.request('gateway', 'GET', `/api/usage/budget?apiKeyId=${k.json.id}`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 25));
    const idem = async (d: TestDaemon) => {
      const r = await fetch(`${await d.baseUrl('gateway')}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${free}`, 'idempotency-key': 'sent-during-a-freeze' },
        body: JSON.stringify({ model: 'oa/m1', messages: [{ role: 'user', content: 'hi' }] }),
      });
      await r.arrayBuffer();
      return r.status;
    };
    redis.freeze();
    let statuses: number[];
    try {
      const t0 = Date.now();
      // Budgeted calls and an idempotent one: Redis runs their reservations and claim after the daemon gave up.
      statuses = await Promise.all([...Array.from({ length: 10 }, () => chat(a!, k.json.key)), idem(a!)]);
      expect(Date.now() - t0).toBeLessThan(3000);
      await new Promise((r) => setTimeout(r, Math.max(0, 3000 - (Date.now() - t0))));
    } finally {
      redis.thaw();
    }
    expect(statuses.every((s) => s === 503)).toBe(true);
    const thawed = Date.now();
    // The client's retry elsewhere is served at once, not after the stale claim expires.
    let retry = await idem(b!);
    while (retry !== 200 && Date.now() - thawed < 10_000) retry = await idem(b!);
    expect(retry).toBe(200);
    console.log(`idempotent retry served ${Date.now() - thawed} ms after Redis answered again`);
    expect(Date.now() - thawed).toBeLessThan(2000);
    // The whole budget can be spent: the reservations Redis ran late were released by id.
    let served = 0;
    for (let i = 0; i < 15 && (await chat(b!, k.json.key)) === 200; i++) served++;
    console.log(`after the freeze: ${served} of the budget's ${BUDGET / PER_REQUEST} requests served at once`);
    expect(served).toBeGreaterThanOrEqual(BUDGET / PER_REQUEST);
    expect(served).toBeLessThanOrEqual(BUDGET / PER_REQUEST + 1);
  }, 30_000);

  it('without Redis, budgeted requests answer 503 at once while others are served; then it recovers', async () => {
    await redis.stop();
    const d = daemons[1]!;
    const t0 = Date.now();
    expect(await chat(d, key)).toBe(503);
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(await chat(d, free)).toBe(200);
    // A request that asks not to be served twice cannot be promised that now either.
    const idem = await fetch(`${await d.baseUrl('gateway')}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${free}`, 'idempotency-key': 'while-redis-is-down' },
      body: JSON.stringify({ model: 'oa/m1', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(idem.status).toBe(503);
    await redis.start();
    // A fresh Redis starts the window from this daemon's own log: the key is still over budget.
    let status = 0;
    for (let i = 0; i < 100 && status !== 429; i++) {
      status = await chat(d, key);
      if (status !== 429) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(429);
  }, 30_000);
});
