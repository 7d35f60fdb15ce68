import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/http/errors.js';
import type { CanonicalChunk, CanonicalResponse } from '../../src/gateway/canonical.js';
import { countTokens, createStreamEncoder, parseRequest, renderError, renderModelList, renderResponse } from '../../src/gateway/translate/index.js';

function bad(fn: () => unknown): HttpError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(HttpError);
    expect((e as HttpError).status).toBe(400);
    return e as HttpError;
  }
  throw new Error('expected a 400');
}

const response: CanonicalResponse = {
  id: 'x1',
  model: 'up-model',
  created: 1700000000,
  content: [{ type: 'text', text: 'Hello' }],
  toolCalls: [{ id: 'call_1', name: 'f', arguments: '{"a":1}' }],
  reasoning: 'hmm',
  stopReason: 'tool_calls',
  usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 4, reasoningTokens: 2 },
};

const streamChunks: CanonicalChunk[] = [
  { type: 'start', id: 'up', model: 'up' },
  { type: 'reasoning', text: 'think' },
  { type: 'text', text: 'Hel' },
  { type: 'text', text: 'lo' },
  { type: 'tool_call', index: 0, id: 'call_a', name: 'f', argumentsDelta: '{"a"' },
  { type: 'tool_call', index: 0, argumentsDelta: ':1}' },
  { type: 'tool_call', index: 1, id: 'call_b', name: 'g' },
  { type: 'finish', stopReason: 'tool_calls' },
  { type: 'usage', usage: { inputTokens: 10, outputTokens: 5 } },
];

function sseObjects(frames: string[]): { event?: string; data: unknown }[] {
  return frames.map((f) => {
    const ev = /^event: (.*)$/m.exec(f)?.[1];
    const data = /^data: (.*)$/m.exec(f)![1]!;
    return { event: ev, data: data === '[DONE]' ? '[DONE]' : JSON.parse(data) };
  });
}

