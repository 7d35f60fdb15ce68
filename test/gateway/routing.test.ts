import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { Catalog } from '../../src/gateway/catalog.js';
import { parseConfigText } from '../../src/gateway/config-file.js';
import { GatewayStore } from '../../src/gateway/store.js';
import { GATEWAY_MIGRATIONS } from '../../src/gateway/schema.js';
import { openStore } from '../../src/store/index.js';
import { resolveModel, stripNoThinking } from '../../src/gateway/routing/resolve.js';
import { orderTargets, type StrategyContext } from '../../src/gateway/routing/strategies.js';
import { RoutingMetrics } from '../../src/gateway/routing/metrics.js';
import { classify } from '../../src/gateway/routing/classify.js';
import { UpstreamError } from '../../src/gateway/providers/index.js';
import { GatewayError } from '../../src/gateway/errors.js';
import { HttpError } from '../../src/http/errors.js';
import { PriceTable, costOf, formatCost } from '../../src/gateway/pricing.js';
import { runAttempts } from '../../src/gateway/routing/attempts.js';
import { BasicPolicy } from '../../src/gateway/routing/policy.js';
import { ManualClock } from '../../src/http/clock.js';
import { DEFAULT_ROUTING } from '../../src/gateway/types.js';

const YAML = `
providers:
  - {id: a, kind: openai, base_url: "http://127.0.0.1:1/v1", models: [m1, m2, shared, "org/model-x"]}
  - {id: b, kind: openai, base_url: "http://127.0.0.1:2/v1", models: [m1, shared], priority: -1}
  - {id: off, kind: openai, base_url: "http://127.0.0.1:3/v1", enabled: false, models: [m9]}
aliases: {fast: a/m1, best: combo1}
combos:
  - {name: combo1, strategy: priority, targets: [a/m1, fast, {model: b/m1, weight: 3}, nope/x]}
mappings:
  - {pattern: "gpt-4*", combo: combo1}
pricing:
  a/m1: {input: 5, output: 10}
  b/m1: {input: 1, output: 1}
`;

function catalog(text = YAML): Catalog {
  const db = new GatewayStore(openStore(':memory:', GATEWAY_MIGRATIONS));
  return new Catalog(db, parseConfigText(text, {}, 0));
}

describe('model resolution', () => {
  const c = catalog();
  it('resolves provider/model, aliases, combos, mappings and bare ids', () => {
    expect(resolveModel(c, 'a/m1')).toMatchObject({ via: 'direct', strategy: 'single', targets: [{ ref: 'a/m1', modelId: 'm1' }] });
    expect(resolveModel(c, 'a/org/model-x').targets[0]).toMatchObject({ modelId: 'org/model-x' });
    expect(resolveModel(c, 'fast')).toMatchObject({ via: 'alias', targets: [{ ref: 'a/m1' }] });
    const combo = resolveModel(c, 'combo1');
    expect(combo.via).toBe('combo');
    expect(combo.targets.map((t) => t.ref)).toEqual(['a/m1', 'a/m1', 'b/m1']);
    expect(combo.targets[2]!.weight).toBe(3);
    expect(combo.unresolved).toEqual([{ ref: 'nope/x', reason: 'unknown provider or model' }]);
    expect(resolveModel(c, 'best').combo?.name).toBe('combo1');
    expect(resolveModel(c, 'gpt-4o')).toMatchObject({ via: 'mapping', combo: { name: 'combo1' } });
    // bare ids: the highest-priority provider (b has priority -1) wins
    expect(resolveModel(c, 'shared').targets[0]!.ref).toBe('b/shared');
  });

  it('handles the no-thinking prefix', () => {
    expect(stripNoThinking('claude-gateway-no-thinking/an/claude-x')).toEqual({ model: 'an/claude-x', noThinking: true });
    expect(stripNoThinking('gateway-no-thinking/a/m1')).toEqual({ model: 'a/m1', noThinking: true });
    expect(stripNoThinking('a/foo-gateway-no-thinking/x').noThinking).toBe(false);
    expect(resolveModel(c, 'm-gateway-no-thinking/a/m1')).toMatchObject({ noThinking: true, targets: [{ ref: 'a/m1' }] });
  });

  it('rejects bad ids and unknown models', () => {
    expect(() => resolveModel(c, '')).toThrow(/required/);
    expect(() => resolveModel(c, 'a/\u0001')).toThrow(/malformed/);
    expect(() => resolveModel(c, '../etc')).toThrow(/malformed/);
    expect(() => resolveModel(c, 'zz/m1')).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => resolveModel(c, 'unknown')).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => resolveModel(c, 'off/m9')).toThrow(expect.objectContaining({ status: 503 }));
  });
});

