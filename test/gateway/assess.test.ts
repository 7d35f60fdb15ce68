/**
 * /api/assess probes models through the gateway's routing and categorises them (latency class, price
 * tier, capabilities); an unreachable one is unavailable with its error; the probes feed the routing
 * metrics the latency strategy reads; scopes and bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let mock: MockUpstream;
let gw: GatewayHarness;

beforeAll(async () => {
  mock = await startLlmUpstream();
  gw = await startGateway({
    yaml: `providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [gpt-4o, {id: text-embedding-3-small, type: embedding}]}
  - {id: an, kind: anthropic, base_url: "${mock.baseUrl('anthropic')}", api_key: k, models: [claude-sonnet-4]}
  - {id: gone, kind: openai, base_url: "http://127.0.0.1:9/v1", api_key: k, models: [m]}
pricing:
  oa/gpt-4o: {input: 2.5, output: 10}
  an/claude-sonnet-4: {input: 15, output: 75}
combos:
  - {name: quick, strategy: latency, targets: [gone/m, oa/gpt-4o]}
`,
  });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

describe('assess', () => {
  it('probes every chat model and categorises it', async () => {
    const r = await gw.req('POST', '/api/assess', { scope: { type: 'all' }, trigger: 'test' });
    expect(r.status, r.text).toBe(200);
    expect(r.json.summary).toMatchObject({ total: 3, ok: 2, unavailable: 1, byTier: { pro: 1, ultra: 1, free: 1 } });
    const by = Object.fromEntries(r.json.results.map((x: { model: string }) => [x.model, x]));
    expect(by['oa/gpt-4o']).toMatchObject({ ok: true, category: 'fast', tier: 'pro', capabilities: { chat: true } });
    expect(by['an/claude-sonnet-4']).toMatchObject({ ok: true, tier: 'ultra' });
    expect(by['gone/m']).toMatchObject({ ok: false, category: 'unavailable', error: expect.stringMatching(/^HTTP 5\d\d/) });
    expect(by['oa/text-embedding-3-small']).toBeUndefined();
    // The probes went upstream as one-token chats.
    expect(mock.requests.some((q) => JSON.stringify(q.body).includes('Reply with OK.'))).toBe(true);

    const g = await gw.req('GET', '/api/assess');
    expect(g.json.assessments.map((a: { model: string }) => a.model)).toEqual(['an/claude-sonnet-4', 'gone/m', 'oa/gpt-4o']);
    expect(g.json.runs[0]).toMatchObject({ id: r.json.id, trigger: 'test', summary: { total: 3 } });
  });

  it('the probes feed the routing metrics: the latency strategy already knows the dead target', async () => {
    const m = await gw.req('GET', '/api/combos/metrics?combo=quick');
    expect(m.status).toBe(200);
    mock.reset();
    const r = await gw.req('POST', '/v1/chat/completions', { model: 'quick', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-decision']).toMatch(/provider=oa;/);
    expect(r.headers['x-gateway-fallback-attempts'] ?? '0').toBe('0');
  });

  it('scopes: one provider, one model; unknown ones are a 400', async () => {
    expect((await gw.req('POST', '/api/assess', { scope: { type: 'provider', providerId: 'an' } })).json.summary.total).toBe(1);
    expect((await gw.req('POST', '/api/assess', { scope: { type: 'model', modelId: 'oa/gpt-4o' } })).json.results[0].model).toBe('oa/gpt-4o');
    expect((await gw.req('POST', '/api/assess', { scope: { type: 'provider', providerId: 'nope' } })).status).toBe(400);
    expect((await gw.req('POST', '/api/assess', { scope: { type: 'everything' } })).status).toBe(400);
  });
});