describe('OpenAI chat completions', () => {
  it('parses system, images, tools, tool turns, options', () => {
    const r = parseRequest('openai', {
      model: 'p/m',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'developer', content: [{ type: 'text', text: 'dev' }] },
        { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/AA', detail: 'low' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'res' },
      ],
      tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' } } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      max_completion_tokens: 20,
      temperature: 0.5,
      stop: 'X',
      stream: true,
      stream_options: { include_usage: true },
      reasoning_effort: 'low',
      logit_bias: { '5': 1 },
    });
    expect(r.system).toBe('sys\n\ndev');
    expect(r.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', source: { type: 'base64', mediaType: 'image/jpeg', data: '/9j/AA' }, detail: 'low' }] });
    expect(r.messages[1]).toEqual({ role: 'assistant', content: [], toolCalls: [{ id: 'c1', name: 'f', arguments: '{}' }] });
    expect(r.messages[2]).toMatchObject({ role: 'tool', toolCallId: 'c1', name: 'f' });
    expect(r.tools).toEqual([{ name: 'f', description: 'd', parameters: { type: 'object' } }]);
    expect(r.toolChoice).toEqual({ name: 'f' });
    expect(r).toMatchObject({ maxTokens: 20, temperature: 0.5, stop: ['X'], stream: true, includeUsage: true, thinking: { enabled: true, effort: 'low' }, extra: { logit_bias: { '5': 1 } } });
  });

  it('stream absent means not streaming', () => {
    expect(parseRequest('openai', { model: 'm', messages: [{ role: 'user', content: 'x' }] }).stream).toBe(false);
  });

  it('rejects bad bodies with a 400 naming the field', () => {
    expect(bad(() => parseRequest('openai', 'nope')).message).toMatch(/JSON object/);
    expect(bad(() => parseRequest('openai', { messages: [] })).message).toMatch(/model/);
    expect(bad(() => parseRequest('openai', { model: 'm', messages: [] })).message).toMatch(/messages/);
    expect(bad(() => parseRequest('openai', { model: 'm', messages: [{ role: 'wizard', content: 'x' }] })).message).toMatch(/role/);
    expect(bad(() => parseRequest('openai', { model: 'm', messages: [{ role: 'user', content: 5 }] })).message).toMatch(/content/);
    expect(bad(() => parseRequest('openai', { model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: 'hot' })).message).toMatch(/temperature/);
    expect(bad(() => parseRequest('openai', { model: 'm', messages: [{ role: 'user', content: 'x' }], n: 2 })).message).toMatch(/n/);
    expect(bad(() => parseRequest('openai', { model: 'm', messages: [{ role: 'tool', content: 'x' }] })).message).toMatch(/tool_call_id/);
    expect(bad(() => parseRequest('openai', { model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'bad name!' } }] })).message).toMatch(/name/);
  });

  it('renders a chat.completion', () => {
    const out = renderResponse('openai', response, { model: 'client-model' }) as Record<string, any>;
    expect(out.object).toBe('chat.completion');
    expect(out.model).toBe('client-model');
    expect(out.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hello', reasoning_content: 'hmm', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] });
    expect(out.choices[0].finish_reason).toBe('tool_calls');
    expect(out.usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 2 } });
  });

  it('streams chunks, tool calls by index, usage last only when asked, then [DONE]', () => {
    const enc = createStreamEncoder('openai', { model: 'cm', id: 'chatcmpl-1', includeUsage: true });
    const frames = [...streamChunks.flatMap((c) => enc.chunk(c)), ...enc.end(), ...enc.end()];
    const objs = sseObjects(frames);
    expect(objs[objs.length - 1]!.data).toBe('[DONE]');
    const usage = objs[objs.length - 2]!.data as Record<string, any>;
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 5 });
    const deltas = objs.slice(0, -2).map((o) => (o.data as any).choices[0]);
    expect(deltas[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(deltas.map((d) => d.delta.content ?? '').join('')).toBe('Hello');
    const calls = deltas.flatMap((d) => d.delta.tool_calls ?? []);
    expect(calls[0]).toEqual({ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '{"a"' } });
    expect(calls[1]).toEqual({ index: 0, function: { arguments: ':1}' } });
    expect(calls[2]).toMatchObject({ index: 1, id: 'call_b', function: { name: 'g', arguments: '' } });
    expect(deltas[deltas.length - 1].finish_reason).toBe('tool_calls');
    // Without include_usage: no usage chunk.
    const enc2 = createStreamEncoder('openai', { model: 'cm' });
    const f2 = [...streamChunks.flatMap((c) => enc2.chunk(c)), ...enc2.end()];
    expect(sseObjects(f2).some((o) => o.data !== '[DONE]' && (o.data as any).usage)).toBe(false);
  });

  it('renders errors', () => {
    expect(renderError('openai', new HttpError(429, 'slow', { headers: { 'Retry-After': '3' } }))).toEqual({
      status: 429,
      body: { error: { message: 'slow', type: 'rate_limit_error', param: null, code: null } },
      headers: { 'Retry-After': '3' },
    });
  });
});

