/**
 * Every client wire format against every provider kind, streaming and not, through the real provider
 * code and the mock upstreams: system prompt and image reach the upstream, text, tool calls, stop reason
 * and usage come back in the client's format.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Egress } from '../../src/egress/index.js';
import type { ClientFormat, ProviderKind } from '../../src/gateway/canonical.js';
import { callUpstream } from '../../src/gateway/providers/index.js';
import { createStreamEncoder, parseRequest, renderResponse } from '../../src/gateway/translate/index.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';

const FORMATS: ClientFormat[] = ['openai', 'openai-responses', 'anthropic', 'gemini', 'ollama'];
const KINDS: ProviderKind[] = ['openai', 'anthropic', 'gemini', 'ollama'];
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

function clientBody(format: ClientFormat, stream: boolean): { body: unknown; opts: { model?: string; stream?: boolean } } {
  switch (format) {
    case 'openai':
      return {
        body: {
          model: 'm1',
          stream,
          stream_options: stream ? { include_usage: true } : undefined,
          messages: [
            { role: 'system', content: 'SYSTEM-PROMPT' },
            { role: 'user', content: [{ type: 'text', text: 'weather?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
          ],
          tools: [{ type: 'function', function: { name: 'get_weather', parameters: SCHEMA } }],
        },
        opts: {},
      };
    case 'openai-responses':
      return {
        body: {
          model: 'm1',
          stream,
          instructions: 'SYSTEM-PROMPT',
          input: [{ role: 'user', content: [{ type: 'input_text', text: 'weather?' }, { type: 'input_image', image_url: `data:image/png;base64,${PNG}` }] }],
          tools: [{ type: 'function', name: 'get_weather', parameters: SCHEMA }],
        },
        opts: {},
      };
    case 'anthropic':
      return {
        body: {
          model: 'm1',
          max_tokens: 100,
          stream,
          system: 'SYSTEM-PROMPT',
          messages: [{ role: 'user', content: [{ type: 'text', text: 'weather?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] }],
          tools: [{ name: 'get_weather', input_schema: SCHEMA }],
        },
        opts: {},
      };
    case 'gemini':
      return {
        body: {
          systemInstruction: { parts: [{ text: 'SYSTEM-PROMPT' }] },
          contents: [{ role: 'user', parts: [{ text: 'weather?' }, { inlineData: { mimeType: 'image/png', data: PNG } }] }],
          tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: SCHEMA }] }],
        },
        opts: { model: 'm1', stream },
      };
    case 'ollama':
      return {
        body: {
          model: 'm1',
          stream,
          messages: [
            { role: 'system', content: 'SYSTEM-PROMPT' },
            { role: 'user', content: 'weather?', images: [PNG] },
          ],
          tools: [{ type: 'function', function: { name: 'get_weather', parameters: SCHEMA } }],
        },
        opts: {},
      };
  }
}

interface Extracted {
  text: string;
  calls: [string, unknown][];
  stop: unknown;
  input: number;
  output: number;
}

function frameData(frames: string[]): { event?: string; data: any }[] {
  return frames.map((f) => {
    const ev = /^event: (.*)$/m.exec(f)?.[1];
    const data = /^data: (.*)$/m.exec(f)?.[1] ?? f.trim();
    return { event: ev, data: data === '[DONE]' ? '[DONE]' : JSON.parse(data) };
  });
}

function extractJson(format: ClientFormat, b: any): Extracted {
  switch (format) {
    case 'openai': {
      const m = b.choices[0].message;
      return { text: m.content ?? '', calls: (m.tool_calls ?? []).map((c: any) => [c.function.name, JSON.parse(c.function.arguments)]), stop: b.choices[0].finish_reason, input: b.usage.prompt_tokens, output: b.usage.completion_tokens };
    }
    case 'openai-responses':
      return {
        text: b.output.filter((o: any) => o.type === 'message').map((o: any) => o.content.map((c: any) => c.text).join('')).join(''),
        calls: b.output.filter((o: any) => o.type === 'function_call').map((o: any) => [o.name, JSON.parse(o.arguments)]),
        stop: b.status,
        input: b.usage.input_tokens,
        output: b.usage.output_tokens,
      };
    case 'anthropic':
      return {
        text: b.content.filter((c: any) => c.type === 'text').map((c: any) => c.text).join(''),
        calls: b.content.filter((c: any) => c.type === 'tool_use').map((c: any) => [c.name, c.input]),
        stop: b.stop_reason,
        input: b.usage.input_tokens + b.usage.cache_read_input_tokens,
        output: b.usage.output_tokens,
      };
    case 'gemini': {
      const parts = b.candidates[0].content.parts;
      return {
        text: parts.filter((p: any) => typeof p.text === 'string' && !p.thought).map((p: any) => p.text).join(''),
        calls: parts.filter((p: any) => p.functionCall).map((p: any) => [p.functionCall.name, p.functionCall.args]),
        stop: b.candidates[0].finishReason,
        input: b.usageMetadata.promptTokenCount,
        output: b.usageMetadata.candidatesTokenCount,
      };
    }
    case 'ollama':
      return { text: b.message.content, calls: (b.message.tool_calls ?? []).map((c: any) => [c.function.name, c.function.arguments]), stop: b.done_reason, input: b.prompt_eval_count, output: b.eval_count };
  }
}

function extractStream(format: ClientFormat, frames: string[]): Extracted {
  const evs = frameData(frames);
  switch (format) {
    case 'openai': {
      const chunks = evs.filter((e) => e.data !== '[DONE]').map((e) => e.data);
      const calls = new Map<number, { name: string; args: string }>();
      let text = '';
      let stop: unknown;
      for (const c of chunks) {
        const ch = c.choices[0];
        if (!ch) continue;
        text += ch.delta.content ?? '';
        for (const t of ch.delta.tool_calls ?? []) {
          const cur = calls.get(t.index) ?? { name: '', args: '' };
          if (t.function?.name) cur.name = t.function.name;
          cur.args += t.function?.arguments ?? '';
          calls.set(t.index, cur);
        }
        if (ch.finish_reason) stop = ch.finish_reason;
      }
      expect(evs[evs.length - 1]!.data).toBe('[DONE]');
      const usage = chunks[chunks.length - 1].usage;
      return { text, calls: [...calls.values()].map((c) => [c.name, JSON.parse(c.args)]), stop, input: usage.prompt_tokens, output: usage.completion_tokens };
    }
    case 'openai-responses': {
      const done = evs[evs.length - 1]!.data;
      expect(done.type).toBe('response.completed');
      const text = evs.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta).join('');
      const x = extractJson('openai-responses', done.response);
      return { ...x, text };
    }
    case 'anthropic': {
      let text = '';
      const calls: { name: string; args: string }[] = [];
      let input = 0;
      let output = 0;
      let stop: unknown;
      for (const e of evs) {
        const d = e.data;
        if (e.event === 'message_start') input = d.message.usage.input_tokens + d.message.usage.cache_read_input_tokens;
        if (e.event === 'content_block_start' && d.content_block.type === 'tool_use') calls.push({ name: d.content_block.name, args: '' });
        if (e.event === 'content_block_delta' && d.delta.type === 'text_delta') text += d.delta.text;
        if (e.event === 'content_block_delta' && d.delta.type === 'input_json_delta') calls[calls.length - 1]!.args += d.delta.partial_json;
        if (e.event === 'message_delta') {
          stop = d.delta.stop_reason;
          output = d.usage.output_tokens;
          if (d.usage.input_tokens !== undefined) input = d.usage.input_tokens + (d.usage.cache_read_input_tokens ?? 0);
        }
      }
      expect(evs[evs.length - 1]!.event).toBe('message_stop');
      return { text, calls: calls.map((c) => [c.name, JSON.parse(c.args || '{}')]), stop, input, output };
    }
    case 'gemini': {
      const objs = evs.map((e) => e.data);
      const parts = objs.flatMap((o) => o.candidates[0].content.parts);
      const last = objs[objs.length - 1];
      return {
        text: parts.filter((p: any) => typeof p.text === 'string' && !p.thought).map((p: any) => p.text).join(''),
        calls: parts.filter((p: any) => p.functionCall).map((p: any) => [p.functionCall.name, p.functionCall.args]),
        stop: last.candidates[0].finishReason,
        input: last.usageMetadata.promptTokenCount,
        output: last.usageMetadata.candidatesTokenCount,
      };
    }
    case 'ollama': {
      const lines = evs.map((e) => e.data);
      const last = lines[lines.length - 1];
      expect(lines.filter((l) => l.done).length).toBe(1);
      return {
        text: lines.map((l) => l.message.content).join(''),
        calls: lines.flatMap((l) => l.message.tool_calls ?? []).map((c: any) => [c.function.name, c.function.arguments]),
        stop: last.done_reason,
        input: last.prompt_eval_count,
        output: last.eval_count,
      };
    }
  }
}

const TOOL_STOP: Record<ClientFormat, unknown> = { openai: 'tool_calls', 'openai-responses': 'completed', anthropic: 'tool_use', gemini: 'STOP', ollama: 'stop' };

let mock: MockUpstream;
const egress = new Egress({ loopbackOnly: true });
beforeAll(async () => {
  mock = await startLlmUpstream();
});
afterAll(async () => {
  await mock.close();
  await egress.close();
});

describe.each(FORMATS)('client %s', (format) => {
  describe.each(KINDS)('→ provider %s', (kind) => {
    it.each([false, true])('stream=%s: system, image, text, tool call, stop, usage', async (stream) => {
      mock.reset();
      mock.enqueue({ text: 'Sunny day in Paris', toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }], usage: { input: 12, output: 8 } });
      const { body, opts } = clientBody(format, stream);
      const req = parseRequest(format, body, opts);
      expect(req.stream).toBe(stream);
      const result = await callUpstream({ id: kind, kind, baseUrl: mock.baseUrl(kind) }, { id: 'a' }, req, { egress });
      const sent = JSON.stringify(mock.requests[0]!.body);
      expect(sent).toContain('SYSTEM-PROMPT');
      expect(sent).toContain(PNG);
      expect(sent).toContain('get_weather');
      let got: Extracted;
      if (result.stream) {
        const enc = createStreamEncoder(format, { model: 'client/m1', includeUsage: true });
        const frames: string[] = [];
        for await (const c of result.chunks) frames.push(...enc.chunk(c));
        frames.push(...enc.end());
        got = extractStream(format, frames);
      } else {
        got = extractJson(format, renderResponse(format, result.response, { model: 'client/m1' }));
      }
      expect(got.text).toBe('Sunny day in Paris');
      expect(got.calls).toEqual([['get_weather', { city: 'Paris' }]]);
      expect(got.stop).toBe(TOOL_STOP[format]);
      expect(got.input).toBe(12);
      // Gemini reports candidates without thoughts: same here (no reasoning in this scenario).
      expect(got.output).toBe(8);
    });
  });
});
