/**
 * The three temporary-failure mechanisms in isolation, on a hand-moved clock: provider breaker
 * transitions and reset escalation, connection cool-down backoff, model lock-outs, and the policy's
 * account selection and session affinity.
 */
import { describe, expect, it } from 'vitest';
import { ProviderBreakers } from '../../src/gateway/resilience/breaker.js';
import { ConnectionCooldowns } from '../../src/gateway/resilience/cooldown.js';
import { ModelLockouts } from '../../src/gateway/resilience/lockout.js';
import { ResilientPolicy } from '../../src/gateway/resilience/policy.js';
import { DEFAULT_RESILIENCE, type ResilienceSettings } from '../../src/gateway/resilience/settings.js';
import { classify } from '../../src/gateway/routing/classify.js';
import { UpstreamError } from '../../src/gateway/providers/index.js';
import { Catalog } from '../../src/gateway/catalog.js';
import { parseConfigText } from '../../src/gateway/config-file.js';
import { GatewayStore } from '../../src/gateway/store.js';
import { GATEWAY_MIGRATIONS } from '../../src/gateway/schema.js';
import { openStore } from '../../src/store/index.js';
import { ManualClock } from '../../src/http/clock.js';
import { deepMerge } from '../../src/gateway/runtime-settings.js';
import { ConcurrencyLimiter, Gate } from '../../src/gateway/resilience/concurrency.js';

const http = (status: number, message = `upstream ${status}`, retryAfterMs?: number) =>
  classify(new UpstreamError('http', message, { status, upstreamMessage: message, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) }));

describe('provider circuit breaker', () => {
  const profile = { degradationThreshold: 2, failureThreshold: 4, resetTimeoutMs: 10_000, maxBackoffMultiplier: 4, backoffEscalationCount: 1 };

  it('goes CLOSED → DEGRADED → OPEN → HALF_OPEN (one probe) → CLOSED', () => {
    const b = new ProviderBreakers(() => profile);
    let now = 1_000_000;
    expect(b.state('p', now)).toBe('CLOSED');
    b.onFailure('p', now, 500, 'boom');
    expect(b.state('p', now)).toBe('CLOSED');
    b.onFailure('p', now, 502, 'boom');
    expect(b.state('p', now)).toBe('DEGRADED');
    expect(b.admit('p', now).ok).toBe(true); // DEGRADED still lets traffic through
    b.onFailure('p', now, 503, 'boom');
    b.onFailure('p', now, 504, 'boom');
    expect(b.state('p', now)).toBe('OPEN');
    const refused = b.admit('p', now + 4000);
    expect(refused).toMatchObject({ ok: false, retryAfterMs: 6000 });
    // Lazily HALF_OPEN once the reset time passed: exactly one probe goes through.
    now += 10_000;
    expect(b.state('p', now)).toBe('HALF_OPEN');
    expect(b.admit('p', now).ok).toBe(true);
    expect(b.admit('p', now)).toMatchObject({ ok: false, reason: expect.stringMatching(/probe is in flight/) });
    b.onSuccess('p');
    expect(b.state('p', now)).toBe('CLOSED');
    expect(b.get('p', now)).toBeUndefined(); // reset: no failures left
  });

  it('recovers gradually: a success takes one failure off', () => {
    const b = new ProviderBreakers(() => profile);
    for (let i = 0; i < 3; i++) b.onFailure('p', 0, 500, 'x');
    expect(b.state('p', 0)).toBe('DEGRADED');
    b.onSuccess('p');
    expect(b.get('p', 0)).toMatchObject({ failures: 2, state: 'DEGRADED' });
    b.onSuccess('p');
    expect(b.get('p', 0)).toMatchObject({ failures: 1, state: 'CLOSED' });
  });

  it('a failed probe reopens it, and the reset time grows over open cycles up to the cap', () => {
    const b = new ProviderBreakers(() => profile);
    let now = 0;
    for (let i = 0; i < 4; i++) b.onFailure('p', now, 500, 'x');
    const cycle = (expectedReset: number) => {
      const rec = b.get('p', now)!;
      expect(rec.state).toBe('OPEN');
      expect(b.resetMs(rec)).toBe(expectedReset);
      now += expectedReset - 1;
      expect(b.state('p', now)).toBe('OPEN');
      now += 1;
      expect(b.admit('p', now).ok).toBe(true); // the probe
      b.onFailure('p', now, 503, 'still down');
    };
    // escalation after 1 cycle: ×1, ×2, ×4, then capped at ×4
    cycle(10_000);
    cycle(20_000);
    cycle(40_000);
    cycle(40_000);
    expect(b.get('p', now)!.openCycles).toBe(5);
  });

  it('a probe that ends without a verdict (429, client gone) is given back', () => {
    const b = new ProviderBreakers(() => profile);
    for (let i = 0; i < 4; i++) b.onFailure('p', 0, 500, 'x');
    expect(b.admit('p', 10_000).ok).toBe(true);
    b.onNeutral('p');
    expect(b.admit('p', 10_001).ok).toBe(true);
  });
});

