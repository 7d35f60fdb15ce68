/** The official `ollama` package against the gateway's /api/chat (and /v1/api/chat), for every upstream provider kind. */
import { Ollama } from 'ollama';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GW_KEY, lastUpstreamBody, MODELS, PNG, startSdkFixture, UPSTREAM_KINDS, WEATHER_SCHEMA, type SdkFixture } from './sdk-fixture.js';

let fx: SdkFixture;
let client: Ollama;

beforeAll(async () => {
  fx = await startSdkFixture();
  client = new Ollama({ host: fx.gw.tcpUrl, headers: { Authorization: `Bearer ${GW_KEY}` } });
});
afterAll(async () => {
  await fx.close();
});
beforeEach(() => fx.mock.reset());

const messages = [
  { role: 'system', content: 'SYSTEM-PROMPT' },
  { role: 'user', content: 'What is this?', images: [PNG] },
];
const tools = [{ type: 'function', function: { name: 'get_weather', description: 'weather', parameters: WEATHER_SCHEMA } }];

describe.each(UPSTREAM_KINDS)('ollama client → %s upstream', (kind) => {
  const model = MODELS[kind];

  it('chat, non-streaming (the client default), with system prompt and image', async () => {
    const res = await client.chat({ model, messages });
    expect(res.message.content).toBe(`Hello from ${kind}`);
    expect(res.done).toBe(true);
    expect(res.done_reason).toBe('stop');
    expect(res.prompt_eval_count).toBe(11);
    expect(res.eval_count).toBe(7);
    const sent = lastUpstreamBody(fx.mock, kind);
    expect(sent).toContain('SYSTEM-PROMPT');
    expect(sent).toContain(PNG);
  });

  it('chat, streaming NDJSON with a single final done', async () => {
    fx.mock.enqueue({ text: 'ndjson all the way', usage: { input: 3, output: 4 } });
    const stream = await client.chat({ model, messages, stream: true });
    let text = '';
    let dones = 0;
    let last: { eval_count?: number; prompt_eval_count?: number } = {};
    for await (const part of stream) {
      text += part.message.content;
      if (part.done) {
        dones++;
        last = part;
      }
    }
    expect(text).toBe('ndjson all the way');
    expect(dones).toBe(1);
    expect(last).toMatchObject({ prompt_eval_count: 3, eval_count: 4 });
  });

  it('tool calls come back with parsed arguments, streaming and not', async () => {
    const calls = [{ name: 'get_weather', arguments: { city: 'Paris' } }];
    fx.mock.enqueue({ toolCalls: calls });
    const res = await client.chat({ model, messages, tools });
    expect(res.message.tool_calls?.map((c) => [c.function.name, c.function.arguments])).toEqual([['get_weather', { city: 'Paris' }]]);

    fx.mock.enqueue({ toolCalls: calls });
    const stream = await client.chat({ model, messages, tools, stream: true });
    const got: [string, unknown][] = [];
    for await (const part of stream) for (const c of part.message.tool_calls ?? []) got.push([c.function.name, c.function.arguments]);
    expect(got).toEqual([['get_weather', { city: 'Paris' }]]);
  });

  it('a tool-result turn reaches the upstream', async () => {
    await client.chat({
      model,
      tools,
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
        { role: 'tool', content: 'TOOL-RESULT-SUNNY', tool_name: 'get_weather' },
      ],
    });
    expect(lastUpstreamBody(fx.mock, kind)).toContain('TOOL-RESULT-SUNNY');
  });
});

describe('ollama client extras', () => {
  it('lists models from /api/tags on the same host', async () => {
    const list = await client.list();
    expect(list.models.map((m) => m.name)).toEqual(expect.arrayContaining(Object.values(MODELS)));
  });

  it('works with a /v1 host too', async () => {
    const v1 = new Ollama({ host: `${fx.gw.tcpUrl}/v1`, headers: { Authorization: `Bearer ${GW_KEY}` } });
    const res = await v1.chat({ model: MODELS.openai, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.message.content).toBe('Hello from openai');
  });

  it('a stream cut off mid-way surfaces as an error line', async () => {
    fx.mock.enqueue({ text: 'abcdefghijkl', stream: 'truncated' }, 'openai');
    const stream = await client.chat({ model: MODELS.openai, messages: [{ role: 'user', content: 'x' }], stream: true });
    let text = '';
    const e = await (async () => {
      for await (const p of stream) text += p.message.content;
    })().catch((x: unknown) => x);
    expect(text).toBe('abcd');
    expect(e).toBeInstanceOf(Error);
  });

  it('errors carry the gateway message', async () => {
    const e = await client.chat({ model: 'nope/nothing', messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Error);
    expect((e as { status_code?: number }).status_code).toBeGreaterThanOrEqual(400);
  });
});
