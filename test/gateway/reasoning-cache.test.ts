/**
 * The reasoning cache: an OpenAI-format client calling an Anthropic thinking model with tools drops
 * the thinking block and its signature; the gateway keeps them by tool call id (JSON and streamed
 * answers) and hands them back to the same provider on the next turn, never to another provider.
 * GET/DELETE /api/cache/reasoning with its filters.
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
  - {id: an, kind: anthropic, base_url: "${mock.baseUrl('anthropic')}", api_key: k, models: [claude]}
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}
`,
  });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

const tools = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
const followUp = (model: string, id: string) => ({
  model,
  tools,
  messages: [
    { role: 'user', content: 'weather in Oslo?' },
    { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
    { role: 'tool', tool_call_id: id, content: '12 C, rain' },
  ],
});

describe('reasoning cache', () => {
  it('keeps the thinking of a tool-calling answer and hands it back to the same provider on the next turn', async () => {
    mock.enqueue({ reasoning: 'The user wants weather: call the tool.', toolCalls: [{ id: 'toolu_01', name: 'weather', arguments: { city: 'Oslo' } }] }, 'anthropic');
    const first = await gw.req('POST', '/v1/chat/completions', { model: 'an/claude', tools, messages: [{ role: 'user', content: 'weather in Oslo?' }] });
    expect(first.status, first.text).toBe(200);
    expect(first.json.choices[0].message.tool_calls[0].id).toBe('toolu_01');

    const list = await gw.req('GET', '/api/cache/reasoning');
    expect(list.json.total).toBe(1);
    expect(list.json.entries[0]).toMatchObject({ toolCallId: 'toolu_01', provider: 'an', model: 'claude', hasSignature: true, reasoningPreview: 'The user wants weather: call the tool.' });

    mock.reset();
    expect((await gw.req('POST', '/v1/chat/completions', followUp('an/claude', 'toolu_01'))).status).toBe(200);
    const sent = mock.requests[0]!.body as { messages: { role: string; content: { type: string; signature?: string; thinking?: string }[] }[] };
    const assistant = sent.messages.find((m) => m.role === 'assistant')!;
    expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: 'The user wants weather: call the tool.', signature: 'sig-mock' });
    expect(assistant.content[1]).toMatchObject({ type: 'tool_use', id: 'toolu_01' });
    expect((await gw.req('GET', '/api/cache/reasoning?toolCallId=toolu_01')).json.entries[0].hits).toBe(1);

    // Another provider never gets it.
    mock.reset();
    expect((await gw.req('POST', '/v1/chat/completions', followUp('oa/m1', 'toolu_01'))).status).toBe(200);
    expect(JSON.stringify(mock.requests[0]!.body)).not.toContain('The user wants weather');
  });

  it('a streamed answer is kept too; DELETE by tool call id, by provider, or everything', async () => {
    mock.enqueue({ reasoning: 'Streaming thoughts.', toolCalls: [{ id: 'toolu_02', name: 'weather', arguments: { city: 'Bergen' } }] }, 'anthropic');
    const s = await gw.req('POST', '/v1/chat/completions', { model: 'an/claude', stream: true, tools, messages: [{ role: 'user', content: 'weather in Bergen?' }] });
    expect(s.status).toBe(200);
    expect(s.text).toContain('toolu_02');
    const e = (await gw.req('GET', '/api/cache/reasoning?provider=an')).json;
    expect(e.entries.map((x: { toolCallId: string }) => x.toolCallId)).toEqual(['toolu_02', 'toolu_01']);
    expect(e.entries[0]).toMatchObject({ hasSignature: true, reasoningChars: 'Streaming thoughts.'.length });
    expect(e.stats).toMatchObject({ entries: 2, stored: 2, restored: 1 });

    expect((await gw.req('DELETE', '/api/cache/reasoning?toolCallId=toolu_01')).json).toEqual({ deleted: 1 });
    expect((await gw.req('DELETE', '/api/cache/reasoning?provider=oa')).json).toEqual({ deleted: 0 });
    expect((await gw.req('DELETE', '/api/cache/reasoning')).json).toEqual({ deleted: 1 });
    expect((await gw.req('GET', '/api/cache/reasoning')).json.total).toBe(0);
  });

  it('answers without tool calls are not kept', async () => {
    mock.enqueue({ reasoning: 'Just thinking.', text: 'Hello' }, 'anthropic');
    expect((await gw.req('POST', '/v1/chat/completions', { model: 'an/claude', tools, messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    expect((await gw.req('GET', '/api/cache/reasoning')).json.total).toBe(0);
  });
});