describe('Anthropic messages', () => {
  it('parses system blocks, tool_use/tool_result, images, thinking, tool_choice any', () => {
    const r = parseRequest('anthropic', {
      model: 'claude',
      max_tokens: 100,
      system: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }],
      messages: [
        { role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA' } }, { type: 'text', text: 'q' }] },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }, { type: 'tool_use', id: 'tu1', name: 'f', input: { x: 1 } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu1', content: 'ok', is_error: true }, { type: 'text', text: 'next' }] },
      ],
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      thinking: { type: 'enabled', budget_tokens: 2000 },
      stop_sequences: ['Z'],
      metadata: { user_id: 'u1' },
    });
    expect(r.system).toBe('a\n\nb');
    expect(r.messages).toEqual([
      { role: 'user', content: [{ type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'AA' } }, { type: 'text', text: 'q' }] },
      { role: 'assistant', content: [], reasoning: 't', reasoningSignature: 's', toolCalls: [{ id: 'tu1', name: 'f', arguments: '{"x":1}' }] },
      { role: 'tool', toolCallId: 'tu1', name: 'f', isError: true, content: [{ type: 'text', text: 'ok' }] },
      { role: 'user', content: [{ type: 'text', text: 'next' }] },
    ]);
    expect(r).toMatchObject({ maxTokens: 100, toolChoice: 'required', parallelToolCalls: false, thinking: { enabled: true, budgetTokens: 2000 }, stop: ['Z'], user: 'u1' });
  });

  it('rejects bad bodies', () => {
    expect(bad(() => parseRequest('anthropic', { model: 'm', messages: [{ role: 'system', content: 'x' }] })).message).toMatch(/role/);
    expect(bad(() => parseRequest('anthropic', { model: 'm', messages: [{ role: 'user', content: [{ type: 'video' }] }] })).message).toMatch(/video/);
    expect(bad(() => parseRequest('anthropic', { model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'f' }] })).message).toMatch(/input_schema/);
    expect(bad(() => parseRequest('anthropic', { model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'web_search_20250305', name: 'web_search' }] })).message).toMatch(/not supported/);
  });

  it('renders a message with usage excluding cache reads', () => {
    const out = renderResponse('anthropic', response) as Record<string, any>;
    expect(out).toMatchObject({ type: 'message', role: 'assistant', model: 'up-model', stop_reason: 'tool_use', stop_sequence: null });
    expect(out.content).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: '' },
      { type: 'text', text: 'Hello' },
      { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } },
    ]);
    expect(out.usage).toEqual({ input_tokens: 6, output_tokens: 5, cache_read_input_tokens: 4, cache_creation_input_tokens: 0 });
  });

  it('streams the event family; message_delta carries usage that arrived after finish', () => {
    const enc = createStreamEncoder('anthropic', { model: 'cm', id: 'msg_1', estimatedInputTokens: 3 });
    const frames = [...streamChunks.flatMap((c) => enc.chunk(c)), ...enc.end()];
    const evs = sseObjects(frames);
    const types = evs.map((e) => e.event);
    expect(types).toEqual([
      'message_start',
      'ping',
      'content_block_start', // thinking
      'content_block_delta',
      'content_block_stop',
      'content_block_start', // text
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start', // tool a
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start', // tool b
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect((evs[0]!.data as any).message.usage.input_tokens).toBe(3);
    const toolStart = evs[9]!.data as any;
    expect(toolStart.content_block).toEqual({ type: 'tool_use', id: 'call_a', name: 'f', input: {} });
    expect(evs.filter((e) => (e.data as any).delta?.type === 'input_json_delta').map((e) => (e.data as any).delta.partial_json).join('')).toBe('{"a":1}');
    const md = evs[15]!.data as any;
    expect(md.delta).toEqual({ stop_reason: 'tool_use', stop_sequence: null });
    expect(md.usage).toMatchObject({ input_tokens: 10, output_tokens: 5 });
    // block indexes increase by one per block
    expect(evs.filter((e) => e.event === 'content_block_start').map((e) => (e.data as any).index)).toEqual([0, 1, 2, 3]);
  });

  it('renders errors in its shape', () => {
    expect(renderError('anthropic', new HttpError(400, 'bad')).body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'bad' } });
    expect(renderError('anthropic', new HttpError(503, 'busy')).body).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } });
  });
});