describe('classification feeds the right mechanism', () => {
  it('counts 408, 5xx and connection failures for the breaker, not 429 or client errors', () => {
    expect(http(408).providerFault).toBe(true);
    expect(http(500).providerFault).toBe(true);
    expect(http(503).providerFault).toBe(true);
    expect(classify(new UpstreamError('connection', 'ECONNREFUSED')).providerFault).toBe(true);
    expect(classify(new UpstreamError('timeout', 'no headers')).providerFault).toBe(true);
    expect(http(429).providerFault).toBe(false);
    expect(http(404).providerFault).toBe(false);
    expect(http(401).providerFault).toBe(false);
    expect(classify(new UpstreamError('aborted', 'client left')).providerFault).toBe(false);
  });
});

describe('connection cool-down', () => {
  const s = DEFAULT_RESILIENCE.connectionCooldown;
  const acc = { id: 'a1', name: 'first' };

  it('uses Retry-After when given, else base × 2^(level−1) capped, and clears on success', () => {
    const c = new ConnectionCooldowns();
    const r1 = c.onFailure('p', acc, http(429, 'slow down', 30_000), 0, s, 1000);
    expect(r1).toMatchObject({ rateLimitedUntil: 30_000, reason: 'rate_limit', backoffLevel: 0 });
    expect(c.active('p#a1', 29_999)).toBeDefined();
    expect(c.active('p#a1', 30_000)).toBeUndefined(); // lazily available again
    // Without a hint: exponential backoff.
    expect(c.onFailure('p', acc, http(429), 30_000, s, 1000).rateLimitedUntil).toBe(31_000);
    // A concurrent failure while still cooling does not raise the level again.
    expect(c.onFailure('p', acc, http(429), 30_500, s, 1000)).toMatchObject({ backoffLevel: 1, rateLimitedUntil: 31_500 });
    expect(c.onFailure('p', acc, http(429), 40_000, s, 1000)).toMatchObject({ backoffLevel: 2, rateLimitedUntil: 42_000 });
    expect(c.onFailure('p', acc, http(429), 50_000, s, 1000)).toMatchObject({ backoffLevel: 3, rateLimitedUntil: 54_000 });
    let now = 100_000;
    for (let i = 0; i < 20; i++) c.onFailure('p', acc, http(429), (now += 1_000_000), s, 1000);
    expect(c.active('p#a1', now)!.rateLimitedUntil - now).toBe(s.maxMs);
    c.onSuccess('p#a1');
    expect(c.forProvider('p')).toEqual([]);
  });

  it('a quota answer cools the account for quotaMs', () => {
    const c = new ConnectionCooldowns();
    expect(c.onFailure('p', acc, http(402, 'payment required'), 0, s, 1000)).toMatchObject({ reason: 'quota_exhausted', rateLimitedUntil: s.quotaMs });
    expect(c.onFailure('p', { id: 'a2', name: 'b' }, http(429, 'You exceeded your current quota (insufficient_quota)'), 0, s, 1000).reason).toBe('quota_exhausted');
  });
});

describe('model lock-out', () => {
  const s = DEFAULT_RESILIENCE.modelLockout;
  const acc = { id: 'a1', name: 'first' };

  it('locks (provider, account, model) on 404/403 with a doubling duration, not the account', () => {
    const l = new ModelLockouts();
    expect(l.onFailure('p', acc, 'm2', http(404, 'model not found'), 0, s)).toMatchObject({ until: 120_000, failures: 1 });
    expect(l.locked('p\u0000a1\u0000m2', 1)).toBeDefined();
    expect(l.locked('p\u0000a1\u0000m1', 1)).toBeUndefined();
    expect(l.onFailure('p', acc, 'm2', http(404), 200_000, s)!.until).toBe(200_000 + 240_000);
    l.onSuccess('p\u0000a1\u0000m2'); // 2 → 1
    l.onSuccess('p\u0000a1\u0000m2'); // 1 → 0: gone
    expect(l.list(0)).toEqual([]);
    // 5xx and generic 429 are not about the model.
    expect(l.onFailure('p', acc, 'm2', http(500), 0, s)).toBeUndefined();
    expect(l.onFailure('p', acc, 'm2', http(429, 'too many requests'), 0, s)).toBeUndefined();
    // Off switch.
    expect(l.onFailure('p', acc, 'm2', http(404), 0, { ...s, enabled: false })).toBeUndefined();
  });

  it('a per-model daily quota locks until the next UTC midnight', () => {
    const l = new ModelLockouts();
    const noon = Date.parse('2030-01-01T12:00:00Z');
    const r = l.onFailure('p', acc, 'm1', http(429, "You exceeded today's quota for model m1"), noon, s)!;
    expect(new Date(r.until).toISOString()).toBe('2030-01-02T00:00:00.000Z');
  });
});

