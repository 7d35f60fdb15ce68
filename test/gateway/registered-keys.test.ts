/**
 * Registered keys: issued by a key with the `keys` scope (raw key once), usable at once, limited to
 * the provider asked for and pinned to the account asked for; hourly and daily budgets; idempotent
 * issuance; quotas (429, and /v1/quotas/check says so first); revoke = delete; the issue report to a
 * loopback GitHub-compatible tracker, and 503 without one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

const ISSUER = 'sk-issuer-key-aaaaaaaaaaaaaaa';
const PLAIN = 'sk-plain-key-bbbbbbbbbbbbbbbb';
const NARROW = 'sk-narrow-issuer-cccccccccccc';
let mock: MockUpstream;
let gw: GatewayHarness;
let tracker: Server;
let trackerPort = 0;
const filed: { path: string; auth: string | undefined; body: any }[] = [];
let accounts: { id: string; name: string }[] = [];

beforeAll(async () => {
  mock = await startLlmUpstream();
  tracker = createServer((req: IncomingMessage, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c));
    req.on('end', () => {
      filed.push({ path: req.url ?? '', auth: req.headers.authorization, body: JSON.parse(text) });
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ number: 7, html_url: 'https://tracker.example/acme/gw/issues/7' }));
    });
  });
  await new Promise<void>((r) => tracker.listen(0, '127.0.0.1', r));
  trackerPort = (tracker.address() as AddressInfo).port;
  gw = await startGateway({
    yaml: `providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_keys: [k1, k2], models: [m1]}
  - {id: an, kind: anthropic, base_url: "${mock.baseUrl('anthropic')}", api_key: k, models: [claude]}
pricing:
  oa/m1: {input: 1000, output: 1000}
keys:
  - {name: issuer, key: "${ISSUER}", models: ["*"], scopes: [keys]}
  - {name: plain, key: "${PLAIN}", models: ["*"]}
  - {name: narrow, key: "${NARROW}", models: ["an/*"], scopes: [keys]}
`,
    config: { registered_keys: { max_active_per_issuer: 4, max_issued_per_hour: 6, max_active_per_account: 2 }, issue_tracker: { url: `http://127.0.0.1:${trackerPort}`, repository: 'acme/gw', token: 'ghp-test-token', labels: ['gateway'] } },
  });
  accounts = ((await gw.req('GET', '/api/providers/oa')).json as { accounts: { id: string; name: string }[] }).accounts;
});
afterAll(async () => {
  await gw.close();
  await mock.close();
  await new Promise((r) => tracker.close(r));
});

const as = (key: string) => ({ Authorization: `Bearer ${key}` });
const k = (method: string, path: string, body?: unknown, key = ISSUER) => gw.req(method, path, body, as(key), { tcp: true });
const chat = (key: string, model = 'oa/m1') => gw.req('POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] }, as(key), { tcp: true });

describe('registered keys', () => {
  const issued: string[] = [];

  it('needs a key with the keys (or management) scope', async () => {
    expect((await gw.req('GET', '/api/v1/registered-keys', undefined, {}, { tcp: true })).status).toBe(401);
    const r = await k('POST', '/api/v1/registered-keys', {}, PLAIN);
    expect(r.status).toBe(403);
    expect(r.json.error.message).toMatch(/lacks the keys or management scope/);
  });

  it('issues a key pinned to one account, shown once, usable at once, limited to its provider', async () => {
    const acc = accounts[1]!;
    const r = await k('POST', '/api/v1/registered-keys', { name: 'app-1', accountId: acc.id, hourlyBudget: 0.02 });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ name: 'app-1', provider: 'oa', accountId: acc.id, models: ['oa/*'], status: 'active', hourlyBudget: 0.02, dailyBudget: null });
    expect(r.json.key).toMatch(/^sk-gw-/);
    issued.push(r.json.id);
    const raw = r.json.key as string;
    expect((await k('GET', `/api/v1/registered-keys/${r.json.id}`)).json.key).toBeUndefined();

    mock.reset();
    expect((await chat(raw)).status).toBe(200);
    expect((await chat(raw)).status).toBe(200);
    // Pinned: every call used the account asked for.
    expect(mock.requests.map((q) => q.headers.authorization)).toEqual(['Bearer k2', 'Bearer k2']);
    expect((await chat(raw, 'an/claude')).status).toBe(403);

    // The hourly budget: 2 × $0.015 spent of $0.02.
    const third = await chat(raw);
    expect(third.status).toBe(429);
    expect(third.json.error.message).toMatch(/^Hourly budget exceeded: \$0\.0\d+ \/ \$0\.0200/);
    expect(Number(third.headers['retry-after'])).toBeLessThanOrEqual(3600);
    const v = await k('GET', `/api/v1/registered-keys/${r.json.id}`);
    expect(v.json.budget.periods.hourly).toMatchObject({ limitUsd: 0.02, exceeded: true });
  });

  it('the same idempotencyKey answers the same key; a different one issues another', async () => {
    const a = await k('POST', '/api/v1/registered-keys', { provider: 'oa', idempotencyKey: 'order-42', dailyBudget: 5 });
    expect(a.status).toBe(201);
    const b = await k('POST', '/api/v1/registered-keys', { provider: 'oa', idempotencyKey: 'order-42', dailyBudget: 5 });
    expect(b.status).toBe(200);
    expect(b.json).toMatchObject({ id: a.json.id, key: a.json.key, idempotentReplay: true });
    issued.push(a.json.id);
    const list = await k('GET', '/api/v1/registered-keys');
    expect(list.json.total).toBe(2);
    expect(list.json.keys.map((x: { id: string }) => x.id)).toEqual(issued);
  });

  it('quotas: /v1/quotas/check tells first, issuance beyond them is 429 naming the quota', async () => {
    const acc = accounts[0]!;
    const c = await k('GET', `/v1/quotas/check?accountId=${encodeURIComponent(acc.id)}`);
    expect(c.status, c.text).toBe(200);
    expect(c.json).toMatchObject({ allowed: true, provider: 'oa', accountId: acc.id, limits: { maxActivePerIssuer: 4, maxIssuedPerHour: 6, maxActivePerAccount: 2 }, usage: { activeForIssuer: 2, activeForAccount: 0 } });
    for (let i = 0; i < 2; i++) {
      const r = await k('POST', '/api/v1/registered-keys', { accountId: acc.id });
      expect(r.status).toBe(201);
      issued.push(r.json.id);
    }
    const full = await k('GET', `/v1/quotas/check?accountId=${encodeURIComponent(acc.id)}`);
    expect(full.json.allowed).toBe(false);
    expect(full.json.reasons.join(' ')).toMatch(/active registered keys \(limit 2\)/);
    const refused = await k('POST', '/api/v1/registered-keys', { accountId: acc.id });
    expect(refused.status).toBe(429);
    expect(refused.json.error.message).toMatch(/refused by quota: .*this issuer has 4 active registered keys \(limit 4\).*account .* \(limit 2\)/);
    // Revoking frees a slot; revoke has the effect of DELETE.
    const rv = await k('POST', `/api/v1/registered-keys/${issued.pop()}/revoke`);
    expect(rv.json).toMatchObject({ revoked: true, deleted: true });
    expect((await k('GET', `/v1/quotas/check?provider=oa`)).json.allowed).toBe(true);
    const d = await k('DELETE', `/api/v1/registered-keys/${issued[1]}`);
    expect(d.status).toBe(200);
    expect((await k('GET', `/api/v1/registered-keys/${d.json.id}`)).status).toBe(404);
    // The idempotencyKey of a revoked key issues a new key.
    const again = await k('POST', '/api/v1/registered-keys', { provider: 'oa', idempotencyKey: 'order-42' });
    expect(again.status).toBe(201);
    expect(again.json.id).not.toBe(d.json.id);
    expect((await k('DELETE', `/api/v1/registered-keys/${again.json.id}`)).status).toBe(200);
  });

  it('the hourly issuance quota refuses with Retry-After', async () => {
    // Issued so far this hour: 5 (the revoked ones still count). One more passes, the next is refused.
    for (let i = 0; i < 1; i++) expect((await k('POST', '/api/v1/registered-keys', { provider: 'an' })).status).toBe(201);
    const r = await k('POST', '/api/v1/registered-keys', { provider: 'an' });
    expect(r.status).toBe(429);
    expect(r.json.error.message).toMatch(/issued 6 keys in the last hour \(limit 6\)/);
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(3500);
  });

  it('a revoked key stops working; other issuers see only their own keys; an issuer cannot widen its models', async () => {
    const mine = await k('GET', '/api/v1/registered-keys', undefined, NARROW);
    expect(mine.json.total).toBe(0);
    expect((await k('GET', `/api/v1/registered-keys/${issued[0]}`, undefined, NARROW)).status).toBe(404);
    const wide = await k('POST', '/api/v1/registered-keys', { provider: 'oa' }, NARROW);
    expect(wide.status).toBe(429);
    expect(wide.json.error.message).toMatch(/may not use provider oa/);
    const n = await k('POST', '/api/v1/registered-keys', {}, NARROW);
    expect(n.json.models).toEqual(['an/*']);
    const raw = n.json.key as string;
    expect((await chat(raw, 'an/claude')).status).toBe(200);
    expect((await k('DELETE', `/api/v1/registered-keys/${n.json.id}`, undefined, NARROW)).status).toBe(200);
    expect((await chat(raw, 'an/claude')).status).toBe(401);
  });

  it('bad input is a 400', async () => {
    for (const body of [{ accountId: 'nope' }, { provider: 'nope' }, { provider: 'an', accountId: accounts[0]!.id }, { hourlyBudget: -1 }, { expiresAt: 'soon' }, { expiresAt: 1000 }, { extra: 1 }]) {
      const r = await k('POST', '/api/v1/registered-keys', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe('issue report', () => {
  it('files an issue with the configured tracker', async () => {
    const r = await k('POST', '/v1/issues/report', { title: 'quota refused for oa', kind: 'quota', provider: 'oa', details: { limit: 4 } });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toEqual({ reported: true, repository: 'acme/gw', issue: { number: 7, url: 'https://tracker.example/acme/gw/issues/7' } });
    expect(filed).toHaveLength(1);
    expect(filed[0]).toMatchObject({ path: '/repos/acme/gw/issues', auth: 'Bearer ghp-test-token', body: { title: 'quota refused for oa', labels: ['gateway', 'quota'] } });
    expect(filed[0]!.body.body).toMatch(/- provider: oa/);
    expect(filed[0]!.body.body).toMatch(/"limit": 4/);
    expect((await k('POST', '/v1/issues/report', { title: 'x' }, PLAIN)).status).toBe(403);
  });

  it('answers 503 when no tracker is configured', async () => {
    const g = await startGateway({ yaml: `keys:\n  - {name: issuer, key: "${ISSUER}", models: ["*"], scopes: [keys]}\n` });
    try {
      const r = await g.req('POST', '/v1/issues/report', { title: 'x' }, as(ISSUER), { tcp: true });
      expect(r.status).toBe(503);
      expect(r.json.error.message).toMatch(/no issue tracker is configured/);
    } finally {
      await g.close();
    }
  });
});
