import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Egress } from '../../src/egress/index.js';
import type { CanonicalChunk, CanonicalRequest, ProviderKind } from '../../src/gateway/canonical.js';
import {
  callEmbeddings,
  callUpstream,
  listUpstreamModels,
  modelCapabilities,
  listsNoThinkingVariant,
  UpstreamError,
  type ProviderConnection,
  type UpstreamResult,
} from '../../src/gateway/providers/index.js';
import { retryAfterFromHeaders } from '../../src/gateway/providers/errors.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';

const KINDS: ProviderKind[] = ['openai', 'anthropic', 'gemini', 'ollama'];
let mock: MockUpstream;
const egress = new Egress({ loopbackOnly: true });

beforeAll(async () => {
  mock = await startLlmUpstream({ apiKey: 'sk-test' });
});
afterAll(async () => {
  await mock.close();
  await egress.close();
});
beforeEach(() => mock.reset());

function conn(kind: ProviderKind, extra: Partial<ProviderConnection> = {}): ProviderConnection {
  return { id: `p-${kind}`, kind, baseUrl: mock.baseUrl(kind), ...extra };
}
const account = { id: 'a1', apiKey: 'sk-test' };

function req(extra: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return { model: 'm1', system: 'be brief', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], stream: false, ...extra };
}

async function collect(r: UpstreamResult): Promise<CanonicalChunk[]> {
  if (!r.stream) throw new Error('expected a stream');
  const out: CanonicalChunk[] = [];
  for await (const c of r.chunks) out.push(c);
  return out;
}