describe('policy: accounts, affinity, and mechanisms kept apart', () => {
  const yaml = `
providers:
  - {id: a, kind: openai, base_url: "http://127.0.0.1:1/v1", api_keys: [k1, k2, k3], models: [m1, m2]}
  - {id: lo, kind: ollama, base_url: "http://127.0.0.1:2", models: [l1]}
`;
  function setup(patch: Record<string, unknown> = {}) {
    const db = new GatewayStore(openStore(':memory:', GATEWAY_MIGRATIONS));
    const catalog = new Catalog(db, parseConfigText(yaml, {}, 0));
    const clock = new ManualClock(0);
    const settings = deepMerge(DEFAULT_RESILIENCE as unknown as Record<string, unknown>, patch) as unknown as ResilienceSettings;
    const policy = new ResilientPolicy({ settings: () => settings, defaultCooldownMs: () => 1000, provider: (id) => catalog.providers.get(id), clock });
    const provider = catalog.providers.get('a')!;
    const subject = (i: number, sessionId?: string) => ({
      ref: 'a/m1',
      provider,
      modelId: 'm1',
      account: provider.config.accounts[i]!,
      request: { requestId: 'r', ...(sessionId ? { sessionId } : {}) },
    });
    return { policy, provider, clock, subject, catalog };
  }

  it('guesses breaker profiles: keyless and Ollama are local, keyed ones apikey', () => {
    const { policy } = setup({ providerProfiles: { a: 'oauth' } });
    expect(policy.profileOf('lo')).toBe('local');
    expect(policy.profileOf('a')).toBe('oauth');
    expect(setup().policy.profileOf('a')).toBe('apikey');
  });

  it('fill-first keeps priority order; round-robin rotates (sticky for stickyLimit requests)', () => {
    const ff = setup();
    expect(ff.policy.accounts(ff.provider, 'm1', { requestId: 'r' }).map((a) => a.apiKey)).toEqual(['k1', 'k2', 'k3']);
    const rr = setup({ accounts: { strategy: 'round-robin' } });
    const firsts = [0, 1, 2, 3].map(() => rr.policy.accounts(rr.provider, 'm1', { requestId: 'r' })[0]!.apiKey);
    expect(firsts).toEqual(['k1', 'k2', 'k3', 'k1']);
    const sticky = setup({ accounts: { strategy: 'round-robin', stickyLimit: 2 } });
    expect([0, 1, 2, 3].map(() => sticky.policy.accounts(sticky.provider, 'm1', { requestId: 'r' })[0]!.apiKey)).toEqual(['k1', 'k1', 'k2', 'k2']);
  });

  it('pins a session to the account that served it, re-pins when it fails, forgets after the TTL', () => {
    const { policy, provider, clock, subject } = setup({ accounts: { sessionAffinityTtlMs: 60_000 } });
    const first = (sid: string) => policy.accounts(provider, 'm1', { requestId: 'r', sessionId: sid })[0]!.apiKey;
    policy.record(subject(1, 's1'), { ok: true, latencyMs: 1 }, clock.now());
    expect(first('s1')).toBe('k2');
    expect(first('s2')).toBe('k1');
    // The pinned account fails: the pin goes, and whatever serves next is pinned.
    policy.record(subject(1, 's1'), { ok: false, latencyMs: 1, classification: http(500) }, clock.now());
    expect(first('s1')).toBe('k1');
    policy.record(subject(2, 's1'), { ok: true, latencyMs: 1 }, clock.now());
    expect(first('s1')).toBe('k3');
    clock.advance(60_001);
    expect(first('s1')).toBe('k1');
  });

  it('a 429 cools the account, a 404 locks the model, a 5xx counts for the breaker: each alone', () => {
    const { policy, clock, subject } = setup();
    policy.record(subject(0), { ok: false, latencyMs: 1, classification: http(429) }, clock.now());
    expect(policy.admit(subject(0), clock.now())).toMatchObject({ ok: false, kind: 'cooldown', scope: 'account' });
    expect(policy.admit(subject(1), clock.now()).ok).toBe(true);
    expect(policy.breakers.get('a', clock.now())).toBeUndefined();

    policy.record(subject(1), { ok: false, latencyMs: 1, classification: http(404, 'The model m1 does not exist') }, clock.now());
    expect(policy.admit(subject(1), clock.now())).toMatchObject({ ok: false, kind: 'lockout' });
    expect(policy.admit({ ...subject(1), ref: 'a/m2', modelId: 'm2' }, clock.now()).ok).toBe(true);
    expect(policy.cooldowns.active('a#' + subject(1).account.id, clock.now())).toBeUndefined();

    for (let i = 0; i < 12; i++) policy.record(subject(2), { ok: false, latencyMs: 1, classification: http(503) }, clock.now());
    expect(policy.admit(subject(2), clock.now())).toMatchObject({ ok: false, kind: 'breaker', scope: 'target' });
    expect(policy.cooldowns.active('a#' + subject(2).account.id, clock.now())).toBeUndefined();
  });
});

