/** The official `@anthropic-ai/sdk` package (maxRetries 0) against the gateway, for every upstream provider kind. */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GW_KEY, lastUpstreamBody, MODELS, PNG, startSdkFixture, UPSTREAM_KINDS, WEATHER_SCHEMA, type SdkFixture } from './sdk-fixture.js';

let fx: SdkFixture;
let client: Anthropic;

beforeAll(async () => {
  fx = await startSdkFixture();
  // The SDK appends /v1/messages itself: the base URL has no /v1.
  client = new Anthropic({ baseURL: fx.gw.tcpUrl, apiKey: GW_KEY, maxRetries: 0 });
});
afterAll(async () => {
  await fx.close();
});
beforeEach(() => fx.mock.reset());

const tools: Anthropic.Tool[] = [{ name: 'get_weather', input_schema: WEATHER_SCHEMA as Anthropic.Tool.InputSchema }];
const messages: Anthropic.MessageParam[] = [
  { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }, { type: 'text', text: 'What is this?' }] },
];

describe.each(UPSTREAM_KINDS)('anthropic SDK → %s upstream', (kind) => {
  const model = MODELS[kind];

  it('messages.create, non-streaming, with system prompt and image', async () => {
    const res = await client.messages.create({ model, max_tokens: 100, system: 'SYSTEM-PROMPT', messages });
    expect(res.type).toBe('message');
    expect(res.content).toEqual([{ type: 'text', text: `Hello from ${kind}` }]);
    expect(res.stop_reason).toBe('end_turn');
    expect(res.usage.input_tokens + (res.usage.cache_read_input_tokens ?? 0)).toBe(11);
    expect(res.usage.output_tokens).toBe(7);
    const sent = lastUpstreamBody(fx.mock, kind);
    expect(sent).toContain('SYSTEM-PROMPT');
    expect(sent).toContain(PNG);
  });

  it('messages.stream: text deltas and usage in message_delta', async () => {
    fx.mock.enqueue({ text: 'a streamed answer', usage: { input: 13, output: 5 } });
    const stream = client.messages.stream({ model, max_tokens: 100, system: 'SYSTEM-PROMPT', messages });
    let text = '';
    stream.on('text', (t) => (text += t));
    const final = await stream.finalMessage();
    expect(text).toBe('a streamed answer');
    expect(final.content).toEqual([{ type: 'text', text: 'a streamed answer', citations: null }].map((b) => expect.objectContaining({ type: b.type, text: b.text })));
    expect(final.stop_reason).toBe('end_turn');
    // Usage the upstream sent after its finish event arrives in message_delta (OpenAI sends usage last).
    expect(final.usage.output_tokens).toBe(5);
    expect(final.usage.input_tokens + (final.usage.cache_read_input_tokens ?? 0)).toBe(13);
  });

  it('tool_use, non-streaming and streamed (input_json_delta by block)', async () => {
    const calls = [
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_weather', arguments: { city: 'Lima' } },
    ];
    fx.mock.enqueue({ toolCalls: calls });
    const res = await client.messages.create({ model, max_tokens: 100, messages, tools });
    expect(res.stop_reason).toBe('tool_use');
    const uses = res.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    expect(uses.map((u) => [u.name, u.input])).toEqual(calls.map((c) => [c.name, c.arguments]));
    expect(uses.every((u) => /^[a-zA-Z0-9_-]+$/.test(u.id))).toBe(true);

    fx.mock.enqueue({ toolCalls: calls });
    const final = await client.messages.stream({ model, max_tokens: 100, messages, tools, tool_choice: { type: 'any' } }).finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    const su = final.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    expect(su.map((u) => [u.name, u.input])).toEqual(calls.map((c) => [c.name, c.arguments]));
  });

  it('a tool_result turn reaches the upstream', async () => {
    await client.messages.create({
      model,
      max_tokens: 50,
      tools,
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'TOOL-RESULT-SUNNY' }] },
      ],
    });
    expect(lastUpstreamBody(fx.mock, kind)).toContain('TOOL-RESULT-SUNNY');
  });
});

describe('anthropic SDK errors and extras', () => {
  it('a bad body is a BadRequestError with the Anthropic error shape', async () => {
    const e = await client.messages.create({ model: MODELS.anthropic, max_tokens: 10, messages: [] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Anthropic.BadRequestError);
    const err = e as InstanceType<typeof Anthropic.BadRequestError>;
    expect((err.error as { type: string; error: { type: string } }).type).toBe('error');
    expect((err.error as { error: { type: string } }).error.type).toBe('invalid_request_error');
  });

  it('an upstream overload reaches the client as an APIError (no SDK retries)', async () => {
    fx.mock.enqueue({ status: 529 }, 'anthropic');
    const e = await client.messages.create({ model: MODELS.anthropic, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Anthropic.APIError);
    // The gateway decides the status (cool-down may turn it into 429); the SDK sees an API error, not a crash.
    expect((e as InstanceType<typeof Anthropic.APIError>).status).toBeGreaterThanOrEqual(429);
  });

  it('a wrong key is an AuthenticationError', async () => {
    const bad = new Anthropic({ baseURL: fx.gw.tcpUrl, apiKey: 'sk-wrong', maxRetries: 0 });
    const e = await bad.messages.create({ model: MODELS.anthropic, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it('a stream cut off mid-way surfaces as an error event', async () => {
    fx.mock.enqueue({ text: 'abcdefghijkl', stream: 'truncated' }, 'openai');
    const e = await client.messages.stream({ model: MODELS.openai, max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }).finalMessage().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(Error);
  });

  it('counts tokens', async () => {
    const r = await client.messages.countTokens({ model: MODELS.anthropic, system: 'You are terse.', messages: [{ role: 'user', content: 'Hello there, how are you?' }] });
    expect(r.input_tokens).toBeGreaterThan(5);
  });

  it('lists models', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toEqual(expect.arrayContaining(Object.values(MODELS)));
  });
});