function textOfChunks(chunks: CanonicalChunk[]): string {
  return chunks.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

describe.each(KINDS)('provider %s', (kind) => {
  it('non-streaming text with usage and auth header', async () => {
    const r = await callUpstream(conn(kind), account, req(), { egress });
    expect(r.stream).toBe(false);
    if (r.stream) return;
    expect(r.response.content).toEqual([{ type: 'text', text: `Hello from ${kind}` }]);
    expect(r.response.stopReason).toBe('stop');
    expect(r.response.usage.inputTokens).toBe(11);
    expect(r.response.usage.outputTokens).toBe(7);
    const sent = mock.requests[0]!;
    const body = sent.body as Record<string, unknown>;
    // system prompt reached the upstream in its own shape
    expect(JSON.stringify(body)).toContain('be brief');
    if (kind === 'ollama') expect(body.stream).toBe(false);
  });

  it('streaming text, usage and finish', async () => {
    mock.enqueue({ text: 'one two three four', usage: { input: 5, output: 4 } });
    const r = await callUpstream(conn(kind), account, req({ stream: true }), { egress });
    const chunks = await collect(r);
    expect(textOfChunks(chunks)).toBe('one two three four');
    expect(chunks[chunks.length - 1]).toEqual({ type: 'finish', stopReason: 'stop' });
    if (!r.stream) return;
    const o = await r.outcome;
    expect(o.error).toBeUndefined();
    expect(o.usage).toMatchObject({ inputTokens: 5, outputTokens: 4 });
    expect(o.stopReason).toBe('stop');
    if (kind === 'openai') expect((mock.requests[0]!.body as Record<string, unknown>).stream_options).toEqual({ include_usage: true });
  });

  it('tool calls, non-streaming and streaming', async () => {
    const calls = [
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_time', arguments: { tz: 'UTC' } },
    ];
    mock.enqueue({ toolCalls: calls });
    const tools = [{ name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, { name: 'get_time', parameters: { type: 'object' } }];
    const r = await callUpstream(conn(kind), account, req({ tools }), { egress });
    if (r.stream) throw new Error('unexpected stream');
    expect(r.response.stopReason).toBe('tool_calls');
    expect(r.response.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual(calls.map((c) => [c.name, c.arguments]));
    expect(r.response.toolCalls.every((c) => c.id !== '')).toBe(true);

    mock.enqueue({ toolCalls: calls });
    const s = await callUpstream(conn(kind), account, req({ tools, stream: true }), { egress });
    const chunks = await collect(s);
    const byIndex = new Map<number, { name?: string; id?: string; args: string }>();
    for (const c of chunks) {
      if (c.type !== 'tool_call') continue;
      const cur = byIndex.get(c.index) ?? { args: '' };
      if (c.name) cur.name = c.name;
      if (c.id) cur.id = c.id;
      cur.args += c.argumentsDelta ?? '';
      byIndex.set(c.index, cur);
    }
    expect([...byIndex.values()].map((v) => [v.name, JSON.parse(v.args)])).toEqual(calls.map((c) => [c.name, c.arguments]));
    expect([...byIndex.values()].every((v) => v.id)).toBe(true);
    expect(chunks[chunks.length - 1]).toMatchObject({ type: 'finish', stopReason: 'tool_calls' });
  });

  it('reasoning comes back as reasoning', async () => {
    mock.enqueue({ reasoning: 'thinking hard', text: 'answer' });
    const r = await callUpstream(conn(kind), account, req(), { egress });
    if (r.stream) throw new Error('unexpected stream');
    expect(r.response.reasoning).toBe('thinking hard');
    mock.enqueue({ reasoning: 'thinking hard', text: 'answer' });
    const chunks = await collect(await callUpstream(conn(kind), account, req({ stream: true }), { egress }));
    expect(chunks.filter((c) => c.type === 'reasoning').map((c) => (c as { text: string }).text).join('')).toBe('thinking hard');
  });

  it('429 keeps status and Retry-After', async () => {
    mock.enqueue({ status: 429, retryAfter: '7', errorMessage: 'slow down' });
    const err = await callUpstream(conn(kind), account, req(), { egress }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    const e = err as UpstreamError;
    expect(e.kind).toBe('http');
    expect(e.status).toBe(429);
    expect(e.retryAfterMs).toBe(7000);
    expect(e.upstreamMessage).toBe('slow down');
  });

  it('500 on a stream request is an http error before any chunk', async () => {
    mock.enqueue({ status: 503 });
    const e = (await callUpstream(conn(kind), account, req({ stream: true }), { egress }).catch((x: unknown) => x)) as UpstreamError;
    expect(e.kind).toBe('http');
    expect(e.status).toBe(503);
  });

  it('wrong key is a 401', async () => {
    const e = (await callUpstream(conn(kind), { id: 'x', apiKey: 'nope' }, req(), { egress }).catch((x: unknown) => x)) as UpstreamError;
    expect(e.status).toBe(401);
  });

  it('empty 200 stream fails before anything reaches the client', async () => {
    mock.enqueue({ stream: 'empty' });
    const e = (await callUpstream(conn(kind), account, req({ stream: true }), { egress }).catch((x: unknown) => x)) as UpstreamError;
    expect(e).toBeInstanceOf(UpstreamError);
    expect(e.kind).toBe('empty-stream');
    expect(e.status).toBe(502);
  });

  it('garbage stream fails', async () => {
    mock.enqueue({ stream: 'garbage' });
    const e = (await callUpstream(conn(kind), account, req({ stream: true }), { egress }).catch((x: unknown) => x)) as UpstreamError;
    expect(e.kind).toBe('garbage');
  });

  it('garbage non-stream body fails', async () => {
    mock.enqueue({ rawBody: '<html>oops</html>' });
    const e = (await callUpstream(conn(kind), account, req(), { egress }).catch((x: unknown) => x)) as UpstreamError;
    expect(e.kind).toBe('garbage');
  });

  it('empty non-stream answer fails', async () => {
    mock.enqueue({ text: '' });
    const e = (await callUpstream(conn(kind), account, req(), { egress }).catch((x: unknown) => x)) as UpstreamError;
    expect(e.kind).toBe('empty-response');
  });

  it('truncated stream: content first, then an UpstreamError and an outcome with the error', async () => {
    mock.enqueue({ stream: 'truncated', text: 'abcdefghijkl' });
    const r = await callUpstream(conn(kind), account, req({ stream: true }), { egress });
    if (!r.stream) throw new Error('expected stream');
    const seen: CanonicalChunk[] = [];
    const e = await (async () => {
      for await (const c of r.chunks) seen.push(c);
    })().catch((x: unknown) => x);
    expect(textOfChunks(seen)).toBe('abcd');
    expect((e as UpstreamError).kind).toBe('truncated');
    const o = await r.outcome;
    expect(o.error?.kind).toBe('truncated');
    expect(o.producedContent).toBe(true);
  });

  it('error event mid-stream surfaces as an http error', async () => {
    mock.enqueue({ stream: 'error-event', text: 'abcdefghijkl' });
    const r = await callUpstream(conn(kind), account, req({ stream: true }), { egress });
    const e = await collect(r).catch((x: unknown) => x);
    expect((e as UpstreamError).kind).toBe('http');
  });

  it('abort mid-stream aborts the upstream and keeps the usage known so far', async () => {
    mock.enqueue({ text: 'x'.repeat(30), chunkDelayMs: 200 });
    const ac = new AbortController();
    const r = await callUpstream(conn(kind), account, req({ stream: true }), { egress, signal: ac.signal });
    if (!r.stream) throw new Error('expected stream');
    const it = r.chunks[Symbol.asyncIterator]();
    await it.next();
    ac.abort();
    const e = await (async () => {
      for (;;) {
        const n = await it.next();
        if (n.done) break;
      }
    })().catch((x: unknown) => x);
    expect((e as UpstreamError).kind).toBe('aborted');
    const o = await r.outcome;
    expect(o.error?.kind).toBe('aborted');
    await expect.poll(() => mock.aborted, { timeout: 2000 }).toBeGreaterThan(0);
  });

  it('a hanging upstream times out', async () => {
    mock.enqueue({ hang: true });
    const e = (await callUpstream(conn(kind, { timeoutMs: 200 }), account, req(), { egress }).catch((x: unknown) => x)) as UpstreamError;
    expect(e.kind).toBe('timeout');
    expect(e.status).toBe(504);
  });

  it('a stream that never says anything useful hits the readiness timeout', async () => {
    mock.enqueue({ text: 'late', chunkDelayMs: 1000, reasoning: undefined });
    const e = (await callUpstream(conn(kind, { readinessTimeoutMs: 100 }), account, req({ stream: true }), { egress }).catch((x: unknown) => x)) as UpstreamError;
    // OpenAI and Anthropic streams open with events that carry no content; Gemini/Ollama start with content.
    if (kind === 'openai' || kind === 'anthropic') expect(e.kind).toBe('timeout');
  });

  it('connection refused is a connection error', async () => {
    const e = (await callUpstream({ ...conn(kind), baseUrl: 'http://127.0.0.1:1/x' }, account, req(), { egress }).catch((x: unknown) => x)) as UpstreamError;
    expect(e.kind).toBe('connection');
  });

  it('egress refuses non-loopback destinations', async () => {
    const e = (await callUpstream({ ...conn(kind), baseUrl: 'http://192.0.2.1:9/x' }, account, req(), { egress }).catch((x: unknown) => x)) as UpstreamError;
    expect(e.kind).toBe('connection');
    expect(e.message).toMatch(/egress refused/);
  });

  it('lists upstream models', async () => {
    const models = await listUpstreamModels(conn(kind), account, { egress });
    expect(models.map((m) => m.id)).toEqual(['m1', 'm2']);
  });
});

describe('usage when the upstream reports none', () => {
  it('is estimated instead of zero, streaming and not', async () => {
    mock.enqueue({ noUsage: true, text: 'abcdefghijkl' });
    const r = await callUpstream(conn('openai'), account, req(), { egress });
    if (r.stream) throw new Error('unexpected stream');
    expect(r.response.usage.outputTokens).toBe(3);
    expect(r.response.usage.inputTokens).toBeGreaterThan(0);
    mock.enqueue({ noUsage: true, text: 'abcdefghijkl' });
    const s = await callUpstream(conn('openai'), account, req({ stream: true }), { egress });
    const chunks = await collect(s);
    expect(chunks[chunks.length - 1]).toMatchObject({ type: 'usage', usage: { outputTokens: 3 } });
    if (!s.stream) return;
    expect((await s.outcome).usage.outputTokens).toBe(3);
  });
});

describe('request encoding details', () => {
  it('openai: images, tool turns, thinking off drops reasoning fields', async () => {
    const r: CanonicalRequest = req({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'AAAA' } }] },
        { role: 'assistant', content: [], toolCalls: [{ id: 'c1', name: 'f', arguments: '{"a":1}' }] },
        { role: 'tool', toolCallId: 'c1', content: [{ type: 'text', text: 'done' }] },
      ],
      thinking: { enabled: false },
      extra: { reasoning_effort: 'high', logit_bias: { '1': 2 } },
      sourceFormat: 'openai',
    });
    await callUpstream(conn('openai'), account, r, { egress });
    const body = mock.requests[0]!.body as Record<string, unknown>;
    expect(body.reasoning_effort).toBeUndefined();
    expect(body.logit_bias).toEqual({ '1': 2 });
    const msgs = body.messages as Record<string, unknown>[];
    expect(msgs[0]).toEqual({ role: 'system', content: 'be brief' });
    expect(msgs[1]!.content).toEqual([{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }]);
    expect(msgs[2]).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] });
    expect(msgs[3]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'done' });
  });

  it('anthropic: system, alternation, tool_result blocks, thinking disabled, auth headers', async () => {
    const r = req({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'a' }] },
        { role: 'user', content: [{ type: 'text', text: 'b' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'calling' }], toolCalls: [{ id: 'c1', name: 'f', arguments: '{"x":1}' }] },
        { role: 'tool', toolCallId: 'c1', content: [{ type: 'text', text: 'r' }] },
      ],
      thinking: { enabled: false },
      toolChoice: 'required',
      tools: [{ name: 'f', parameters: { type: 'object' } }],
    });
    await callUpstream(conn('anthropic'), account, r, { egress });
    const sent = mock.requests[0]!;
    expect(sent.headers['x-api-key']).toBe('sk-test');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    const body = sent.body as Record<string, unknown>;
    expect(body.system).toBe('be brief');
    expect(body.max_tokens).toBeGreaterThan(0);
    expect(body.thinking).toEqual({ type: 'disabled' });
    expect(body.tool_choice).toEqual({ type: 'any' });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'calling' }, { type: 'tool_use', id: 'c1', name: 'f', input: { x: 1 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'text', text: 'r' }] }] },
    ]);
  });

  it('anthropic: thinking budget raises max_tokens and drops temperature', async () => {
    await callUpstream(conn('anthropic'), account, req({ thinking: { enabled: true, budgetTokens: 5000 }, maxTokens: 1000, temperature: 0.3 }), { egress });
    const body = mock.requests[0]!.body as Record<string, unknown>;
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 5000 });
    expect(body.max_tokens).toBe(6000);
    expect(body.temperature).toBeUndefined();
  });

  it('gemini: systemInstruction, functionResponse by name, thinking off, URL and key', async () => {
    const r = req({
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'q' }] },
        { role: 'assistant', content: [], toolCalls: [{ id: 'c1', name: 'f', arguments: '{"x":1}' }] },
        { role: 'tool', toolCallId: 'c1', name: 'f', content: [{ type: 'text', text: '{"ok":true}' }] },
      ],
      thinking: { enabled: false },
      maxTokens: 50,
      stop: ['END'],
    });
    await callUpstream(conn('gemini'), account, r, { egress });
    const sent = mock.requests[0]!;
    expect(sent.path).toBe('/gemini/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe('sk-test');
    const body = sent.body as Record<string, unknown>;
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'be brief' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'q' }] },
      { role: 'model', parts: [{ functionCall: { name: 'f', args: { x: 1 } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'f', response: { ok: true } } }] },
    ]);
    expect(body.generationConfig).toEqual({ maxOutputTokens: 50, stopSequences: ['END'], thinkingConfig: { thinkingBudget: 0 } });
    await callUpstream(conn('gemini'), account, req({ stream: true }), { egress }).then(collect);
    expect(mock.requests[1]!.path).toBe('/gemini/v1beta/models/m1:streamGenerateContent?alt=sse');
  });

  it('ollama: images inline, options, think false, tool results named', async () => {
    const r = req({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image', source: { type: 'base64', mediaType: 'image/png', data: 'iVBORw0' } }] },
        { role: 'assistant', content: [], toolCalls: [{ id: 'c1', name: 'f', arguments: '{"x":1}' }] },
        { role: 'tool', toolCallId: 'c1', name: 'f', content: [{ type: 'text', text: 'ok' }] },
      ],
      temperature: 0.2,
      maxTokens: 9,
      thinking: { enabled: false },
    });
    await callUpstream(conn('ollama'), account, r, { egress });
    const body = mock.requests[0]!.body as Record<string, unknown>;
    expect(mock.requests[0]!.headers.authorization).toBe('Bearer sk-test');
    expect(body.think).toBe(false);
    expect(body.options).toEqual({ temperature: 0.2, num_predict: 9 });
    expect(body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'see', images: ['iVBORw0'] },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'f', arguments: { x: 1 } } }] },
      { role: 'tool', content: 'ok', tool_name: 'f' },
    ]);
  });

  it('image URLs are fetched for providers that need inline data, under the media policy', async () => {
    const r = req({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'http://127.0.0.1:1/x.png' } }] }] });
    // http and loopback are refused by the SSRF policy: a clear 400 before any upstream call.
    const e = (await callUpstream(conn('gemini'), account, r, { egress }).catch((x: unknown) => x)) as { kind: string; message: string };
    expect(e.kind).toBe('invalid');
    expect(e.message).toMatch(/^media URL is not allowed or not reachable: (scheme http: is not https|private address 127\.0\.0\.1 is not in egress\.allow)/);
  });
});