describe('strategies', () => {
  const c = catalog();
  const targets = resolveModel(c, 'combo1').targets; // a/m1, a/m1 (alias), b/m1 (weight 3)
  const ctx = (random = () => 0.5): StrategyContext => ({ metrics: new RoutingMetrics(), pricing: c.pricing, random, counters: new Map() });

  it('priority keeps the configured order', () => {
    expect(orderTargets('priority', { name: 'combo1' }, targets, ctx()).map((t) => t.ref)).toEqual(['a/m1', 'a/m1', 'b/m1']);
  });

  it('round-robin rotates the start per combo', () => {
    const sc = ctx();
    const starts = [0, 1, 2, 3].map(() => orderTargets('round-robin', { name: 'combo1' }, targets, sc).map((t) => t.ref).join(','));
    expect(starts).toEqual(['a/m1,a/m1,b/m1', 'a/m1,b/m1,a/m1', 'b/m1,a/m1,a/m1', 'a/m1,a/m1,b/m1']);
  });

  it('weighted draws in proportion to weight, then the rest by weight', () => {
    // total weight 5: [0,1) a, [1,2) a, [2,5) b
    expect(orderTargets('weighted', { name: 'combo1' }, targets, ctx(() => 0.1)).map((t) => t.ref)).toEqual(['a/m1', 'b/m1', 'a/m1']);
    expect(orderTargets('weighted', { name: 'combo1' }, targets, ctx(() => 0.9)).map((t) => t.ref)).toEqual(['b/m1', 'a/m1', 'a/m1']);
  });

  it('random shuffles all targets', () => {
    const seq = [0.1, 0.9];
    let i = 0;
    const out = orderTargets('random', { name: 'combo1' }, targets, ctx(() => seq[i++ % 2]!));
    expect(out).toHaveLength(3);
    expect(out.map((t) => t.ref).sort()).toEqual(['a/m1', 'a/m1', 'b/m1']);
  });

  it('cost-optimized puts the cheapest input first', () => {
    expect(orderTargets('cost-optimized', { name: 'combo1' }, targets, ctx()).map((t) => t.ref)).toEqual(['b/m1', 'a/m1', 'a/m1']);
  });

  it('least-used prefers the target with fewer requests through the combo', () => {
    const sc = ctx();
    sc.metrics.record('a/m1', 'combo1', true, 10, 0);
    expect(orderTargets('least-used', { name: 'combo1' }, targets, sc)[0]!.ref).toBe('b/m1');
  });

  it('latency orders by p95 plus error penalty, unmeasured first', () => {
    const sc = ctx();
    for (let i = 0; i < 20; i++) sc.metrics.record('a/m1', 'combo1', true, 100, 0);
    expect(orderTargets('latency', { name: 'combo1' }, targets, sc)[0]!.ref).toBe('b/m1');
    for (let i = 0; i < 20; i++) sc.metrics.record('b/m1', 'combo1', true, 50, 0);
    expect(orderTargets('latency', { name: 'combo1' }, targets, sc)[0]!.ref).toBe('b/m1');
    for (let i = 0; i < 20; i++) sc.metrics.record('b/m1', 'combo1', false, 5, 0);
    expect(orderTargets('latency', { name: 'combo1' }, targets, sc)[0]!.ref).toBe('a/m1');
  });
});

