/**
 * Budgets and token limits through the real component on a hand-moved clock: the seed's schemas
 * (legacy budget shape refused), enforcement with 429, the warning threshold, the most restrictive
 * limit winning, provider limits steering a combo, and windows resetting on their interval.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/http/clock.js';
import { windowAt } from '../../src/gateway/limits/windows.js';
import { usdText } from '../../src/gateway/limits/budgets.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

const KEY = 'sk-gw-limits-aaaaaaaa';
const AUTH = { Authorization: `Bearer ${KEY}` };
const KEY_ID = 'file:app';

let mock: MockUpstream;
let gw: GatewayHarness;
let clock: ManualClock;

beforeAll(async () => {
  // 1000 in + 500 out per request; at $1/$2 per 1M that is $0.002 a request.
  mock = await startLlmUpstream({ defaults: { usage: { input: 1000, output: 500 } } });
  clock = new ManualClock(Date.parse('2030-01-02T12:00:00Z')); // a Wednesday
  gw = await startGateway({
    clock,
    yaml: `
providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: "sk-up", models: [m1, m2, {id: img, type: image}]}
  - {id: an, kind: anthropic, base_url: "${mock.baseUrl('anthropic')}", api_key: "sk-up", models: [claude-x]}
combos:
  - {name: duo, strategy: priority, targets: [oa/m1, an/claude-x]}
keys:
  - {name: app, key: "${KEY}", models: ["*"]}
pricing:
  oa/m1: {input: 1, output: 2}
  oa/m2: {input: 0, output: 200}
  oa/img: {per_image: 0.002}
  an/claude-x: {input: 1, output: 2}
`,
  });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});
afterEach(async () => {
  mock.reset();
  await gw.req('DELETE', `/api/usage/budget?apiKeyId=${KEY_ID}`);
  for (const l of (await gw.req('GET', '/api/usage/token-limits')).json.limits) await gw.req('DELETE', `/api/usage/token-limits?id=${l.id}`);
  // Move to a fresh day so earlier tests' usage is outside every daily window.
  clock.advance(24 * 3_600_000);
});

const chat = (model = 'oa/m1', extra: Record<string, unknown> = {}) => gw.req('POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }], ...extra }, AUTH, { tcp: true });

describe('windows', () => {
  it('daily, weekly (Monday) and monthly windows start at resetTime (UTC)', () => {
    const wed = Date.parse('2030-01-02T12:00:00Z');
    const iso = (w: { start: number; end: number }) => [new Date(w.start).toISOString(), new Date(w.end).toISOString()];
    expect(iso(windowAt('daily', '00:00', wed))).toEqual(['2030-01-02T00:00:00.000Z', '2030-01-03T00:00:00.000Z']);
    expect(iso(windowAt('daily', '18:30', wed))).toEqual(['2030-01-01T18:30:00.000Z', '2030-01-02T18:30:00.000Z']);
    expect(iso(windowAt('weekly', '00:00', wed))).toEqual(['2029-12-31T00:00:00.000Z', '2030-01-07T00:00:00.000Z']);
    expect(iso(windowAt('monthly', '00:00', wed))).toEqual(['2030-01-01T00:00:00.000Z', '2030-02-01T00:00:00.000Z']);
    expect(iso(windowAt('monthly', '12:30', wed))).toEqual(['2030-01-01T12:30:00.000Z', '2030-02-01T12:30:00.000Z']);
    expect(iso(windowAt('monthly', '12:30', Date.parse('2030-01-01T06:00:00Z')))).toEqual(['2029-12-01T12:30:00.000Z', '2030-01-01T12:30:00.000Z']);
  });
});

describe('budgets', () => {
  it('validates setBudgetSchema and refuses the legacy shape', async () => {
    const legacy = await gw.req('POST', '/api/usage/budget', { keyId: KEY_ID, limit: 5, period: 'daily' });
    expect(legacy.status).toBe(400);
    expect(legacy.json.error.message).toMatch(/legacy budget shape/);
    expect((await gw.req('POST', '/api/usage/budget', { apiKeyId: KEY_ID })).json.error.message).toMatch(/at least one of hourlyLimitUsd, dailyLimitUsd/);
    expect((await gw.req('POST', '/api/usage/budget', { apiKeyId: KEY_ID, dailyLimitUsd: 0, weeklyLimitUsd: 0 })).status).toBe(400);
    expect((await gw.req('POST', '/api/usage/budget', { apiKeyId: KEY_ID, dailyLimitUsd: 1, warningThreshold: 1.5 })).status).toBe(400);
    expect((await gw.req('POST', '/api/usage/budget', { apiKeyId: KEY_ID, dailyLimitUsd: 1, resetTime: '25:00' })).status).toBe(400);
    expect((await gw.req('POST', '/api/usage/budget', { apiKeyId: KEY_ID, dailyLimitUsd: 1, resetInterval: 'hourly' })).status).toBe(400);
    expect((await gw.req('POST', '/api/usage/budget', { apiKeyId: 'nope', dailyLimitUsd: 1 })).status).toBe(404);
    const ok = await gw.req('POST', '/api/usage/budget', { apiKeyId: KEY_ID, dailyLimitUsd: 1, monthlyLimitUsd: 20, resetInterval: 'monthly' });
    expect(ok.status).toBe(201);
    expect(ok.json).toMatchObject({ apiKeyId: KEY_ID, dailyLimitUsd: 1, monthlyLimitUsd: 20, warningThreshold: 0.8, resetTime: '00:00', resetInterval: 'monthly' });
    expect(ok.json.periods.daily).toMatchObject({ limitUsd: 1, spentUsd: 0, remainingUsd: 1, exceeded: false });
    expect((await gw.req('GET', '/api/usage/budget')).json.budgets).toHaveLength(1);
    expect((await gw.req('GET', `/api/usage/budget?apiKeyId=${KEY_ID}`)).json.nextResetAt).toBe('2030-02-01T00:00:00.000Z');
  });

  it('blocks with 429 once a window is spent, warns past the threshold, and resets with the window', async () => {
    await gw.req('POST', '/api/usage/budget', { apiKeyId: KEY_ID, dailyLimitUsd: 0.005, weeklyLimitUsd: 0.007, warningThreshold: 0.5 });
    const r1 = await chat();
    expect(r1.status).toBe(200);
    expect(r1.headers['x-gateway-budget-warning']).toBeUndefined();
    await chat();
    const r3 = await chat(); // $0.004 spent before it: past 50 % of the daily limit
    expect(r3.status).toBe(200);
    expect(r3.headers['x-gateway-budget-warning']).toBe('daily 80%');
    const blocked = await chat();
    expect(blocked.status).toBe(429);
    expect(blocked.json.error).toMatchObject({ code: 'budget_exceeded', message: 'Daily budget exceeded: $0.0060 / $0.0050' });
    expect(Number(blocked.headers['retry-after'])).toBe(12 * 3600);
    expect(mock.requests).toHaveLength(3);
    const view = (await gw.req('GET', `/api/usage/budget?apiKeyId=${KEY_ID}`)).json;
    expect(view.periods.daily).toMatchObject({ spentUsd: 0.006, exceeded: true, warning: true });
    expect(view.periods.weekly).toMatchObject({ spentUsd: 0.006, exceeded: false, warning: true });

    // Next day: the daily window reset; the weekly one still counts.
    clock.advance(12 * 3_600_000);
    expect((await chat()).status).toBe(200);
    const weekly = await chat();
    expect(weekly.status).toBe(429);
    expect(weekly.json.error.message).toBe('Weekly budget exceeded: $0.0080 / $0.0070');
    // Next Monday: everything is open again.
    clock.set(Date.parse('2030-01-14T00:00:01Z'));
    expect((await chat()).status).toBe(200);
  });

  it('20 simultaneous $0.10 calls on a $1 budget: exactly 10 served (each reserves its estimate before it goes)', async () => {
    await gw.req('POST', '/api/usage/budget', { apiKeyId: KEY_ID, dailyLimitUsd: 1 });
    // 500 output tokens at $200 per 1M: estimated (max_tokens) and charged $0.10 each.
    for (let i = 0; i < 20; i++) mock.enqueue({ latencyMs: 300 }, 'openai');
    const r = await Promise.all(Array.from({ length: 20 }, () => chat('oa/m2', { max_tokens: 500 })));
    expect(r.filter((x) => x.status === 200)).toHaveLength(10);
    expect(r.filter((x) => x.status !== 200).map((x) => x.json.error.code)).toEqual(Array(10).fill('budget_exceeded'));
    expect(mock.requests).toHaveLength(10);
    expect((await gw.req('GET', `/api/usage/budget?apiKeyId=${KEY_ID}`)).json.periods.daily).toMatchObject({ spentUsd: 1, exceeded: true });
  });

  it('media cost counts: images at their per_image price spend the same budget as chat', async () => {
    await gw.req('POST', '/api/usage/budget', { apiKeyId: KEY_ID, dailyLimitUsd: 0.005 });
    const image = () => gw.req('POST', '/v1/images/generations', { model: 'oa/img', prompt: 'a boat' }, AUTH, { tcp: true });
    expect((await image()).status).toBe(200);
    expect((await image()).status).toBe(200);
    expect((await image()).status).toBe(200); // $0.004 spent before it
    const blocked = await image();
    expect(blocked.status).toBe(429);
    expect(blocked.json.error.message).toBe('Daily budget exceeded: $0.0060 / $0.0050');
    expect((await chat()).status).toBe(429);
  });

  it('prints small amounts readably: $0.00003, not $0.0000', async () => {
    expect([0, 0.00003, 0.0000312, 1e-7, 0.0012, 0.006, 12.5].map(usdText)).toEqual(['0.0000', '0.00003', '0.000031', '0.0000001', '0.0012', '0.0060', '12.5000']);
    clock.advance(24 * 3_600_000); // a new day: the daily window is empty
    await gw.req('POST', '/api/usage/budget', { apiKeyId: KEY_ID, dailyLimitUsd: 0.00003 });
    expect((await chat()).status).toBe(200);
    const blocked = await chat();
    expect(blocked.status).toBe(429);
    expect(blocked.json.error.message).toBe('Daily budget exceeded: $0.0020 / $0.00003');
  });

  it('cache hits cost nothing and stay allowed', async () => {
    await gw.req('POST', '/api/usage/budget', { apiKeyId: KEY_ID, dailyLimitUsd: 0.001 });
    expect((await chat('oa/m1', { temperature: 0 })).status).toBe(200);
    const hit = await chat('oa/m1', { temperature: 0 });
    expect(hit.headers['x-gateway-cache']).toBe('HIT');
    expect((await chat()).status).toBe(429);
    await gw.req('DELETE', '/api/cache/stats');
  });
});

describe('token limits', () => {
  it('validates setTokenLimitSchema and shows the computed fields', async () => {
    const created = await gw.req('POST', '/api/usage/token-limits', { apiKeyId: KEY_ID, scopeType: 'model', scopeValue: 'oa/m1', tokenLimit: '5000', resetInterval: 'daily' });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ apiKeyId: KEY_ID, scopeType: 'model', scopeValue: 'oa/m1', tokenLimit: 5000, resetInterval: 'daily', resetTime: '00:00', enabled: true, tokensUsed: 0, remaining: 5000 });
    for (const f of ['windowStart', 'periodStartAt', 'nextResetAt']) expect(typeof created.json[f]).toBe('string');
    const def = await gw.req('POST', '/api/usage/token-limits', { apiKeyId: KEY_ID, scopeType: 'global', tokenLimit: 10 });
    expect(def.json.resetInterval).toBe('monthly');
    expect((await gw.req('POST', '/api/usage/token-limits', { apiKeyId: KEY_ID, scopeType: 'model', tokenLimit: 5 })).json.error.message).toMatch(/scopeValue is required/);
    expect((await gw.req('POST', '/api/usage/token-limits', { apiKeyId: KEY_ID, scopeType: 'team', tokenLimit: 5 })).status).toBe(400);
    expect((await gw.req('POST', '/api/usage/token-limits', { apiKeyId: KEY_ID, scopeType: 'global', tokenLimit: 0 })).status).toBe(400);
    expect((await gw.req('POST', '/api/usage/token-limits', { apiKeyId: KEY_ID, scopeType: 'global', tokenLimit: 'lots' })).status).toBe(400);
    expect((await gw.req('POST', '/api/usage/token-limits', { id: 'missing', apiKeyId: KEY_ID, scopeType: 'global', tokenLimit: 5 })).status).toBe(404);
    const updated = await gw.req('POST', '/api/usage/token-limits', { id: created.json.id, apiKeyId: KEY_ID, scopeType: 'model', scopeValue: 'oa/m1', tokenLimit: 6000 });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({ id: created.json.id, tokenLimit: 6000, resetInterval: 'daily' });
    expect((await gw.req('GET', `/api/usage/token-limits?apiKeyId=${KEY_ID}`)).json.total).toBe(2);
    expect((await gw.req('GET', '/api/usage/token-limits?apiKeyId=other')).json.total).toBe(0);
    expect((await gw.req('DELETE', '/api/usage/token-limits')).status).toBe(400);
    expect((await gw.req('DELETE', '/api/usage/token-limits?id=missing')).status).toBe(404);
  });

  it('the most restrictive matching limit wins, and the window resets on its interval', async () => {
    await gw.req('POST', '/api/usage/token-limits', { apiKeyId: KEY_ID, scopeType: 'global', tokenLimit: 4000, resetInterval: 'daily' });
    const model = (await gw.req('POST', '/api/usage/token-limits', { apiKeyId: KEY_ID, scopeType: 'model', scopeValue: 'oa/m1', tokenLimit: 2000, resetInterval: 'daily' })).json;
    const r1 = await chat();
    expect(r1.headers['x-gateway-token-limit-remaining']).toBe('2000');
    const r2 = await chat();
    expect(r2.headers['x-gateway-token-limit-remaining']).toBe('500');
    const r3 = await chat();
    expect(r3.status).toBe(429);
    expect(r3.json.error.code).toBe('token_limit_exceeded');
    expect(r3.json.error.message).toMatch(/3000 \/ 2000 tokens \(model oa\/m1, daily window resets at/);
    // Another model is only under the global limit (3000 of 4000 used).
    const other = await chat('an/claude-x');
    expect(other.status).toBe(200);
    expect(other.headers['x-gateway-token-limit-remaining']).toBe('1000');
    const global = await chat('an/claude-x');
    expect(global.status).toBe(429);
    expect(global.json.error.message).toMatch(/4500 \/ 4000 tokens \(all models/);
    const view = (await gw.req('GET', `/api/usage/token-limits?apiKeyId=${KEY_ID}`)).json.limits.find((l: any) => l.id === model.id);
    expect(view).toMatchObject({ tokensUsed: 3000, remaining: 0 });
    expect(mock.requests).toHaveLength(3); // the refused requests never went upstream

    clock.set(windowAt('daily', '00:00', clock.now()).end); // next midnight: new daily windows
    expect((await chat()).status).toBe(200);
    expect((await gw.req('GET', `/api/usage/token-limits?apiKeyId=${KEY_ID}`)).json.limits.find((l: any) => l.id === model.id)).toMatchObject({ tokensUsed: 1500, remaining: 500 });
  });

  it('a spent provider limit makes a combo move to its other target; disabled limits do not apply', async () => {
    const lim = (await gw.req('POST', '/api/usage/token-limits', { apiKeyId: KEY_ID, scopeType: 'provider', scopeValue: 'oa', tokenLimit: 1000, resetInterval: 'daily' })).json;
    expect((await chat('duo')).headers['x-gateway-provider']).toBe('oa');
    const second = await chat('duo');
    expect(second.status).toBe(200);
    expect(second.headers['x-gateway-provider']).toBe('an');
    const log = (await gw.req('GET', '/api/usage/request-logs?limit=1')).json.items[0];
    expect(log.attempts[0]).toMatchObject({ provider: 'oa', outcome: 'skipped', error: expect.stringMatching(/token limit reached/) });
    const direct = await chat('oa/m1');
    expect(direct.status).toBe(429);
    expect(direct.json.error.code).toBe('token_limit_exceeded');
    await gw.req('POST', '/api/usage/token-limits', { id: lim.id, apiKeyId: KEY_ID, scopeType: 'provider', scopeValue: 'oa', tokenLimit: 1000, enabled: false });
    expect((await chat('oa/m1')).status).toBe(200);
  });
});

describe('requests per minute (rpm on a key)', () => {
  it('a key with rpm gets 429 with Retry-After past its minute, and is served again the next minute', async () => {
    expect((await gw.req('POST', '/api/keys', { name: 'bad-rpm', rpm: 0 })).status).toBe(400);
    const made = await gw.req('POST', '/api/keys', { name: 'rpm-3', rpm: 3 });
    expect(made.status).toBe(201);
    expect(made.json.rpm).toBe(3);
    const auth = { Authorization: `Bearer ${made.json.key}` };
    const send = () => gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'user', content: 'hi' }] }, auth, { tcp: true });
    clock.set(Date.parse('2030-03-04T10:00:10Z'));
    const r = await Promise.all(Array.from({ length: 5 }, send));
    expect(r.map((x) => x.status).sort()).toEqual([200, 200, 200, 429, 429]);
    const refused = r.find((x) => x.status === 429)!;
    expect(refused.json.error).toMatchObject({ code: 'rate_limit_exceeded', message: 'rate limit reached for this API key: 3 requests per minute' });
    expect(refused.headers['retry-after']).toBe('50');
    clock.advance(50_000);
    expect((await send()).status).toBe(200);
    // Cleared: no limit any more.
    expect((await gw.req('PATCH', `/api/keys/${made.json.id}`, { rpm: null })).json.rpm).toBeUndefined();
    for (let i = 0; i < 5; i++) expect((await send()).status).toBe(200);
    await gw.req('DELETE', `/api/keys/${made.json.id}`);
  });
});