describe('embeddings', () => {
  it('openai: strings, tokens, dimensions', async () => {
    const r = await callEmbeddings(conn('openai'), account, { model: 'e1', input: { kind: 'strings', values: ['a', 'b'], single: false }, dimensions: 4 }, { egress });
    expect(r.vectors).toHaveLength(2);
    expect(r.vectors[0]).toHaveLength(4);
    expect(r.usage.inputTokens).toBe(6);
    const t = await callEmbeddings(conn('openai'), account, { model: 'e1', input: { kind: 'tokens', values: [[1, 2, 3]], single: true } }, { egress });
    expect(t.vectors).toHaveLength(1);
    expect((mock.requests[1]!.body as Record<string, unknown>).input).toEqual([1, 2, 3]);
  });

  it('openai: structured items become modality-keyed objects with data URIs', async () => {
    await callEmbeddings(
      conn('openai'),
      account,
      { model: 'e1', input: { kind: 'items', values: [{ type: 'text', text: 'hi' }, { type: 'image', source: { type: 'base64', data: 'AAAA', mediaType: 'image/png' } }] } },
      { egress },
    );
    expect((mock.requests[0]!.body as Record<string, unknown>).input).toEqual([{ text: 'hi' }, { image: 'data:image/png;base64,AAAA' }]);
  });

  it('gemini: batch for strings, one native request with parts for items', async () => {
    const r = await callEmbeddings(conn('gemini'), account, { model: 'text-embedding-004', input: { kind: 'strings', values: ['a', 'b', 'c'], single: false } }, { egress });
    expect(r.vectors).toHaveLength(3);
    expect(mock.requests[0]!.path).toContain(':batchEmbedContents');
    const i = await callEmbeddings(
      conn('gemini'),
      account,
      { model: 'mm', input: { kind: 'items', values: [{ type: 'text', text: 'hi' }, { type: 'image', source: { type: 'base64', data: 'AAAA', mediaType: 'image/png' } }] } },
      { egress },
    );
    expect(i.vectors).toHaveLength(1);
    expect(mock.requests[1]!.body).toEqual({ content: { parts: [{ text: 'hi' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] } });
  });

  it('ollama: /api/embed; anthropic has none', async () => {
    const r = await callEmbeddings(conn('ollama'), account, { model: 'nomic-embed-text', input: { kind: 'strings', values: ['a'], single: true } }, { egress });
    expect(r.vectors).toHaveLength(1);
    const e = (await callEmbeddings(conn('anthropic'), account, { model: 'x', input: { kind: 'strings', values: ['a'], single: true } }, { egress }).catch((x: unknown) => x)) as UpstreamError;
    expect(e.kind).toBe('unsupported');
    expect(e.status).toBe(400);
  });
});

describe('capabilities', () => {
  it('guesses per kind and lets the model spec win', () => {
    expect(modelCapabilities(conn('anthropic'), 'claude-sonnet-4-5')).toMatchObject({ thinking: true, thinkingDisable: true });
    expect(modelCapabilities(conn('gemini'), 'gemini-2.5-pro')).toMatchObject({ thinking: true, thinkingDisable: false });
    expect(modelCapabilities(conn('openai'), 'text-embedding-3-small')).toMatchObject({ chat: false, embeddings: true });
    expect(listsNoThinkingVariant(conn('anthropic'), 'claude-sonnet-4-5')).toBe(true);
    expect(listsNoThinkingVariant(conn('openai'), 'gpt-4o')).toBe(false);
    const c = conn('openai', { models: [{ id: 'm1', thinking: true, thinkingDisable: true }, { id: 'm2', noThinkingAlias: false, thinking: true, thinkingDisable: true }] });
    expect(listsNoThinkingVariant(c, 'm1')).toBe(true);
    expect(listsNoThinkingVariant(c, 'm2')).toBe(false);
  });
});

describe('retry-after parsing', () => {
  it('reads seconds, dates, ms and reset durations', () => {
    expect(retryAfterFromHeaders({ 'retry-after': '3' })).toBe(3000);
    expect(retryAfterFromHeaders({ 'retry-after-ms': '250' })).toBe(250);
    expect(retryAfterFromHeaders({ 'retry-after': new Date(10_000).toUTCString() }, 4_000)).toBe(6000);
    expect(retryAfterFromHeaders({ 'x-ratelimit-reset-requests': '6m0s' })).toBe(360_000);
    expect(retryAfterFromHeaders({ 'x-ratelimit-reset-tokens': '20ms' })).toBe(20);
    expect(retryAfterFromHeaders({})).toBeUndefined();
  });
});