describe('classification', () => {
  const http = (status: number, msg = 'x') => new UpstreamError('http', msg, { status, upstreamMessage: msg });
  it('follows the table', () => {
    expect(classify(http(400, 'messages must be non-empty'))).toMatchObject({ fallback: false });
    expect(classify(http(400, 'maximum context length exceeded'))).toMatchObject({ fallback: true });
    expect(classify(http(400, 'Rate limit reached for requests'))).toMatchObject({ fallback: true, rateLimited: true, scope: 'account' });
    expect(classify(http(401))).toMatchObject({ fallback: true, scope: 'account' });
    expect(classify(http(404))).toMatchObject({ fallback: true, scope: 'target' });
    expect(classify(http(429))).toMatchObject({ fallback: true, rateLimited: true, providerFault: false });
    expect(classify(http(503))).toMatchObject({ fallback: true, providerFault: true });
    expect(classify(http(418))).toMatchObject({ fallback: true });
    expect(classify(new UpstreamError('aborted', 'gone'))).toMatchObject({ stop: true, fallback: false });
    expect(classify(new UpstreamError('empty-stream', 'nothing'))).toMatchObject({ fallback: true, status: 502 });
    expect(classify(new UpstreamError('connection', 'refused'))).toMatchObject({ fallback: true, providerFault: true });
  });

  it('answers a domain error the gateway raised as the HttpError it replaced would be: 4xx as it is, others by fallback', () => {
    expect(classify(new GatewayError('invalid', 'plugin says no', { code: 'plugin_blocked' }))).toMatchObject({ fallback: false, stop: false, status: 400, message: 'plugin says no' });
    expect(classify(new HttpError(400, 'plugin says no'))).toMatchObject({ fallback: false, stop: false, status: 400, message: 'plugin says no' });
    expect(classify(new GatewayError('forbidden', 'policy'))).toMatchObject({ fallback: false, status: 403 });
    expect(classify(new GatewayError('remote', 'tracker down'))).toEqual(classify(new HttpError(502, 'tracker down')));
    expect(classify(new GatewayError('remote', 'tracker down'))).toMatchObject({ fallback: true, status: 502, message: 'gateway error: tracker down' });
  });
});

describe('pricing', () => {
  it('looks up exact, bare and dated default ids, and never double-counts cached or reasoning tokens', () => {
    const t = new PriceTable([[{ model: 'p/m', input: 2, output: 4, cached: 1, source: 'file' }]]);
    expect(t.lookup('p', 'm')?.input).toBe(2);
    expect(t.lookup('x', 'gpt-4o-mini-2024-07-18')?.input).toBe(0.15);
    expect(t.lookup('x', 'gpt-4o-2024-08-06')?.input).toBe(2.5);
    expect(t.lookup('x', 'unknown-model')).toBeUndefined();
    const cost = costOf({ inputTokens: 1000, cachedInputTokens: 400, outputTokens: 500, reasoningTokens: 300 }, t.lookup('p', 'm'));
    expect(cost).toBeCloseTo((600 * 2 + 400 * 1 + 500 * 4) / 1e6, 12);
    expect(formatCost(0)).toBe('0.0000000000');
    expect(formatCost(cost)).toBe('0.0036000000');
  });
});

