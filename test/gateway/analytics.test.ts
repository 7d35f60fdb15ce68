/**
 * Analytics over the request log: model latency stats, prompt-cache health (verdict rules), the
 * telemetry summary, auto-routing and diversity breakdowns, and the health summary fields.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheHealth, diversity } from '../../src/gateway/analytics/summaries.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

describe('cache-health verdicts', () => {
  const row = (read: number, write: number, model = 'an/c') => ({ requested_model: model, provider: 'an', model: 'c', tokens_cached: read, tokens_cache_write: write });

  it('no-data when nothing touched the prompt cache', () => {
    expect(cacheHealth([]).verdict).toBe('no-data');
    expect(cacheHealth([row(0, 0), row(0, 0)])).toMatchObject({ verdict: 'no-data', uncachedCalls: 2, writeReadRatio: 0 });
  });

  it('healthy at ≥ 60 % warm calls, degraded at ≥ 30 %, thrash below', () => {
    // warm = read ≥ write > 0 or read only; cold = write only; rewrite = read < write
    expect(cacheHealth([row(5000, 0), row(5000, 100), row(4000, 0), row(0, 3000)])).toMatchObject({ verdict: 'healthy', warmCalls: 3, coldCalls: 1, warmShare: 0.75 });
    expect(cacheHealth([row(5000, 0), row(0, 3000), row(100, 3000)])).toMatchObject({ verdict: 'degraded', warmCalls: 1, coldCalls: 1, rewriteCalls: 1 });
    expect(cacheHealth([row(0, 3000), row(0, 3000), row(100, 9000), row(9000, 0)])).toMatchObject({ verdict: 'thrash' });
  });

  it('reports the write-size distribution, heavy-write concentration and a per-model split', () => {
    const rows = [...Array.from({ length: 18 }, () => row(2000, 800, 'a/x')), row(0, 90_000, 'b/y'), row(0, 120_000, 'b/y')];
    const h = cacheHealth(rows) as any;
    expect(h.writeSize).toMatchObject({ p50: 800, max: 120_000 });
    expect(h.heavyWrite).toMatchObject({ threshold: 8000, calls: 2, callShare: 0.1 });
    expect(h.heavyWrite.tokenShare).toBeGreaterThan(0.9);
    expect(h.byModel[0]).toMatchObject({ model: 'b/y', calls: 2, heavyWriteCalls: 2, verdict: 'thrash' });
    expect(h.byModel[1]).toMatchObject({ model: 'a/x', calls: 18, verdict: 'healthy' });
  });
});

describe('diversity', () => {
  it('Shannon entropy of provider shares against the enabled providers', () => {
    const even = diversity([{ provider: 'a', n: 5 }, { provider: 'b', n: 5 }], 2, '24h');
    expect(even).toMatchObject({ shannonEntropy: 1, maxEntropy: 1, diversityRatio: 1, providerUsage: { a: 0.5, b: 0.5 }, warnings: [] });
    const skewed = diversity([{ provider: 'a', n: 9 }, { provider: 'b', n: 1 }], 4, '24h') as any;
    expect(skewed.maxEntropy).toBe(2);
    expect(skewed.diversityRatio).toBeLessThan(0.3);
    expect(skewed.warnings).toEqual(['provider a carries 90% of the traffic', '2 enabled provider(s) served no request in the last 24h']);
    expect(diversity([], 1, '7d').warnings).toEqual(['no successful upstream traffic in the last 7d', 'only one provider is enabled: there is no fallback to another provider']);
  });
});

describe('analytics routes', () => {
  let mock: MockUpstream;
  let gw: GatewayHarness;
  beforeAll(async () => {
    mock = await startLlmUpstream({ defaults: { latencyMs: 5 } });
    gw = await startGateway({
      yaml: `
providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: "sk-up", models: [m1]}
  - {id: an, kind: anthropic, base_url: "${mock.baseUrl('anthropic')}", api_key: "sk-up", models: [claude-x]}
combos:
  - {name: duo, strategy: round-robin, targets: [oa/m1, an/claude-x]}
pricing:
  oa/m1: {input: 0.5, output: 1}
  an/claude-x: {input: 3, output: 15}
`,
    });
    for (let i = 0; i < 4; i++) await gw.req('POST', '/v1/chat/completions', { model: 'duo', messages: [{ role: 'user', content: `q${i}` }] });
    mock.enqueue({ status: 500 });
    await gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'user', content: 'x' }] });
    // Prompt-cache traffic on the Anthropic upstream: one cold write, then warm reads.
    mock.enqueue({ usage: { input: 5000, output: 10, cacheWrite: 4000 } });
    mock.enqueue({ usage: { input: 5000, output: 10, cached: 4000 } });
    mock.enqueue({ usage: { input: 5000, output: 10, cached: 4000 } });
    for (let i = 0; i < 3; i++) await gw.req('POST', '/v1/messages', { model: 'an/claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'cached prefix' }] });
  });
  afterAll(async () => {
    await gw.close();
    await mock.close();
  });

  it('GET /api/usage/model-latency-stats', async () => {
    const r = await gw.req('GET', '/api/usage/model-latency-stats?windowHours=1');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ windowHours: 1, minSamples: 1, maxRows: 10000 });
    const oa = r.json.entries.find((e: any) => e.provider === 'oa');
    expect(oa).toMatchObject({ model: 'm1', count: 3, successes: 2, successRate: 0.6667 });
    for (const f of ['avgMs', 'p50Ms', 'p95Ms', 'p99Ms']) expect(oa[f]).toBeGreaterThan(0);
    expect((await gw.req('GET', '/api/usage/model-latency-stats?provider=an')).json.entries.map((e: any) => e.provider)).toEqual(['an']);
    expect((await gw.req('GET', '/api/usage/model-latency-stats?minSamples=4')).json.count).toBe(1);
    expect((await gw.req('GET', '/api/usage/model-latency-stats?windowHours=-1')).status).toBe(400);
  });

  it('GET /api/usage/cache-health', async () => {
    const r = await gw.req('GET', '/api/usage/cache-health');
    expect(r.json).toMatchObject({ range: '24h', cacheWriteTokens: 4000, cacheReadTokens: 8000, coldCalls: 1, warmCalls: 2, verdict: 'healthy', writeReadRatio: 0.5 });
    expect((await gw.req('GET', '/api/usage/cache-health?range=1h&model=oa/m1')).json).toMatchObject({ range: '1h', model: 'oa/m1', verdict: 'no-data' });
    expect((await gw.req('GET', '/api/usage/cache-health?range=2d')).status).toBe(400);
  });

  it('GET /api/telemetry/summary, /api/analytics/auto-routing and /api/analytics/diversity', async () => {
    const t = await gw.req('GET', '/api/telemetry/summary');
    expect(Object.keys(t.json.providers).sort()).toEqual(['an', 'oa']);
    expect(t.json.providers.an).toMatchObject({ count: 5 });
    for (const f of ['p50', 'p95', 'p99']) expect(typeof t.json.providers.an[f]).toBe('number');

    const a = await gw.req('GET', '/api/analytics/auto-routing');
    expect(a.json).toMatchObject({ window: '24h', totalCalls: 8, strategyBreakdown: { 'round-robin': 4, single: 4 }, tierBreakdown: { standard: 3, pro: 5, ultra: 0, free: 0 } });
    expect(a.json.topProviders[0]).toMatchObject({ provider: 'an', calls: 5 });
    expect(typeof a.json.topProviders[0].avgLatencyMs).toBe('number');

    const d = await gw.req('GET', '/api/analytics/diversity?days=7');
    expect(d.json).toMatchObject({ window: '7d', totalCalls: 7, providerUsage: { an: 0.7143, oa: 0.2857 }, maxEntropy: 1 });
    expect(d.json.shannonEntropy).toBeGreaterThan(0.8);
    expect((await gw.req('GET', '/api/analytics/diversity?days=0')).status).toBe(400);
  });

  it('GET /api/monitoring/health has the seed summary fields', async () => {
    const h = await gw.req('GET', '/api/monitoring/health');
    expect(h.json).toMatchObject({ catalogCount: 4, configuredCount: 2, activeCount: 2, monitoredCount: 2, version: '0.1.0-test' });
    expect(['healthy', 'degraded']).toContain(h.json.status);
    expect(h.json.providerBreakers.map((b: any) => b.provider).sort()).toEqual(['an', 'oa']);
  });

  it('needs management auth on TCP', async () => {
    for (const path of ['/api/resilience', '/api/cache/stats', '/api/usage/budget', '/api/analytics/diversity', '/api/admin/concurrency', '/api/monitoring/health']) {
      expect((await gw.req('GET', path, undefined, {}, { tcp: true })).status, path).toBe(401);
    }
  });
});
