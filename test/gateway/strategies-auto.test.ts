/**
 * The rules, sla-aware and lkgp combo strategies through real requests, their options checked where
 * a combo is defined, and the auto-routing analytics counting them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let ma: MockUpstream;
let mb: MockUpstream;
let slow: MockUpstream;
let gw: GatewayHarness;

beforeAll(async () => {
  ma = await startLlmUpstream({ defaults: { text: 'from a' } });
  mb = await startLlmUpstream({ defaults: { text: 'from b' } });
  slow = await startLlmUpstream({ defaults: { text: 'from slow', latencyMs: 600 } });
  gw = await startGateway({
    yaml: `providers:
  - {id: a, kind: openai, base_url: "${ma.baseUrl('openai')}", api_key: k, models: [m]}
  - {id: b, kind: openai, base_url: "${mb.baseUrl('openai')}", api_key: k, models: [m]}
  - {id: slow, kind: openai, base_url: "${slow.baseUrl('openai')}", api_key: k, models: [m]}
combos:
  - name: smart
    strategy: rules
    targets: [a/m, b/m]
    rules:
      - {when: {hasTools: true}, prefer: [b/m]}
      - {when: {minPromptTokens: 200}, prefer: [b/m]}
  - {name: steady, strategy: sla-aware, targets: [slow/m, a/m], sla: {maxLatencyMs: 400}}
  - {name: sticky, strategy: lkgp, targets: [a/m, b/m]}
`,
  });
});
afterAll(async () => {
  await gw.close();
  for (const m of [ma, mb, slow]) await m.close();
});

const ask = async (model: string, extra: Record<string, unknown> = {}, text = 'hi') => {
  const r = await gw.req('POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: text }], ...extra });
  expect(r.status, r.text).toBe(200);
  return { text: r.json.choices[0].message.content as string, decision: r.headers['x-gateway-decision'] };
};

describe('auto-routing strategies', () => {
  it('rules: the first rule the request meets picks the target', async () => {
    expect((await ask('smart')).text).toBe('from a');
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    const t = await ask('smart', { tools });
    expect(t.text).toBe('from b');
    expect(t.decision).toMatch(/^strategy=rules; provider=b;/);
    expect((await ask('smart', {}, 'word '.repeat(400))).text).toBe('from b');
  });

  it('sla-aware: a target outside the SLA goes after the ones within it, once measured', async () => {
    expect((await ask('steady')).text).toBe('from slow'); // unmeasured counts as within
    expect((await ask('steady')).text).toBe('from a'); // p95 600 ms > 400 ms (a, measured in the rules case, stays under 400 even on a loaded machine)
    expect((await ask('steady')).text).toBe('from a');
  });

  it('lkgp: after a fallback the last good target goes first', async () => {
    expect((await ask('sticky')).text).toBe('from a');
    ma.enqueue({ status: 500, errorMessage: 'down' });
    expect((await ask('sticky')).text).toBe('from b'); // fell back
    expect((await ask('sticky')).text).toBe('from b'); // b is now the last known good
  });

  it('the analytics count every strategy used', async () => {
    const r = await gw.req('GET', '/api/analytics/auto-routing');
    expect(r.json.strategyBreakdown).toMatchObject({ rules: 3, 'sla-aware': 3, lkgp: 3 });
    expect(r.json.totalCalls).toBe(9);
  });

  it('options are checked where a combo is defined', async () => {
    const base = { name: 'x', strategy: 'rules', targets: ['a/m', 'b/m'] };
    const bad: [unknown, RegExp][] = [
      [{ ...base, rules: [{ when: { hasTools: true }, prefer: ['c/m'] }] }, /c\/m is not one of the combo's targets/],
      [{ ...base, rules: [{ when: { colour: 'red' }, prefer: ['a/m'] }] }, /unknown condition colour/],
      [{ ...base, strategy: 'sla-aware', sla: { maxLatencyMs: -1 } }, /maxLatencyMs must be a positive number/],
      [{ ...base, strategy: 'teleport' }, /unknown strategy/],
    ];
    for (const [body, msg] of bad) {
      const r = await gw.req('POST', '/api/combos', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.message).toMatch(msg);
    }
    const ok = await gw.req('POST', '/api/combos', { ...base, rules: [{ when: { stream: true }, prefer: ['b/m'] }] });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.json.rules).toEqual([{ when: { stream: true }, prefer: ['b/m'] }]);
    const patched = await gw.req('PATCH', `/api/combos/${ok.json.id}`, { strategy: 'sla-aware', rules: null, sla: { maxErrorRate: 0.5 } });
    expect(patched.json).toMatchObject({ strategy: 'sla-aware', sla: { maxLatencyMs: 5000, maxErrorRate: 0.5 } });
    expect(patched.json.rules).toBeUndefined();
  });
});
