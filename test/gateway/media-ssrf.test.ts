import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHarness } from './harness.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';

/** Chat image URLs a provider needs inline are fetched under the SSRF policy: a refusal is the client's 400. */
describe('gateway media URLs under the SSRF policy', () => {
  let mock: MockUpstream;
  let h: GatewayHarness;
  beforeAll(async () => {
    mock = await startLlmUpstream();
    h = await startGateway({
      yaml: `providers:
  - {id: ge, kind: gemini, base_url: "${mock.baseUrl('gemini')}", api_key: "k", models: [g1]}
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: "k", models: [m1]}
combos:
  - {name: both, strategy: priority, targets: [ge/g1, oa/m1]}
`,
    });
  });
  afterAll(async () => {
    await h.close();
    await mock.close();
  });

  const chat = (model: string, url: string) =>
    h.req('POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url } }] }] });

  it('answers 400 naming the private address and egress.allow for every private spelling, and tries no other target', async () => {
    for (const url of ['https://[::ffff:127.0.0.1]:1/x.png', 'https://[::ffff:7f00:1]/x.png', 'https://[::ffff:10.0.0.1]/x.png', 'https://[::ffff:169.254.169.254]/x.png', 'https://2130706433/x.png', 'https://localhost/x.png']) {
      const r = await chat('ge/g1', url);
      expect(r.status, url).toBe(400);
      expect(r.json.error.type, url).toBe('invalid_request_error');
      expect(r.json.error.message, url).toMatch(/: media URL is not allowed or not reachable: (localhost resolves to )?private address \S+ is not in egress\.allow \(to allow it, add \S+( or \S+)? to egress\.allow in ctl\.yaml and reload with SIGHUP\)$/);
    }
    mock.reset();
    const combo = await chat('both', 'https://[::ffff:127.0.0.1]/x.png');
    expect(combo.status).toBe(400);
    expect(mock.requests).toHaveLength(0); // no fallback to the next target with the client's bad URL
  });
});