describe('Gemini generateContent', () => {
  it('parses contents, function calls/responses, systemInstruction, generationConfig; model and stream from URL', () => {
    const r = parseRequest(
      'gemini',
      {
        systemInstruction: { parts: [{ text: 'sys' }] },
        contents: [
          { role: 'user', parts: [{ text: 'q' }, { inlineData: { mimeType: 'image/png', data: 'AA' } }] },
          { role: 'model', parts: [{ functionCall: { name: 'f', args: { x: 1 } } }, { functionCall: { name: 'g', args: {} } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'g', response: { result: 'G' } } }, { functionResponse: { name: 'f', response: { v: 2 } } }] },
        ],
        tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'OBJECT', properties: { x: { type: 'INTEGER' } } } }] }],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } },
        generationConfig: { temperature: 0.1, maxOutputTokens: 64, stopSequences: ['S'], responseMimeType: 'application/json', thinkingConfig: { thinkingBudget: 0 } },
      },
      { model: 'gemini-2.5-flash', stream: true },
    );
    expect(r.model).toBe('gemini-2.5-flash');
    expect(r.stream).toBe(true);
    expect(r.system).toBe('sys');
    const a = r.messages[1] as any;
    expect(a.toolCalls.map((c: any) => c.name)).toEqual(['f', 'g']);
    const [, , t1, t2] = r.messages as any[];
    expect(t1).toMatchObject({ role: 'tool', name: 'g', toolCallId: a.toolCalls[1].id, content: [{ type: 'text', text: 'G' }] });
    expect(t2).toMatchObject({ role: 'tool', name: 'f', toolCallId: a.toolCalls[0].id, content: [{ type: 'text', text: '{"v":2}' }] });
    expect(r.tools![0]!.parameters).toEqual({ type: 'object', properties: { x: { type: 'integer' } } });
    expect(r).toMatchObject({ toolChoice: { name: 'f' }, temperature: 0.1, maxTokens: 64, stop: ['S'], responseFormat: { type: 'json_object' }, thinking: { enabled: false } });
  });

  it('rejects bad bodies', () => {
    expect(bad(() => parseRequest('gemini', { contents: [] }, { model: 'm' })).message).toMatch(/contents/);
    expect(bad(() => parseRequest('gemini', { contents: [{ role: 'user', parts: [{}] }] }, { model: 'm' })).message).toMatch(/parts\/0/);
    expect(bad(() => parseRequest('gemini', { contents: [{ parts: [{ text: 'x' }] }], tools: [{ googleSearch: {} }] }, { model: 'm' })).message).toMatch(/googleSearch/);
  });

  it('renders GenerateContentResponse with usage split into candidates and thoughts', () => {
    const out = renderResponse('gemini', response) as Record<string, any>;
    expect(out.candidates[0].content.parts).toEqual([{ text: 'hmm', thought: true }, { text: 'Hello' }, { functionCall: { id: 'call_1', name: 'f', args: { a: 1 } } }]);
    expect(out.candidates[0].finishReason).toBe('STOP');
    expect(out.usageMetadata).toEqual({ promptTokenCount: 10, candidatesTokenCount: 3, totalTokenCount: 15, cachedContentTokenCount: 4, thoughtsTokenCount: 2 });
  });

  it('streams full responses, function calls and usage in the last event, no [DONE]', () => {
    const enc = createStreamEncoder('gemini', { model: 'gm' });
    const frames = [...streamChunks.flatMap((c) => enc.chunk(c)), ...enc.end()];
    expect(frames.join('')).not.toContain('[DONE]');
    const objs = sseObjects(frames).map((o) => o.data as any);
    expect(objs.map((o) => o.candidates[0].content.parts.map((p: any) => p.text ?? '').join('')).join('')).toBe('thinkHello');
    const last = objs[objs.length - 1];
    expect(last.candidates[0].finishReason).toBe('STOP');
    expect(last.candidates[0].content.parts).toEqual([{ functionCall: { id: 'call_a', name: 'f', args: { a: 1 } } }, { functionCall: { id: 'call_b', name: 'g', args: {} } }]);
    expect(last.usageMetadata).toMatchObject({ promptTokenCount: 10, candidatesTokenCount: 5 });
  });

  it('round-trips thought signatures (Gemini 3 rejects function-call turns without them)', async () => {
    const out = renderResponse('gemini', { ...response, reasoningSignature: 'SIG' }) as Record<string, any>;
    expect(out.candidates[0].content.parts[2]).toMatchObject({ functionCall: { name: 'f' }, thoughtSignature: 'SIG' });
    const r = parseRequest(
      'gemini',
      {
        contents: [
          { role: 'user', parts: [{ text: 'q' }] },
          { role: 'model', parts: [{ functionCall: { name: 'f', args: {} }, thoughtSignature: 'SIG' }] },
          { role: 'user', parts: [{ functionResponse: { name: 'f', response: { ok: 1 } } }] },
        ],
      },
      { model: 'm' },
    );
    expect((r.messages[1] as any).reasoningSignature).toBe('SIG');
    const { encodeGeminiRequest } = await import('../../src/gateway/providers/gemini.js');
    const { Egress } = await import('../../src/egress/index.js');
    const egress = new Egress({ loopbackOnly: true });
    const up = (await encodeGeminiRequest(r, { egress })) as any;
    expect(up.contents[1].parts[0]).toEqual({ functionCall: { name: 'f', args: {} }, thoughtSignature: 'SIG' });
    await egress.close();
  });

  it('renders errors in its shape', () => {
    expect(renderError('gemini', new HttpError(404, 'no model')).body).toEqual({ error: { code: 404, message: 'no model', status: 'NOT_FOUND' } });
  });
});

