/**
 * Outbound webhooks: CRUD with masked secrets, the event list, test deliveries, events delivered
 * through the persisted queue and signed per Standard Webhooks (checked with the `standardwebhooks`
 * package, an implementation independent of ctl's), retries with growing delays, the SSRF policy.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}
let receiver: http.Server;
let port = 0;
let received: Received[] = [];
let answers: number[] = [];
let mock: MockUpstream;
let gw: GatewayHarness;

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers, body, at: Date.now() });
      res.writeHead(answers.shift() ?? 200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  port = (receiver.address() as AddressInfo).port;
  mock = await startLlmUpstream();
  gw = await startGateway({
    config: { webhooks: { retry_base_ms: 300, max_attempts: 4 } },
    yaml: `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}\npricing:\n  oa/m1: {input: 1000, output: 1000}\n`,
  });
  gw.egress.addMapping('203.0.113.40:80', `127.0.0.1:${port}`);
  await gw.instance.start?.();
});
afterAll(async () => {
  await gw.close();
  await mock.close();
  await new Promise((r) => receiver.close(r));
});
beforeEach(() => {
  received = [];
  answers = [];
});

async function until<T>(f: () => T | undefined, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('webhooks', () => {
  let hookId = '';
  let secret = '';

  it('creates a webhook (the secret shown once, masked after), lists events, updates and tests it', async () => {
    const c = await gw.req('POST', '/api/webhooks', { url: 'http://203.0.113.40/hook', events: ['key.created', 'request.completed'], description: 'audit' });
    expect(c.status, c.text).toBe(201);
    hookId = c.json.id;
    secret = c.json.secret;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const list = (await gw.req('GET', '/api/webhooks')).json.webhooks;
    expect(list).toHaveLength(1);
    expect(list[0].secret).toMatch(/^whsec_.{4}•+$/);
    expect(list[0].secret).not.toBe(secret);
    const events = (await gw.req('GET', '/api/webhooks/events')).json.events.map((e: { type: string }) => e.type);
    for (const t of ['request.completed', 'request.failed', 'budget.warning', 'budget.exceeded', 'quota.exhausted', 'key.created', 'key.revoked', 'provider.circuit_opened', 'provider.circuit_closed', 'batch.completed', 'batch.failed']) expect(events).toContain(t);
    const t = await gw.req('POST', `/api/webhooks/${hookId}/test`);
    expect(t.json).toMatchObject({ delivered: true, status: 200, error: null });
    const wh = new Webhook(secret);
    const verified = wh.verify(received[0]!.body, received[0]!.headers as Record<string, string>) as { type: string };
    expect(verified.type).toBe('webhook.test');
    expect((await gw.req('PATCH', `/api/webhooks/${hookId}`, { events: ['*'] })).json.events).toEqual(['*']);
  });

  it('refuses private and loopback targets, unknown events and bad secrets', async () => {
    for (const url of ['http://10.0.0.1/x', `http://127.0.0.1:${port}/x`, 'http://[::1]/x', 'http://169.254.169.254/']) {
      const r = await gw.req('POST', '/api/webhooks', { url });
      expect(r.status, url).toBe(400);
      expect(r.json.error.message, url).toMatch(/url: URL is not allowed or not reachable/);
    }
    expect((await gw.req('POST', '/api/webhooks', { url: 'http://203.0.113.40/', events: ['nope'] })).json.error.message).toMatch(/unknown event type "nope"/);
    expect((await gw.req('POST', '/api/webhooks', { url: 'http://203.0.113.40/', secret: 'plain' })).json.error.message).toMatch(/secret must be whsec_/);
  });

  it('delivers events through the queue, signed, with their data', async () => {
    const k = await gw.req('POST', '/api/keys', { name: 'hooked' });
    expect(k.status).toBe(201);
    const got = await until(() => received.find((r) => JSON.parse(r.body).type === 'key.created'));
    const body = new Webhook(secret).verify(got.body, got.headers as Record<string, string>) as { type: string; data: { name: string } };
    expect(body.data.name).toBe('hooked');
    expect(got.headers['webhook-id']).toMatch(/^msg_/);
    await gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'user', content: 'hi' }] });
    const done = await until(() => received.find((r) => JSON.parse(r.body).type === 'request.completed'));
    expect(JSON.parse(done.body).data).toMatchObject({ endpoint: 'chat', model: 'oa/m1', provider: 'oa', status: 200 });
  });

  it('budget.exceeded when a key is refused for its budget; key.revoked', async () => {
    const k = (await gw.req('POST', '/api/keys', { name: 'spender' })).json;
    await gw.req('POST', '/api/usage/budget', { apiKeyId: k.id, dailyLimitUsd: 0.0001 });
    const chat = () => gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'user', content: 'spend' }] }, { authorization: `Bearer ${k.key}` }, { tcp: true });
    expect((await chat()).status).toBe(200);
    expect((await chat()).status).toBe(429);
    const ev = await until(() => received.find((r) => JSON.parse(r.body).type === 'budget.exceeded'));
    expect(JSON.parse(ev.body).data).toMatchObject({ apiKeyId: k.id, keyName: 'spender', model: 'oa/m1' });
    await gw.req('POST', `/api/keys/${k.id}/revoke`);
    const rv = await until(() => received.find((r) => JSON.parse(r.body).type === 'key.revoked'));
    expect(JSON.parse(rv.body).data).toMatchObject({ id: k.id, name: 'spender' });
  });

  it('retries a failing receiver with growing delays, recording every attempt, until it answers 2xx', async () => {
    answers = [500, 503, 200];
    await gw.req('POST', '/api/keys', { name: 'retried' });
    await until(() => (received.filter((r) => JSON.parse(r.body).type === 'key.created').length >= 3 ? true : undefined));
    const tries = received.filter((r) => JSON.parse(r.body).type === 'key.created');
    expect(new Set(tries.map((r) => r.headers['webhook-id'])).size).toBe(1); // the same message each time
    const gaps = [tries[1]!.at - tries[0]!.at, tries[2]!.at - tries[1]!.at];
    expect(gaps[0]).toBeGreaterThanOrEqual(290);
    expect(gaps[1]).toBeGreaterThan(gaps[0]!);
    // The receiver has its third request before the gateway has recorded that attempt's answer.
    let d: { status: string; lastStatus: number; attemptLog: { status: number }[] } | undefined;
    for (let end = Date.now() + 10_000; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
      const deliveries = (await gw.req('GET', `/api/webhooks/${hookId}/deliveries`)).json.deliveries;
      d = deliveries.find((x: { event: string; attempts: number; status: string }) => x.event === 'key.created' && x.attempts === 3 && x.status !== 'pending');
      if (d) break;
    }
    expect(d).toMatchObject({ status: 'delivered', lastStatus: 200 });
    expect(d!.attemptLog.map((a) => a.status)).toEqual([500, 503, 200]);
  });

  it('gives up after max_attempts; a deleted webhook gets nothing more', async () => {
    answers = [500, 500, 500, 500, 500];
    await gw.req('POST', '/api/keys', { name: 'doomed' });
    const deliveries = async () => (await gw.req('GET', `/api/webhooks/${hookId}/deliveries`)).json.deliveries as { status: string; event: string; attempts: number }[];
    for (let end = Date.now() + 10_000; Date.now() < end; ) {
      if ((await deliveries()).some((d) => d.status === 'failed')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await deliveries()).find((d) => d.status === 'failed')).toMatchObject({ event: 'key.created', attempts: 4 });
    expect((await gw.req('DELETE', `/api/webhooks/${hookId}`)).json).toEqual({ id: hookId, deleted: true });
    received = [];
    await gw.req('POST', '/api/keys', { name: 'unheard' });
    await new Promise((r) => setTimeout(r, 400));
    expect(received).toEqual([]);
  });
});
