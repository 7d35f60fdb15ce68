/** X-Gateway-Progress: progress events on SSE streams (periodic and final), the response header, none without it or on NDJSON and JSON answers. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let mock: MockUpstream;
let gw: GatewayHarness;

beforeAll(async () => {
  mock = await startLlmUpstream({ defaults: { text: 'one two three four five six', usage: { input: 3, output: 6 } } });
  gw = await startGateway({ yaml: `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}\n  - {id: ol, kind: ollama, base_url: "${mock.baseUrl('ollama')}", models: [llama]}\n` });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

const progressEvents = (text: string) =>
  text
    .split('\n\n')
    .filter((f) => f.startsWith('event: progress\n'))
    .map((f) => JSON.parse(f.split('\n')[1]!.replace(/^data: /, '')) as { tokens_generated: number; elapsed_ms: number; done?: boolean });

describe('progress events', () => {
  it('a stream that lasts past two seconds gets periodic progress and a final done event before [DONE]', async () => {
    mock.enqueue({ chunkDelayMs: 450 });
    const r = await gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', stream: true, messages: [{ role: 'user', content: 'slow' }] }, { 'X-Gateway-Progress': 'true' });
    expect(r.headers['x-gateway-progress']).toBe('enabled');
    const events = progressEvents(r.text);
    expect(events.length).toBeGreaterThanOrEqual(2);
    const last = events.at(-1)!;
    expect(last.done).toBe(true);
    expect(last.tokens_generated).toBeGreaterThan(0);
    expect(last.elapsed_ms).toBeGreaterThanOrEqual(2000);
    expect(events[0]!.done).toBeUndefined();
    expect(r.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(r.text.indexOf('"done":true')).toBeLessThan(r.text.indexOf('data: [DONE]'));
  }, 15_000);

  it('the Anthropic wire gets them too; without the header, on NDJSON and on JSON answers there are none', async () => {
    const an = await gw.req('POST', '/v1/messages', { model: 'oa/m1', max_tokens: 20, stream: true, messages: [{ role: 'user', content: 'hi' }] }, { 'X-Gateway-Progress': 'true' });
    expect(progressEvents(an.text).at(-1)).toMatchObject({ done: true });
    const plain = await gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(plain.headers['x-gateway-progress']).toBeUndefined();
    expect(progressEvents(plain.text)).toEqual([]);
    const ollama = await gw.req('POST', '/api/chat', { model: 'ol/llama', messages: [{ role: 'user', content: 'hi' }] }, { 'X-Gateway-Progress': 'true' });
    expect(ollama.headers['x-gateway-progress']).toBeUndefined();
    expect(ollama.text).not.toContain('progress');
    const json = await gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'user', content: 'hi' }] }, { 'X-Gateway-Progress': 'true' });
    expect(json.headers['x-gateway-progress']).toBeUndefined();
  });
});