describe('Ollama chat', () => {
  it('parses messages, images, tool calls and options; stream absent means not streaming', () => {
    const r = parseRequest('ollama', {
      model: 'llama3',
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: 'q', images: ['iVBORw0KGgo'] },
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'f', arguments: { x: 1 } } }] },
        { role: 'tool', content: 'r', tool_name: 'f' },
      ],
      options: { temperature: 0.3, num_predict: 12, stop: ['x'] },
      format: 'json',
      think: false,
    });
    expect(r.stream).toBe(false);
    expect(r.system).toBe('s');
    expect(r.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'q' }, { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo' } }] });
    const a = r.messages[1] as any;
    expect(a.toolCalls[0]).toMatchObject({ name: 'f', arguments: '{"x":1}' });
    expect(r.messages[2]).toMatchObject({ role: 'tool', toolCallId: a.toolCalls[0].id, name: 'f' });
    expect(r).toMatchObject({ temperature: 0.3, maxTokens: 12, stop: ['x'], responseFormat: { type: 'json_object' }, thinking: { enabled: false } });
    expect(parseRequest('ollama', { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true }).stream).toBe(true);
  });

  it('rejects a tool result with no call', () => {
    expect(bad(() => parseRequest('ollama', { model: 'm', messages: [{ role: 'tool', content: 'x' }] })).message).toMatch(/tool/);
  });

  it('renders one answer with content, counts and done_reason', () => {
    const out = renderResponse('ollama', response) as Record<string, any>;
    expect(out).toMatchObject({ done: true, done_reason: 'stop', prompt_eval_count: 10, eval_count: 5, message: { role: 'assistant', content: 'Hello', thinking: 'hmm' } });
    expect(out.message.tool_calls).toEqual([{ id: 'call_1', function: { name: 'f', arguments: { a: 1 } } }]);
  });

  it('streams NDJSON with exactly one done:true', () => {
    const enc = createStreamEncoder('ollama', { model: 'om' });
    const frames = [...streamChunks.flatMap((c) => enc.chunk(c)), ...enc.end(), ...enc.end()];
    const lines = frames.map((f) => JSON.parse(f));
    expect(frames.every((f) => f.endsWith('\n'))).toBe(true);
    expect(lines.filter((l) => l.done === true)).toHaveLength(1);
    expect(lines.map((l) => l.message.content).join('')).toBe('Hello');
    const calls = lines.find((l) => l.message.tool_calls)!.message.tool_calls;
    expect(calls).toEqual([{ id: 'call_a', function: { name: 'f', arguments: { a: 1 } } }, { id: 'call_b', function: { name: 'g', arguments: {} } }]);
    expect(lines[lines.length - 1]).toMatchObject({ done: true, prompt_eval_count: 10, eval_count: 5, done_reason: 'stop' });
  });

  it('renders errors as {error}', () => {
    expect(renderError('ollama', new HttpError(400, 'bad')).body).toEqual({ error: 'bad' });
  });
});

