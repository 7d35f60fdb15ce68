/**
 * Resilience through the real component and mock upstreams, on a hand-moved clock: breaker
 * transitions and the 503 with Retry-After, connection cool-downs and model lock-outs with their
 * routes, fallback that skips unavailable accounts, session affinity, concurrency limits, and state
 * that survives a restart.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/http/clock.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let mock: MockUpstream;
beforeAll(async () => {
  mock = await startLlmUpstream();
});
afterAll(async () => {
  await mock.close();
});

const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });
const keyOf = (i: number) => String(mock.requests[i]?.headers.authorization ?? '').replace(/^Bearer /, '');

function yaml(m: MockUpstream): string {
  return `
providers:
  - {id: lo, kind: openai, base_url: "${m.baseUrl('openai')}", models: [m1]}
  - {id: oa, kind: openai, base_url: "${m.baseUrl('openai')}", api_keys: [k1, k2], models: [m1, m2]}
  - {id: ob, kind: openai, base_url: "${m.baseUrl('openai')}", api_key: kb, models: [m1]}
combos:
  - {name: guarded, strategy: priority, targets: [lo/m1, ob/m1]}
settings: {rate_limit_cooldown_ms: 1000, retry_wait_max_ms: 0}
`;
}

describe('over HTTP', () => {
  let gw: GatewayHarness;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock(Date.parse('2030-01-01T12:00:00Z'));
    gw = await startGateway({ yaml: yaml(mock), clock });
  });
  afterAll(async () => {
    await gw.close();
  });
  afterEach(async () => {
    mock.reset();
    await gw.req('POST', '/api/resilience/reset', { cooldowns: true, lockouts: true, settings: true });
  });

  it('opens the breaker after the threshold, answers 503 with Retry-After, probes once when half-open', async () => {
    // `lo` is keyless: the local profile (OPEN at 2 failures, reset after 15 s).
    mock.enqueue({ status: 500 });
    mock.enqueue({ status: 502 });
    expect((await gw.req('POST', '/v1/chat/completions', chat('lo/m1'))).status).toBe(500);
    expect((await gw.req('POST', '/v1/chat/completions', chat('lo/m1'))).status).toBe(502);
    const open = await gw.req('POST', '/v1/chat/completions', chat('lo/m1'));
    expect(open.status).toBe(503);
    expect(open.json.error.code).toBe('provider_circuit_open');
    expect(open.json.error.message).toMatch(/circuit breaker of provider lo is OPEN/);
    expect(open.headers['retry-after']).toBe('15');
    expect(open.headers['x-gateway-provider-breaker']).toBe('open');
    expect(mock.requests).toHaveLength(2);

    const health = await gw.req('GET', '/api/monitoring/health');
    expect(health.json).toMatchObject({ catalogCount: 4, configuredCount: 3, monitoredCount: 3, activeCount: 2, status: 'degraded' });
    expect(health.json.providerBreakers.find((b: any) => b.provider === 'lo')).toMatchObject({ state: 'OPEN', profile: 'local', failures: 2, lastStatus: 502 });

    // A combo skips the open provider without calling it.
    mock.reset();
    const viaCombo = await gw.req('POST', '/v1/chat/completions', chat('guarded'));
    expect(viaCombo.status).toBe(200);
    expect(viaCombo.headers['x-gateway-provider']).toBe('ob');
    expect(mock.requests).toHaveLength(1);

    // HALF_OPEN after 15 s: a failed probe reopens it (one more open cycle).
    clock.advance(15_000);
    mock.reset();
    mock.enqueue({ status: 503 });
    expect((await gw.req('POST', '/v1/chat/completions', chat('lo/m1'))).status).toBe(503);
    expect(mock.requests).toHaveLength(1);
    const again = (await gw.req('GET', '/api/resilience')).json.breakers.find((b: any) => b.provider === 'lo');
    expect(again).toMatchObject({ state: 'OPEN', openCycles: 2 });

    // A successful probe closes it.
    clock.advance(again.resetTimeoutMs);
    const ok = await gw.req('POST', '/v1/chat/completions', chat('lo/m1'));
    expect(ok.status).toBe(200);
    const closed = (await gw.req('GET', '/api/resilience')).json.breakers.find((b: any) => b.provider === 'lo');
    expect(closed).toMatchObject({ state: 'CLOSED', failures: 0, openCycles: 0 });
  });

  it('does not count 429 for the breaker; POST /api/resilience/reset closes an open breaker', async () => {
    for (let i = 0; i < 3; i++) mock.enqueue({ status: 429, retryAfter: '0' });
    for (let i = 0; i < 3; i++) await gw.req('POST', '/v1/chat/completions', chat('lo/m1'));
    let b = (await gw.req('GET', '/api/resilience')).json.breakers.find((x: any) => x.provider === 'lo');
    expect(b.state).toBe('CLOSED');
    mock.enqueue({ status: 500 });
    mock.enqueue({ status: 500 });
    await gw.req('POST', '/v1/chat/completions', chat('lo/m1'));
    await gw.req('POST', '/v1/chat/completions', chat('lo/m1'));
    b = (await gw.req('GET', '/api/resilience')).json.breakers.find((x: any) => x.provider === 'lo');
    expect(b.state).toBe('OPEN');
    const reset = await gw.req('POST', '/api/resilience/reset', { provider: 'lo' });
    expect(reset.json).toMatchObject({ breakersReset: 1, provider: 'lo' });
    expect((await gw.req('POST', '/v1/chat/completions', chat('lo/m1'))).status).toBe(200);
  });

  it('PATCH /api/resilience changes thresholds per provider type (and validates)', async () => {
    const r = await gw.req('PATCH', '/api/resilience', { providerBreaker: { apikey: { failureThreshold: 2, degradationThreshold: 1, resetTimeoutMs: 5000 } } });
    expect(r.status).toBe(200);
    expect(r.json.providerBreaker.apikey).toMatchObject({ failureThreshold: 2, degradationThreshold: 1, resetTimeoutMs: 5000 });
    expect(r.json.providerBreaker.oauth).toMatchObject({ degradationThreshold: 5, failureThreshold: 8, resetTimeoutMs: 60000 });
    expect(r.json.providers).toMatchObject({ lo: 'local', oa: 'apikey' });
    mock.enqueue({ status: 500 });
    mock.enqueue({ status: 500 });
    await gw.req('POST', '/v1/chat/completions', chat('ob/m1'));
    await gw.req('POST', '/v1/chat/completions', chat('ob/m1'));
    const open = await gw.req('POST', '/v1/chat/completions', chat('ob/m1'));
    expect(open.status).toBe(503);
    expect(open.headers['retry-after']).toBe('5');

    const bad = await gw.req('PATCH', '/api/resilience', { providerBreaker: { apikey: { degradationThreshold: 9, failureThreshold: 3 } } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/degradationThreshold \(9\) must not exceed failureThreshold \(3\)/);
    expect((await gw.req('PATCH', '/api/resilience', { providerBreaker: { apikey: { failureThreshold: 'x' } } })).status).toBe(400);
    expect((await gw.req('PATCH', '/api/resilience', { bogus: 1 })).json.error.message).toMatch(/unknown property bogus/);
  });

  it('cools an account down on a 429 and falls back to the next account, re-enabling it lazily', async () => {
    mock.enqueue({ status: 429, errorMessage: 'rate limit reached' });
    const r1 = await gw.req('POST', '/v1/chat/completions', chat('oa/m1'));
    expect(r1.status).toBe(200);
    expect([keyOf(0), keyOf(1)]).toEqual(['k1', 'k2']);
    expect(r1.headers['x-gateway-fallback-attempts']).toBe('1');

    const limits = await gw.req('GET', '/api/rate-limits');
    const k1 = limits.json.accounts.find((a: any) => a.provider === 'oa' && a.account === 'account-1');
    expect(k1).toMatchObject({ available: false, remainingMs: 1000, backoffLevel: 1, reason: 'rate_limit', lastStatus: 429 });
    expect(limits.json.accounts.find((a: any) => a.account === 'account-2' && a.provider === 'oa')).toMatchObject({ available: true, rateLimitedUntil: null });
    const prov = await gw.req('GET', '/api/providers/oa');
    expect(prov.json.accounts[0]).toMatchObject({ available: false, backoffLevel: 1, rateLimitedUntil: expect.any(String) });
    expect(prov.json.accounts[1]).toMatchObject({ available: true, rateLimitedUntil: null });
    expect(prov.json.breaker).toMatchObject({ state: 'CLOSED', profile: 'apikey' });

    // While it cools, requests go straight to k2.
    mock.reset();
    await gw.req('POST', '/v1/chat/completions', chat('oa/m1'));
    expect(keyOf(0)).toBe('k2');
    // Lazily back after the cool-down; the next rate limit doubles the wait.
    clock.advance(1000);
    mock.reset();
    mock.enqueue({ status: 429 });
    await gw.req('POST', '/v1/chat/completions', chat('oa/m1'));
    expect([keyOf(0), keyOf(1)]).toEqual(['k1', 'k2']);
    const l2 = (await gw.req('GET', '/api/rate-limits')).json.cooldowns.find((c: any) => c.accountId === 'oa#0');
    expect(l2).toMatchObject({ backoffLevel: 2, remainingMs: 2000 });

    // Both accounts cooling: 429 with Retry-After, and no upstream call.
    mock.reset();
    mock.enqueue({ status: 429, retryAfter: '30' });
    clock.advance(2000);
    await gw.req('POST', '/v1/chat/completions', chat('oa/m1', { messages: [{ role: 'user', content: 'x' }] }));
    // k1 got the 429 with Retry-After 30; k2 answered. Now cool k2 too.
    mock.reset();
    mock.enqueue({ status: 429, retryAfter: '10' });
    const r = await gw.req('POST', '/v1/chat/completions', chat('oa/m1'));
    expect(r.status).toBe(429);
    mock.reset();
    const none = await gw.req('POST', '/v1/chat/completions', chat('oa/m1'));
    expect(none.status).toBe(429);
    expect(none.json.error.code).toBe('rate_limited');
    expect(none.headers['retry-after']).toBe('10');
    expect(mock.requests).toHaveLength(0);

    // Updating the provider connection clears its cool-downs (seed: "clear via provider PUT") — for
    // gateway.yaml providers, POST /api/resilience/reset {cooldowns: true} does it.
    const cleared = await gw.req('POST', '/api/resilience/reset', { provider: 'oa', breakers: false, cooldowns: true });
    expect(cleared.json.cooldownsCleared).toBe(2);
    expect((await gw.req('POST', '/v1/chat/completions', chat('oa/m1'))).status).toBe(200);
  });

  it('locks a model out on one account without cooling the account, lists and clears lock-outs', async () => {
    // 403 "no access to the model" is about this account: the next account is tried.
    mock.enqueue({ status: 403, errorMessage: 'This key has no access to model m2' });
    const r = await gw.req('POST', '/v1/chat/completions', chat('oa/m2'));
    expect(r.status).toBe(200); // k2 served it
    expect([keyOf(0), keyOf(1)]).toEqual(['k1', 'k2']);
    // k1 still serves m1.
    mock.reset();
    await gw.req('POST', '/v1/chat/completions', chat('oa/m1'));
    expect(keyOf(0)).toBe('k1');
    // m2 skips k1.
    mock.reset();
    await gw.req('POST', '/v1/chat/completions', chat('oa/m2'));
    expect(keyOf(0)).toBe('k2');

    // A 404 (no such model) locks it too, and falls back to the next target.
    clock.advance(1000);
    mock.reset();
    mock.enqueue({ status: 404, errorMessage: 'The model m1 does not exist' });
    expect((await gw.req('POST', '/v1/chat/completions', chat('ob/m1'))).status).toBe(404);
    const list = await gw.req('GET', '/api/resilience/model-cooldowns');
    expect(list.json.total).toBe(2);
    expect(list.json.cooldowns.map((c: any) => `${c.provider}/${c.model}:${c.account}`)).toEqual(['oa/m2:account-1', 'ob/m1:account-1']);
    expect(list.json.cooldowns[0]).toMatchObject({ lastStatus: 403, failures: 1 });
    expect(list.json.cooldowns[1]).toMatchObject({ lastStatus: 404, remainingMs: 120_000 });
    expect(list.json.cooldowns[0].remainingMs).toBeLessThanOrEqual(list.json.cooldowns[1].remainingMs);

    expect((await gw.req('DELETE', '/api/resilience/model-cooldowns', {})).status).toBe(400);
    expect((await gw.req('DELETE', '/api/resilience/model-cooldowns', { provider: 'oa', model: 'm2' })).json.cleared).toBe(1);
    expect((await gw.req('DELETE', '/api/resilience/model-cooldowns', { all: true })).json.cleared).toBe(1);
    expect((await gw.req('GET', '/api/resilience/model-cooldowns')).json.total).toBe(0);
  });

  it('keeps a session on its account (round-robin otherwise) and re-pins when it fails', async () => {
    await gw.req('PATCH', '/api/resilience', { accounts: { strategy: 'round-robin', sessionAffinityTtlMs: 60_000 } });
    const send = async (sid?: string) => {
      mock.reset();
      await gw.req('POST', '/v1/chat/completions', chat('oa/m1'), sid ? { 'X-Session-Id': sid } : {});
      return keyOf(mock.requests.length - 1);
    };
    const spread = [await send(), await send(), await send(), await send()];
    expect(new Set(spread)).toEqual(new Set(['k1', 'k2']));
    const pinned = await send('agent-1');
    expect([await send('agent-1'), await send('agent-1'), await send('agent-1')]).toEqual([pinned, pinned, pinned]);
    // x_session_id works too.
    mock.reset();
    await gw.req('POST', '/v1/chat/completions', chat('oa/m1'), { x_session_id: 'agent-1' });
    expect(keyOf(0)).toBe(pinned);
  });

  it('re-pins a session when its account fails, and forgets the pin after the TTL', async () => {
    await gw.req('PATCH', '/api/resilience', { accounts: { strategy: 'fill-first', sessionAffinityTtlMs: 60_000 } });
    const send = async (sid?: string) => {
      mock.reset();
      await gw.req('POST', '/v1/chat/completions', chat('oa/m1'), sid ? { 'X-Session-Id': sid } : {});
      return keyOf(mock.requests.length - 1);
    };
    expect(await send('agent-2')).toBe('k1');
    // The pinned account fails: the other one serves and becomes the pin.
    mock.reset();
    mock.enqueue({ status: 429 });
    await gw.req('POST', '/v1/chat/completions', chat('oa/m1'), { 'X-Session-Id': 'agent-2' });
    expect([keyOf(0), keyOf(1)]).toEqual(['k1', 'k2']);
    clock.advance(1000); // k1 is available again: fill-first picks it, the session stays on k2
    expect(await send()).toBe('k1');
    expect(await send('agent-2')).toBe('k2');
    // Idle past the TTL: the pin is forgotten.
    clock.advance(60_001);
    expect(await send('agent-2')).toBe('k1');
  });

  it('session affinity also pins a combo target', async () => {
    await gw.req('PATCH', '/api/resilience', { accounts: { sessionAffinityTtlMs: 60_000 } });
    mock.enqueue({ status: 500 }); // lo/m1 fails once: the session lands on ob/m1
    const r1 = await gw.req('POST', '/v1/chat/completions', chat('guarded'), { 'X-Session-Id': 's-combo' });
    expect(r1.headers['x-gateway-provider']).toBe('ob');
    const r2 = await gw.req('POST', '/v1/chat/completions', chat('guarded'), { 'X-Session-Id': 's-combo' });
    expect(r2.headers['x-gateway-provider']).toBe('ob');
    const r3 = await gw.req('POST', '/v1/chat/completions', chat('guarded'));
    expect(r3.headers['x-gateway-provider']).toBe('lo');
  });
});

describe('concurrency limits', () => {
  let gw: GatewayHarness;
  beforeAll(async () => {
    gw = await startGateway({ yaml: yaml(mock) });
  });
  afterAll(async () => {
    await gw.close();
  });
  afterEach(async () => {
    mock.reset();
    await gw.req('POST', '/api/admin/concurrency', { global: 0, perProvider: { lo: 0, ob: 0 } });
  });

  it('GET/POST /api/admin/concurrency sets global and per-provider limits', async () => {
    const r = await gw.req('POST', '/api/admin/concurrency', { global: 5, perProvider: { lo: 2 }, queueTimeoutMs: 50 });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ global: 5, perProvider: { lo: 2 }, queueTimeoutMs: 50, status: { global: { limit: 5, inFlight: 0 } } });
    expect((await gw.req('GET', '/api/admin/concurrency')).json.status.perProvider.lo).toMatchObject({ limit: 2, inFlight: 0 });
    expect((await gw.req('POST', '/api/admin/concurrency', { global: -1 })).status).toBe(400);
    expect((await gw.req('POST', '/api/admin/concurrency', { perProvider: { lo: 'x' } })).status).toBe(400);
  });

  it('queues over the global limit, then answers 429 with a clear message', async () => {
    await gw.req('POST', '/api/admin/concurrency', { global: 1, queueTimeoutMs: 100 });
    mock.enqueue({ latencyMs: 400 });
    const slow = gw.req('POST', '/v1/chat/completions', chat('ob/m1'));
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    const rejected = await gw.req('POST', '/v1/chat/completions', chat('ob/m1'));
    expect(rejected.status).toBe(429);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
    expect(rejected.json.error).toMatchObject({ code: 'concurrency_limit_exceeded', message: expect.stringMatching(/concurrency limit \(1 requests in flight\); waited \d+ ms/) });
    expect((await slow).status).toBe(200);
    // A queued request that gets the slot in time goes through.
    mock.enqueue({ latencyMs: 50 });
    const a = gw.req('POST', '/v1/chat/completions', chat('ob/m1'));
    await new Promise((r) => setTimeout(r, 10));
    await gw.req('POST', '/api/admin/concurrency', { queueTimeoutMs: 2000 });
    const b = await gw.req('POST', '/v1/chat/completions', chat('ob/m1'));
    expect([(await a).status, b.status]).toEqual([200, 200]);
  });

  it('a full provider is skipped for the next combo target, and 503 when nothing is left', async () => {
    await gw.req('POST', '/api/admin/concurrency', { perProvider: { lo: 1 }, queueTimeoutMs: 50 });
    mock.enqueue({ latencyMs: 300 });
    const slow = gw.req('POST', '/v1/chat/completions', chat('lo/m1'));
    await new Promise((r) => setTimeout(r, 30));
    const viaCombo = await gw.req('POST', '/v1/chat/completions', chat('guarded'));
    expect(viaCombo.status).toBe(200);
    expect(viaCombo.headers['x-gateway-provider']).toBe('ob');
    const direct = await gw.req('POST', '/v1/chat/completions', chat('lo/m1'));
    expect(direct.status).toBe(503);
    expect(direct.json.error.code).toBe('provider_concurrency_limit');
    expect(direct.json.error.message).toMatch(/provider lo is at its concurrency limit \(1 calls in flight\)/);
    expect((await slow).status).toBe(200);
    // A stream holds its slot until it ends.
    mock.enqueue({ chunkDelayMs: 60, text: 'abcdefghi' });
    const stream = gw.req('POST', '/v1/chat/completions', chat('lo/m1', { stream: true }));
    await new Promise((r) => setTimeout(r, 60));
    expect((await gw.req('GET', '/api/admin/concurrency')).json.status.perProvider.lo.inFlight).toBe(1);
    expect((await stream).status).toBe(200);
    await new Promise((r) => setTimeout(r, 10));
    expect((await gw.req('GET', '/api/admin/concurrency')).json.status.perProvider.lo.inFlight).toBe(0);
  });
});

describe('state across a restart', () => {
  it('keeps an open breaker and an account cool-down (lock-outs are memory only)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctl-gw-res-'));
    const clock = new ManualClock(Date.parse('2030-01-01T12:00:00Z'));
    try {
      let gw = await startGateway({ yaml: yaml(mock), clock, dir });
      mock.enqueue({ status: 500 });
      mock.enqueue({ status: 500 });
      await gw.req('POST', '/v1/chat/completions', chat('lo/m1'));
      await gw.req('POST', '/v1/chat/completions', chat('lo/m1'));
      mock.enqueue({ status: 429, retryAfter: '600' });
      await gw.req('POST', '/v1/chat/completions', chat('oa/m1'));
      mock.enqueue({ status: 404 });
      await gw.req('POST', '/v1/chat/completions', chat('ob/m1'));
      await gw.close();

      gw = await startGateway({ yaml: yaml(mock), clock, dir });
      mock.reset();
      const open = await gw.req('POST', '/v1/chat/completions', chat('lo/m1'));
      expect(open.status).toBe(503);
      const cd = (await gw.req('GET', '/api/rate-limits')).json.cooldowns;
      expect(cd).toMatchObject([{ provider: 'oa', accountId: 'oa#0', remainingMs: 600_000 }]);
      expect((await gw.req('GET', '/api/resilience/model-cooldowns')).json.total).toBe(0);
      await gw.close();
    } finally {
      mock.reset();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
