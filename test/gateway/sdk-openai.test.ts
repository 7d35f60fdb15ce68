/** The official `openai` package (maxRetries 0) against the gateway, for every upstream provider kind. */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GW_KEY, lastUpstreamBody, MODELS, PNG, startSdkFixture, UPSTREAM_KINDS, WEATHER_SCHEMA, type SdkFixture } from './sdk-fixture.js';

let fx: SdkFixture;
let client: OpenAI;

beforeAll(async () => {
  fx = await startSdkFixture();
  client = new OpenAI({ baseURL: `${fx.gw.tcpUrl}/v1`, apiKey: GW_KEY, maxRetries: 0 });
});
afterAll(async () => {
  await fx.close();
});
beforeEach(() => fx.mock.reset());

const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER_SCHEMA } }];
const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'SYSTEM-PROMPT' },
  { role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
];

describe.each(UPSTREAM_KINDS)('openai SDK → %s upstream', (kind) => {
  const model = MODELS[kind];

  it('chat.completions.create, non-streaming, with system prompt and image', async () => {
    const res = await client.chat.completions.create({ model, messages });
    expect(res.object).toBe('chat.completion');
    expect(res.choices[0]!.message.content).toBe(`Hello from ${kind}`);
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    const sent = lastUpstreamBody(fx.mock, kind);
    expect(sent).toContain('SYSTEM-PROMPT');
    expect(sent).toContain(PNG);
  });

  it('streaming with include_usage', async () => {
    fx.mock.enqueue({ text: 'streamed words here', usage: { input: 9, output: 3 } });
    const stream = await client.chat.completions.create({ model, messages, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('streamed words here');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 3 });
  });

  it('tool calls, non-streaming and through the stream helper', async () => {
    const calls = [
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: { city: 'Oslo' } },
    ];
    fx.mock.enqueue({ toolCalls: calls });
    const res = await client.chat.completions.create({ model, messages, tools });
    expect(res.choices[0]!.finish_reason).toBe('tool_calls');
    expect(res.choices[0]!.message.tool_calls!.map((c) => (c.type === 'function' ? [c.function.name, JSON.parse(c.function.arguments)] : null))).toEqual(
      calls.map((c) => [c.name, c.arguments]),
    );

    fx.mock.enqueue({ toolCalls: calls });
    const runner = client.chat.completions.stream({ model, messages, tools, stream_options: { include_usage: true } });
    const final = await runner.finalChatCompletion();
    const tc = final.choices[0]!.message.tool_calls!;
    expect(tc.map((c) => (c.type === 'function' ? [c.function.name, JSON.parse(c.function.arguments)] : null))).toEqual(calls.map((c) => [c.name, c.arguments]));
    expect(new Set(tc.map((c) => c.id)).size).toBe(2);
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('a tool-result round trip reaches the upstream', async () => {
    await client.chat.completions.create({
      model,
      tools,
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'TOOL-RESULT-SUNNY' },
      ],
    });
    const sent = lastUpstreamBody(fx.mock, kind);
    expect(sent).toContain('TOOL-RESULT-SUNNY');
    expect(sent).toContain('Paris');
  });

  it('responses.create and responses.stream', async () => {
    const res = await client.responses.create({ model, instructions: 'SYSTEM-PROMPT', input: 'hello' });
    expect(res.output_text).toBe(`Hello from ${kind}`);
    expect(res.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
    expect(lastUpstreamBody(fx.mock, kind)).toContain('SYSTEM-PROMPT');

    fx.mock.enqueue({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Rome' } }] });
    const stream = client.responses.stream({ model, input: 'weather?', tools: [{ type: 'function', name: 'get_weather', parameters: WEATHER_SCHEMA, strict: false }] });
    const final = await stream.finalResponse();
    const fc = final.output.find((o) => o.type === 'function_call');
    expect(fc).toMatchObject({ name: 'get_weather', arguments: '{"city":"Rome"}' });
    expect(final.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
  });
});

describe('openai SDK errors', () => {
  it('a bad body is a BadRequestError in the OpenAI shape', async () => {
    const e = await client.chat.completions.create({ model: MODELS.openai, messages: [] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.BadRequestError);
    expect((e as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/messages/);
  });

  it('an upstream 429 reaches the client as RateLimitError (no SDK retries)', async () => {
    fx.mock.enqueue({ status: 429, retryAfter: '30' }, 'openai');
    const e = await client.chat.completions.create({ model: MODELS.openai, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
  });

  it('a wrong key is an AuthenticationError', async () => {
    const bad = new OpenAI({ baseURL: `${fx.gw.tcpUrl}/v1`, apiKey: 'sk-wrong', maxRetries: 0 });
    const e = await bad.chat.completions.create({ model: MODELS.openai, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('a stream cut off mid-way surfaces as an error, not a silent success', async () => {
    // (the openai provider is cooling down after the 429 test above, so use another upstream)
    fx.mock.enqueue({ text: 'abcdefghijkl', stream: 'truncated' }, 'ollama');
    const stream = await client.chat.completions.create({ model: MODELS.ollama, messages: [{ role: 'user', content: 'x' }], stream: true });
    let text = '';
    const e = await (async () => {
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    })().catch((x: unknown) => x);
    expect(text).toBe('abcd');
    expect(e).toBeInstanceOf(OpenAI.APIError);
  });

  it('lists models', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toEqual(expect.arrayContaining(Object.values(MODELS)));
  });
});
