/**
 * Two real gateways on one private PostgreSQL (ctl.yaml storage.postgres): a provider, key, combo,
 * alias, price or setting written through one daemon is in force on the other within a second;
 * everything survives a restart; with the database gone writes answer 503 at once while inference
 * keeps being served from memory, and writes work again when it is back.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';
import { until } from '../helpers/until.js';


describe.skipIf(!PG_BIN)('gateway configuration shared by two daemons', () => {
  if (!PG_BIN) console.log(PG_SKIP_REASON);
  let pg: PostgresServer;
  let mock: MockUpstream;
  let a: TestDaemon;
  let b: TestDaemon;
  let key: string;
  let sink: Server;
  const events: { event: string; daemonPort?: string }[] = [];

  beforeAll(async () => {
    pg = await PostgresServer.start();
    const url = await pg.createDatabase('gw');
    mock = await startLlmUpstream({ apiKey: 'sk-up' });
    sink = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const e = JSON.parse(body) as { type?: string; event?: string };
        events.push({ event: e.type ?? e.event ?? '' });
        res.end();
      });
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    const hookAddr = `127.0.0.1:${(sink.address() as AddressInfo).port}`;
    const opts = { ctlYaml: { storage: { postgres: url }, egress: { 'address-map': { '203.0.113.77:80': hookAddr } } }, env: { REQUIRE_API_KEY: 'true' } };
    [a, b] = await Promise.all([startDaemon(opts), startDaemon(opts)]);
  }, 60_000);
  afterAll(async () => {
    sink?.closeAllConnections();
    await new Promise((r) => sink?.close(r));
    await Promise.all([a?.cleanup(), b?.cleanup()]);
    await mock?.close();
    await pg?.destroy();
  });

  const gw = (d: TestDaemon, method: string, path: string, body?: unknown) => d.request('gateway', method, path, body);
  const chat = async (d: TestDaemon, model: string, apiKey = key) => {
    const client = new OpenAI({ baseURL: `${await d.baseUrl('gateway')}/v1`, apiKey, maxRetries: 0 });
    return client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
  };

  it('a provider and a key made on one daemon serve inference on the other', async () => {
    const p = await gw(a, 'POST', '/api/providers', { id: 'oa', kind: 'openai', base_url: mock.baseUrl('openai'), api_key: 'sk-up', models: ['m1'] });
    expect(p.status, p.text).toBe(201);
    const k = await gw(a, 'POST', '/api/keys', { name: 'app' });
    expect(k.status, k.text).toBe(201);
    key = k.json.key;
    await until('b to list the provider and the key', async () => {
      const [ps, ks] = [await gw(b, 'GET', '/api/providers'), await gw(b, 'GET', '/api/keys')];
      return ps.json.providers?.some((x: { id: string }) => x.id === 'oa') && ks.json.keys?.some((x: { name: string }) => x.name === 'app');
    }, 1000);
    const out = await chat(b, 'oa/m1');
    expect(out.choices[0]!.message.content).toBe('Hello from openai');
  });

  it('combos, aliases, pricing and settings travel too', async () => {
    expect((await gw(b, 'POST', '/api/combos', { name: 'shared-combo', strategy: 'priority', targets: ['oa/m1'] })).status).toBe(201);
    expect((await gw(b, 'POST', '/api/models/alias', { alias: 'fast', model: 'oa/m1' })).status).toBeLessThan(300);
    expect((await gw(b, 'PUT', '/api/pricing', { model: 'oa/m1', input: 2, output: 4 })).status).toBeLessThan(300);
    expect((await gw(b, 'PATCH', '/api/settings', { a2aEnabled: true })).json).toMatchObject({ a2aEnabled: true });
    await until('a to have them all', async () => {
      const combos = (await gw(a, 'GET', '/api/combos')).json;
      const settings = (await gw(a, 'GET', '/api/settings')).json;
      return JSON.stringify(combos).includes('shared-combo') && settings.a2aEnabled === true;
    }, 1000);
    expect((await chat(a, 'shared-combo')).model).toBe('oa/m1');
    expect((await chat(a, 'fast')).model).toBe('oa/m1');
    const pricing = JSON.stringify((await gw(a, 'GET', '/api/pricing')).json);
    expect(pricing).toContain('oa/m1');
  });

  it('a key revoked on one daemon stops working on the other within a second', async () => {
    const k = await gw(b, 'POST', '/api/keys', { name: 'short-lived' });
    const raw = k.json.key as string;
    await until('a to accept the new key', async () => (await chat(a, 'oa/m1', raw).then(() => true, () => false)), 1000);
    expect((await gw(b, 'POST', `/api/keys/${k.json.id}/revoke`)).status).toBe(200);
    await until('a to refuse the revoked key', async () => (await chat(a, 'oa/m1', raw).then(() => false, (e: { status?: number }) => e.status === 401)), 1000);
  });

  it('the request log is the cluster\'s: logs, history, per-account totals and analytics from either daemon, purged for both', async () => {
    const total = async (d: TestDaemon) => (await gw(d, 'GET', '/api/usage/request-logs?limit=1')).json.total as number;
    const start = await total(a);
    for (let i = 0; i < 3; i++) await chat(a, 'oa/m1');
    for (let i = 0; i < 2; i++) await chat(b, 'oa/m1');
    // Rows are written behind the requests (retried when the database did not take them): moments, longer under load.
    await until('both daemons to list all five', async () => (await total(a)) - start === 5 && (await total(b)) - start === 5, 10_000);
    const rows = (await gw(b, 'GET', '/api/usage/request-logs?limit=5&provider=oa')).json.items as { provider: string; tokensIn: number; timestamp: string }[];
    expect(rows).toHaveLength(5);
    expect(rows.every((r) => r.provider === 'oa' && r.tokensIn > 0)).toBe(true);
    const lines = (await gw(a, 'GET', '/api/usage/logs?limit=2')).json.logs as string[];
    expect(lines[0]).toMatch(/ 200 .* -> oa\/m1 in=\d+ out=\d+/);
    const history = (await gw(a, 'GET', '/api/usage/history?days=1&period=hour&groupBy=provider')).json;
    expect(JSON.stringify(history)).toContain('"group":"oa"');
    const stats = (await gw(b, 'GET', '/api/usage/model-latency-stats?windowHours=1')).json;
    expect(stats.entries.some((e: { provider?: string; model?: string }) => JSON.stringify(e).includes('m1'))).toBe(true);
    const account = (await gw(a, 'GET', '/api/providers')).json.providers.find((p: { id: string }) => p.id === 'oa').accounts[0].id as string;
    const usage = (await gw(b, 'GET', `/api/usage/${account}`)).json;
    expect(usage.requests).toBeGreaterThanOrEqual(5);
    const purged = await gw(b, 'POST', '/api/settings/purge-request-history', {});
    expect(purged.json.requestLogs).toBeGreaterThanOrEqual(5);
    expect(await total(a)).toBe(0);
  });

  it('a webhook registered through one daemon gets the events of the other', async () => {
    const w = await gw(a, 'POST', '/api/webhooks', { url: 'http://203.0.113.77/hook', events: ['request.completed'] });
    expect(w.status, w.text).toBe(201);
    await until('b to know the webhook', async () => ((await gw(b, 'GET', '/api/webhooks')).json.webhooks ?? (await gw(b, 'GET', '/api/webhooks')).json).length > 0, 1000);
    events.length = 0;
    await chat(b, 'oa/m1');
    await until('the event from b', () => events.some((e) => e.event === 'request.completed'), 5000);
    expect((await gw(b, 'DELETE', `/api/webhooks/${w.json.id}`)).status).toBe(200);
    await until('a to forget the webhook', async () => {
      const list = (await gw(a, 'GET', '/api/webhooks')).json;
      return (list.webhooks ?? list).length === 0;
    }, 1000);
  });

  it('a dashboard login made through one daemon is good on the other, and a logout there ends it everywhere', async () => {
    expect((await gw(a, 'POST', '/api/auth/password', { password: 'cluster-password-1' })).status).toBeLessThan(300);
    const login = await fetch(`${await a.baseUrl('gateway')}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'cluster-password-1' }),
    });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const keysOn = async (d: TestDaemon) => (await fetch(`${await d.baseUrl('gateway')}/api/keys`, { headers: { cookie } })).status;
    await until('b to take the session', async () => (await keysOn(b)) === 200, 1000);
    expect((await fetch(`${await b.baseUrl('gateway')}/api/auth/logout`, { method: 'POST', headers: { cookie } })).status).toBe(200);
    await until('a to end the session', async () => (await keysOn(a)) === 401, 1000);
  });

  it('a daemon restarted reads everything back from the database', async () => {
    await a.restart();
    const ps = (await gw(a, 'GET', '/api/providers')).json.providers.map((x: { id: string }) => x.id);
    expect(ps).toContain('oa');
    expect((await chat(a, 'shared-combo')).choices[0]!.message.content).toBe('Hello from openai');
  }, 30_000);

  it('a daemon restarted while another writes converges on exactly what the database holds', async () => {
    let stop = false;
    let made = 0;
    const writer = (async () => {
      for (let i = 0; i < 2000 && !stop; i++) {
        if ((await gw(b, 'POST', '/api/keys', { name: `during-restart-${i}` })).status === 201) made++;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    try {
      await a.restart();
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      stop = true;
      await writer;
    }
    const names = async (d: TestDaemon) =>
      ((await gw(d, 'GET', '/api/keys')).json.keys as { name: string }[])
        .map((k) => k.name)
        .filter((n) => n.startsWith('during-restart-'))
        .sort();
    expect(made).toBeGreaterThan(10);
    // Announcements reach a within a second; nothing written during its start may be missing.
    let onA: string[] = [];
    for (let i = 0; i < 40; i++) {
      onA = await names(a);
      if (onA.length === made) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    console.log(`restart under writes: ${made} keys made on b, ${onA.length} on the restarted daemon`);
    expect(onA).toEqual(await names(b));
    expect(onA).toHaveLength(made);
  }, 60_000);

  it('with the database gone: writes answer 503 at once, inference goes on, and writes work when it is back', async () => {
    await pg.stop();
    const t0 = Date.now();
    const w = await gw(a, 'POST', '/api/keys', { name: 'while-down' });
    expect(w.status).toBe(503);
    expect(Date.now() - t0).toBeLessThan(5000);
    // The refused key is not in force here either, while the database is still away.
    expect(JSON.stringify((await gw(a, 'GET', '/api/keys')).json)).not.toContain('while-down');
    expect((await chat(a, 'oa/m1')).choices[0]!.message.content).toBe('Hello from openai');
    await pg.start();
    await until('writes to work again', async () => (await gw(a, 'POST', '/api/keys', { name: 'after' })).status === 201, 10_000);
    // The refused write did not stay in memory either.
    // b listens again and reloads once it has its connection back: a second or two, more on a loaded machine.
    await until('b to see the key made after', async () => JSON.stringify((await gw(b, 'GET', '/api/keys')).json).includes('"after"'), 10_000);
    expect(JSON.stringify((await gw(a, 'GET', '/api/keys')).json)).not.toContain('while-down');
  }, 30_000);
});