describe('OpenAI responses', () => {
  it('parses input items: messages, function calls and outputs, reasoning; instructions become system', () => {
    const r = parseRequest('openai-responses', {
      model: 'm',
      instructions: 'be nice',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'q' }, { type: 'input_image', image_url: 'https://example.com/i.png' }] },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'because' }], encrypted_content: 'enc' },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"x":1}' },
        { type: 'function_call_output', call_id: 'c1', output: 'done' },
      ],
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }],
      tool_choice: { type: 'function', name: 'f' },
      max_output_tokens: 30,
      reasoning: { effort: 'high' },
      text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object' } } },
    });
    expect(r.system).toBe('be nice');
    expect(r.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'q' }, { type: 'image', source: { type: 'url', url: 'https://example.com/i.png' } }] });
    expect(r.messages[1]).toEqual({ role: 'assistant', content: [], reasoning: 'because', reasoningSignature: 'enc', toolCalls: [{ id: 'c1', name: 'f', arguments: '{"x":1}' }] });
    expect(r.messages[2]).toMatchObject({ role: 'tool', toolCallId: 'c1', content: [{ type: 'text', text: 'done' }] });
    expect(r).toMatchObject({ toolChoice: { name: 'f' }, maxTokens: 30, thinking: { enabled: true, effort: 'high' }, responseFormat: { type: 'json_schema', name: 'x' } });
    expect(parseRequest('openai-responses', { model: 'm', input: 'hi' }).messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  });

  it('refuses previous_response_id and unsupported tools', () => {
    expect(bad(() => parseRequest('openai-responses', { model: 'm', input: 'x', previous_response_id: 'resp_1' })).message).toMatch(/previous_response_id/);
    expect(bad(() => parseRequest('openai-responses', { model: 'm', input: 'x', tools: [{ type: 'web_search' }] })).message).toMatch(/web_search/);
    expect(bad(() => parseRequest('openai-responses', { model: 'm' })).message).toMatch(/input/);
  });

  it('renders a response with output items and usage', () => {
    const out = renderResponse('openai-responses', response) as Record<string, any>;
    expect(out.object).toBe('response');
    expect(out.status).toBe('completed');
    expect(out.output.map((o: any) => o.type)).toEqual(['reasoning', 'message', 'function_call']);
    expect(out.output[1].content[0]).toMatchObject({ type: 'output_text', text: 'Hello' });
    expect(out.output[2]).toMatchObject({ call_id: 'call_1', name: 'f', arguments: '{"a":1}', status: 'completed' });
    expect(out.usage).toEqual({ input_tokens: 10, input_tokens_details: { cached_tokens: 4 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 2 }, total_tokens: 15 });
    expect(out.output_text).toBe('Hello');
  });

  it('streams response.* events ending in response.completed with usage', () => {
    const enc = createStreamEncoder('openai-responses', { model: 'rm', id: 'resp_1' });
    const frames = [...streamChunks.flatMap((c) => enc.chunk(c)), ...enc.end()];
    const evs = sseObjects(frames);
    expect(evs.every((e) => e.event === (e.data as any).type)).toBe(true);
    const seqs = evs.map((e) => (e.data as any).sequence_number);
    expect(seqs).toEqual(seqs.map((_, i) => i));
    expect(evs[0]!.event).toBe('response.created');
    const last = evs[evs.length - 1]!.data as any;
    expect(last.type).toBe('response.completed');
    expect(last.response.output.map((o: any) => o.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    expect(last.response.output[2]).toMatchObject({ call_id: 'call_a', arguments: '{"a":1}' });
    expect(last.response.output[3]).toMatchObject({ call_id: 'call_b', arguments: '{}' });
    expect(last.response.usage).toMatchObject({ input_tokens: 10, output_tokens: 5 });
    expect(evs.filter((e) => e.event === 'response.output_text.delta').map((e) => (e.data as any).delta).join('')).toBe('Hello');
  });
});

describe('mid-stream errors and model lists', () => {
  it('each format can report an error after the stream started', () => {
    expect(createStreamEncoder('openai', { model: 'm' }).error('boom', 500)[0]).toContain('"message":"boom"');
    expect(createStreamEncoder('anthropic', { model: 'm' }).error('boom', 529)[0]).toContain('event: error');
    expect(createStreamEncoder('gemini', { model: 'm' }).error('boom', 503)[0]).toContain('UNAVAILABLE');
    expect(createStreamEncoder('ollama', { model: 'm' }).error('boom')[0]).toBe('{"error":"boom"}\n');
    expect(createStreamEncoder('openai-responses', { model: 'm' }).error('boom').join('')).toContain('response.failed');
  });

  it('renders model lists per format', () => {
    const models = [{ id: 'p/m1', ownedBy: 'p' }, { id: 'p/e1', type: 'embedding' as const }];
    expect(renderModelList('openai', models)).toMatchObject({ object: 'list', data: [{ id: 'p/m1', object: 'model', owned_by: 'p' }, { id: 'p/e1', type: 'embedding' }] });
    expect((renderModelList('gemini', models) as any).models[0]).toMatchObject({ name: 'models/p/m1', supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'] });
    expect((renderModelList('ollama', models) as any).models[0]).toMatchObject({ name: 'p/m1', model: 'p/m1' });
    expect((renderModelList('anthropic', models) as any).data[0]).toMatchObject({ type: 'model', id: 'p/m1' });
  });

  it('counts tokens', async () => {
    const n = await countTokens(parseRequest('anthropic', { model: 'm', system: 'You are helpful.', messages: [{ role: 'user', content: 'Hello, world!' }] }));
    expect(n).toBeGreaterThan(5);
    expect(n).toBeLessThan(40);
  });
});
