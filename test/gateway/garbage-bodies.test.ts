/**
 * Every gateway route that takes a body (inference, management, agents, keys) answers garbage with a
 * 4xx (or, for a route whose upstream or configuration is missing, 502/503), never a 500: invalid
 * JSON, the wrong JSON type, nulls and deeply nested junk.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let mock: MockUpstream;
let gw: GatewayHarness;

beforeAll(async () => {
  mock = await startLlmUpstream();
  gw = await startGateway({ yaml: `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}\n` });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

const BODIES: [string, string][] = [
  ['invalid JSON', '{"a": '],
  ['an array', '[1, 2, 3]'],
  ['null', 'null'],
  ['a string', '"hello"'],
  ['wrong types', JSON.stringify({ name: 42, url: [], id: {}, scope: 7, proxy_id: true, provider: null, models: 'x', cases: 'y', action: 1, path: 5, tool: [], apiKey: {}, model: [] })],
  ['deep nesting', '{"a":'.repeat(200) + '1' + '}'.repeat(200)],
];

describe('garbage bodies', () => {
  it('no route answers 500 to a malformed body', async () => {
    const routes = gw.instance.router
      .routes()
      .filter((r) => ['POST', 'PUT', 'PATCH'].includes(r.method))
      // Shutting the harness down or restarting it is not what this test is about.
      .filter((r) => r.pattern !== '/api/shutdown' && r.pattern !== '/api/restart');
    expect(routes.length).toBeGreaterThan(100);
    const bad: string[] = [];
    for (const r of routes) {
      const path = r.pattern.replace(/:[A-Za-z_]+/g, 'garbage-probe').replace(/\*$/, 'garbage-probe');
      for (const [what, body] of BODIES) {
        const res = await fetch(`${gw.trustedUrl}${path}`, { method: r.method, headers: { 'content-type': 'application/json' }, body });
        await res.arrayBuffer();
        if (res.status >= 500 && res.status !== 502 && res.status !== 503) bad.push(`${r.method} ${path} (${what}): ${res.status}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