describe('concurrency gates', () => {
  it('a gate admits up to its limit and lets waiters in FIFO on release', async () => {
    const g = new Gate(1);
    expect(g.tryAcquire()).toBe(true);
    expect(g.tryAcquire()).toBe(false);
    const signal = new AbortController().signal;
    const w1 = g.wait(1000, signal);
    const w2 = g.wait(20, signal);
    expect(g.queued).toBe(2);
    expect(await w2).toBe(false); // timed out
    g.release();
    expect(await w1).toBe(true);
    expect(g.active).toBe(1);
  });

  it('global limit: queue, then 429 with a clear message; per provider: undefined slot', async () => {
    const l = new ConcurrencyLimiter();
    l.configure({ global: 1, perProvider: { p: 1 }, queueTimeoutMs: 20, maxQueue: 10 });
    const signal = new AbortController().signal;
    const r1 = await l.acquireGlobal(signal);
    await expect(l.acquireGlobal(signal)).rejects.toMatchObject({ status: 429, code: 'concurrency_limit_exceeded', message: expect.stringMatching(/concurrency limit \(1 requests in flight\)/) });
    r1();
    r1(); // idempotent
    expect(l.status().global.inFlight).toBe(0);
    const s1 = l.tryProvider('p')!;
    expect(l.tryProvider('p')).toBeUndefined();
    expect(await l.waitProvider('p', signal)).toBeUndefined();
    s1();
    expect(l.tryProvider('other')).toBeTypeOf('function'); // unlimited
    l.configure({ global: 0, perProvider: {}, queueTimeoutMs: 20, maxQueue: 10 });
    expect(l.limited('p')).toBe(false);
  });
});

describe('gateway.yaml runtime sections', () => {
  it('camelises and checks the resilience, cache and concurrency sections (ids kept as they are)', () => {
    const cfg = parseConfigText(
      `
resilience:
  provider_breaker: {apikey: {failure_threshold: 3, degradation_threshold: 2}}
  accounts: {strategy: round-robin, per_provider: {my_prov: fill-first}}
  provider_profiles: {my_prov: local}
cache: {mode: all, memory_max_size: 10}
concurrency: {global: 4, per_provider: {my_prov: 2}}
`,
      {},
      0,
    );
    expect(cfg.sections).toEqual({
      resilience: { providerBreaker: { apikey: { failureThreshold: 3, degradationThreshold: 2 } }, accounts: { strategy: 'round-robin', perProvider: { my_prov: 'fill-first' } }, providerProfiles: { my_prov: 'local' } },
      cache: { mode: 'all', memoryMaxSize: 10 },
      concurrency: { global: 4, perProvider: { my_prov: 2 } },
    });
    expect(() => parseConfigText('resilience: {provider_breaker: {apikey: {degradation_threshold: 20}}}', {}, 0)).toThrow(/degradationThreshold \(20\) must not exceed failureThreshold \(12\)/);
    expect(() => parseConfigText('cache: {mode: sometimes}', {}, 0)).toThrow(/cache\/mode/);
    expect(() => parseConfigText('concurrency: {bogus: 1}', {}, 0)).toThrow(/unknown property bogus/);
  });
});