describe('attempt loop', () => {
  const c = catalog();
  const clock = new ManualClock();
  const metrics = new RoutingMetrics();
  const deps = () => ({ policy: new BasicPolicy(() => DEFAULT_ROUTING), metrics, clock, sleep: async () => undefined });
  const plan = (model: string, maxAttempts = 10) => {
    const resolution = resolveModel(c, model);
    return { resolution, ordered: resolution.targets, request: { requestId: 'r' }, maxAttempts, retryWaitMaxMs: 0, signal: new AbortController().signal };
  };

  it('bounds the number of upstream calls', async () => {
    let calls = 0;
    const p = runAttempts(plan('combo1', 2), deps(), async () => {
      calls++;
      throw new UpstreamError('http', 'down', { status: 500, upstreamMessage: 'down' });
    });
    await expect(p).rejects.toMatchObject({ status: 500, message: expect.stringMatching(/attempt limit 2 reached/) });
    expect(calls).toBe(2);
  });

  it('logs unresolved targets as skipped and returns the first success', async () => {
    const r = await runAttempts(plan('combo1'), deps(), async (s) => s.ref);
    expect(r.value).toBe('a/m1');
    expect(r.attempts[0]).toMatchObject({ outcome: 'skipped', error: 'unknown provider or model' });
  });

  it('tries the next account of a provider on a rate limit before the next target', async () => {
    const two = catalog(`
providers:
  - {id: a, kind: openai, base_url: "http://127.0.0.1:1/v1", api_keys: [k1, k2], models: [m1]}
`);
    const resolution = resolveModel(two, 'a/m1');
    const seen: string[] = [];
    const r = await runAttempts(
      { resolution, ordered: resolution.targets, request: { requestId: 'r' }, maxAttempts: 10, retryWaitMaxMs: 0, signal: new AbortController().signal },
      deps(),
      async (s) => {
        seen.push(s.account.apiKey);
        if (s.account.apiKey === 'k1') throw new UpstreamError('http', 'slow down', { status: 429, upstreamMessage: 'slow down' });
        return 'ok';
      },
    );
    expect(seen).toEqual(['k1', 'k2']);
    expect(r.failedAttempts).toBe(1);
  });
});

describe('gateway.yaml', () => {
  it('rejects unknown fields, kinds, strategies and duplicate ids with the path', () => {
    expect(() => parseConfigText('providers: [{id: a, kind: openai, base_url: "http://x", bogus: 1}]', {}, 0)).toThrow(/unknown property bogus/);
    expect(() => parseConfigText('providers: [{id: a, kind: nope, base_url: "http://x"}]', {}, 0)).toThrow(/unknown kind/);
    expect(() => parseConfigText('combos: [{name: c, strategy: fastest, targets: [a/b]}]', {}, 0)).toThrow(/unknown strategy/);
    expect(() => parseConfigText('providers: [{id: a, kind: openai, base_url: "http://x"}, {id: a, kind: openai, base_url: "http://x"}]', {}, 0)).toThrow(/duplicate/);
    expect(() => parseConfigText('keys: [{name: k}]', {}, 0)).toThrow(/exactly one of key/);
    expect(() => parseConfigText('providers: [{id: a, kind: openai, base_url: "http://x", api_key_env: NOPE}]', {}, 0)).toThrow(/NOPE is not set/);
    expect(() => parseConfigText(': : :', {}, 0)).toThrow(/invalid YAML/);
  });

  it('parses examples/gateway.yaml', () => {
    const text = readFileSync(new URL('../../examples/gateway.yaml', import.meta.url), 'utf8');
    const cfg = parseConfigText(text, { GATEWAY_APP_KEY: 'sk-app-key-1234' }, 0);
    expect(cfg.providers.map((p) => p.id)).toEqual(['local', 'claude', 'ollama']);
    expect(cfg.combos.map((c) => c.name)).toEqual(['smart', 'spread', 'by-shape']);
    expect(cfg.combos[2]!.rules).toEqual([{ when: { hasTools: true }, prefer: ['local/m1'] }, { when: { minPromptTokens: 4000 }, prefer: ['local/m1'] }]);
    expect(cfg.settings).toEqual({ maxAttempts: 10, retryWaitMaxMs: 2000, streamReadinessTimeoutMs: 60000, rateLimitCooldownMs: 5000 });
  });

  it('reads environment secrets and key hashes', () => {
    const cfg = parseConfigText(
      'providers: [{id: a, kind: claude, base_url: "http://x", api_key_env: K}]\nkeys: [{name: k, key_sha256: "' + 'A'.repeat(64) + '"}]',
      { K: 'secret' },
      0,
    );
    expect(cfg.providers[0]).toMatchObject({ kind: 'anthropic', accounts: [{ apiKey: 'secret' }] });
    expect(cfg.keys[0]!.hash).toBe('a'.repeat(64));
  });
});
