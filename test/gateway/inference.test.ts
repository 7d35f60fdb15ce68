import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';
import { Router } from '../../src/http/router.js';
import { VERSION_BY_HANDLER, versionPaths } from '../../src/gateway/telemetry.js';

let mock: MockUpstream;
let gw: GatewayHarness;

function yaml(m: MockUpstream): string {
  return `
providers:
  - {id: oa, kind: openai, base_url: "${m.baseUrl('openai')}", api_key: "sk-up", models: [m1, m2, {id: r1, thinking: true, thinking_disable: true}, {id: emb, type: embedding}]}
  - {id: oa2, kind: openai, base_url: "${m.baseUrl('openai')}", api_key: "sk-up2", models: [m1]}
  - {id: an, kind: anthropic, base_url: "${m.baseUrl('anthropic')}", api_key: "sk-ant", models: [claude-x]}
  - {id: ge, kind: gemini, base_url: "${m.baseUrl('gemini')}", api_key: "g-key", models: [gemini-x]}
  - {id: ol, kind: ollama, base_url: "${m.baseUrl('ollama')}", models: [llama-x]}
aliases: {fast: oa/m1}
combos:
  - {name: smart, strategy: priority, targets: [oa/m2, oa2/m1]}
  - {name: three, strategy: priority, targets: [oa/m1, an/claude-x, ge/gemini-x]}
keys:
  - {name: ci, key: "sk-gw-ci-key-000000", models: ["*"]}
  - {name: narrow, key: "sk-gw-narrow-00000", models: ["oa/*"]}
pricing:
  oa/m1: {input: 1.5, output: 2}
settings: {retry_wait_max_ms: 300, rate_limit_cooldown_ms: 5000}
`;
}

beforeAll(async () => {
  mock = await startLlmUpstream();
});
afterAll(async () => {
  await mock.close();
});
beforeEach(async () => {
  mock.reset();
  gw = await startGateway({ yaml: yaml(mock), env: { REQUIRE_API_KEY: 'true' } });
});
afterEach(async () => {
  await gw.close();
});

const KEY = { authorization: 'Bearer sk-gw-ci-key-000000' };
const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hi' }], ...extra });

/** Concatenated delta content of an OpenAI SSE body. */
function sseText(body: string): string {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)))
    .map((c) => c.choices?.[0]?.delta?.content ?? '')
    .join('');
}

async function requestLogs(): Promise<any[]> {
  return (await gw.req('GET', '/api/usage/request-logs?limit=100')).json.items;
}

describe('chat completions', () => {
  it('answers non-streaming with the telemetry headers and records usage and cost', async () => {
    const r = await gw.req('POST', '/v1/chat/completions', chat('fast'), KEY, { tcp: true });
    expect(r.status).toBe(200);
    expect(r.json.choices[0].message.content).toBe('Hello from openai');
    expect(r.json.model).toBe('oa/m1');
    expect(r.headers['x-gateway-version']).toBe('0.1.0-test');
    expect(r.headers['x-gateway-decision']).toMatch(/^strategy=single; provider=oa; latency_ms=\d+$/);
    // 11 in × 1.5 + 7 out × 2 per 1M tokens
    expect(r.headers['x-gateway-response-cost']).toBe(((11 * 1.5 + 7 * 2) / 1e6).toFixed(10));
    expect(r.headers['x-gateway-tokens-in']).toBe('11');
    expect(r.headers['x-gateway-tokens-out']).toBe('7');
    expect(r.headers['x-gateway-model']).toBe('m1');
    expect(r.headers['x-gateway-provider']).toBe('oa');
    expect(r.headers['x-gateway-cache-hit']).toBe('false');
    expect(r.headers['x-gateway-request-id']).toBeTruthy();
    expect(r.headers['x-gateway-latency-ms']).toMatch(/^\d+$/);
    expect(r.headers['x-gateway-fallback-attempts']).toBeUndefined();
    const sent = mock.requests.at(-1)!;
    expect(sent.body).toMatchObject({ model: 'm1' });
    expect(sent.headers.authorization).toBe('Bearer sk-up');
    const logs = await requestLogs();
    expect(logs[0]).toMatchObject({ endpoint: 'chat', requestedModel: 'fast', provider: 'oa', model: 'm1', status: 200, tokensIn: 11, tokensOut: 7, apiKeyId: 'file:ci' });
    expect(logs[0].cost).toBeCloseTo((11 * 1.5 + 7 * 2) / 1e6, 12);
  });

  it('echoes the session id and never invents one', async () => {
    const r = await gw.req('POST', '/v1/chat/completions', chat('oa/m1'), { ...KEY, 'x-session-id': 'sess-42' }, { tcp: true });
    expect(r.headers['x-gateway-session-id']).toBe('sess-42');
    const r2 = await gw.req('POST', '/v1/chat/completions', chat('oa/m1'), KEY, { tcp: true });
    expect(r2.headers['x-gateway-session-id']).toBeUndefined();
  });

  it('streams SSE with decision headers, no cost headers, and records usage at the end', async () => {
    const r = await gw.req('POST', '/v1/chat/completions', chat('oa/m1', { stream: true, stream_options: { include_usage: true } }), KEY, { tcp: true });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/text\/event-stream/);
    expect(r.headers['x-gateway-decision']).toMatch(/strategy=single; provider=oa/);
    expect(r.headers['x-gateway-response-cost']).toBeUndefined();
    expect(r.text).toContain('data: [DONE]');
    expect(sseText(r.text)).toBe('Hello from openai');
    await new Promise((res) => setTimeout(res, 50));
    const logs = await requestLogs();
    expect(logs[0]).toMatchObject({ stream: true, status: 200, tokensIn: 11, tokensOut: 7 });
  });

  it('validates bodies with a 400 in the client format', async () => {
    const r = await gw.req('POST', '/v1/chat/completions', { model: 'oa/m1' }, KEY, { tcp: true });
    expect(r.status).toBe(400);
    expect(r.json.error.type).toBe('invalid_request_error');
    const a = await gw.req('POST', '/v1/messages', { model: 'oa/m1', max_tokens: 'x', messages: [] }, KEY, { tcp: true });
    expect(a.status).toBe(400);
    expect(a.json.type).toBe('error');
    const bad = await gw.req('POST', '/v1/chat/completions', '{nope', KEY, { tcp: true });
    expect(bad.status).toBe(400);
    const unknown = await gw.req('POST', '/v1/chat/completions', chat('nope/m1'), KEY, { tcp: true });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('model_not_found');
  });
});

/** A request over TCP with Node's client: the response headers in the order they were sent. */
function rawReq(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; raw: string[] }> {
  return new Promise((resolve, reject) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const r = request(gw.tcpUrl + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, raw: res.rawHeaders }));
    });
    r.on('error', reject);
    r.end(text);
  });
}

describe('X-Gateway-Version on completion answers', () => {
  it('comes first on every kind of answer: JSON, stream, errors, cache hits and replays', async () => {
    const cases: [string, string, unknown, Record<string, string>, number][] = [
      ['json', '/v1/chat/completions', chat('oa/m1'), KEY, 200],
      ['json, trailing slash', '/v1/chat/completions/', chat('oa/m1'), KEY, 200],
      ['anthropic json', '/v1/messages', { model: 'an/claude-x', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }, KEY, 200],
      ['stream', '/v1/chat/completions', chat('oa/m1', { stream: true }), KEY, 200],
      ['bad body', '/v1/chat/completions', '{nope', KEY, 400],
      ['no key', '/v1/chat/completions', chat('oa/m1'), {}, 401],
      ['unknown model', '/v1/chat/completions', chat('nope/m1'), KEY, 404],
      ['cache miss', '/v1/chat/completions', chat('oa/m1', { temperature: 0 }), KEY, 200],
      ['cache hit', '/v1/chat/completions', chat('oa/m1', { temperature: 0 }), KEY, 200],
      ['first of a key', '/v1/chat/completions', chat('oa/m2'), { ...KEY, 'Idempotency-Key': 'v-1' }, 200],
      ['replay', '/v1/chat/completions', chat('oa/m2'), { ...KEY, 'Idempotency-Key': 'v-1' }, 200],
      ['gemini', '/v1beta/models/ge/gemini-x:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, KEY, 200],
    ];
    for (const [what, path, body, headers, status] of cases) {
      const r = await rawReq(path, body, headers);
      expect([what, r.status]).toEqual([what, status]);
      expect([what, r.raw[0], r.raw[1]]).toEqual([what, 'X-Gateway-Version', '0.1.0-test']);
      expect([what, r.raw.filter((h) => h.toLowerCase() === 'x-gateway-version').length]).toEqual([what, 1]);
    }
    mock.enqueue({ status: 500, errorMessage: 'boom' });
    const failed = await rawReq('/v1/chat/completions', chat('oa/m1'), KEY);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(failed.raw.slice(0, 2)).toEqual(['X-Gateway-Version', '0.1.0-test']);
    expect(failed.raw).toContain('X-Gateway-Decision');
  });
});

describe('routes whose handler writes X-Gateway-Version', () => {
  it('are the completion routes with a fixed path, declared by their route tag', () => {
    expect([...versionPaths(gw.instance.router)].sort()).toEqual(['/api/chat', '/v1/api/chat', '/v1/chat/completions', '/v1/messages', '/v1/responses']);
  });

  it('must be POST routes with a fixed path', () => {
    const ok = new Router();
    ok.post('/a', () => undefined).tag(VERSION_BY_HANDLER);
    ok.post('/b', () => undefined);
    expect([...versionPaths(ok)]).toEqual(['/a']);
    const param = new Router();
    param.post('/x/:id', () => undefined).tag(VERSION_BY_HANDLER);
    expect(() => versionPaths(param)).toThrow(/fixed path/);
    const get = new Router();
    get.get('/y', () => undefined).tag(VERSION_BY_HANDLER);
    expect(() => versionPaths(get)).toThrow(/GET \/y/);
  });
});

describe('auth on inference routes', () => {
  it('requires a key when REQUIRE_API_KEY=true, in every accepted place', async () => {
    const none = await gw.req('POST', '/v1/chat/completions', chat('oa/m1'), {}, { tcp: true });
    expect(none.status).toBe(401);
    expect(none.json.error.code).toBe('missing_api_key');
    const wrong = await gw.req('POST', '/v1/chat/completions', chat('oa/m1'), { authorization: 'Bearer nope' }, { tcp: true });
    expect(wrong.status).toBe(401);
    expect((await gw.req('POST', '/v1/messages', { model: 'oa/m1', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }, { 'x-api-key': 'sk-gw-ci-key-000000' }, { tcp: true })).status).toBe(200);
    expect((await gw.req('POST', '/v1beta/models/oa/m1:generateContent', { contents: [{ role: 'user', parts: [{ text: 'x' }] }] }, { 'x-goog-api-key': 'sk-gw-ci-key-000000' }, { tcp: true })).status).toBe(200);
    for (const p of ['token', 'apiKey', 'api_key', 'key']) {
      expect((await gw.req('POST', `/v1/chat/completions?${p}=sk-gw-ci-key-000000`, chat('oa/m1'), {}, { tcp: true })).status).toBe(200);
    }
    expect((await gw.req('POST', '/api/v1/editor/sk-gw-ci-key-000000/chat/completions', chat('oa/m1'), {}, { tcp: true })).status).toBe(200);
    const gem401 = await gw.req('POST', '/v1beta/models/oa/m1:generateContent', { contents: [] }, {}, { tcp: true });
    expect(gem401.status).toBe(401);
    expect(gem401.json.error.code).toBe(401);
    // The control socket is trusted.
    expect((await gw.req('POST', '/v1/chat/completions', chat('oa/m1'))).status).toBe(200);
  });

  it('without REQUIRE_API_KEY, keys are required once one exists (file or API); REQUIRE_API_KEY=false turns that off', async () => {
    const providers = `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: "sk-up", models: [m1]}\n`;
    const declared = await startGateway({ yaml: `${providers}keys:\n  - {name: ci, key: "sk-gw-declared-0000", models: ["*"]}\n` });
    const off = await startGateway({ yaml: `${providers}keys:\n  - {name: ci, key: "sk-gw-declared-0000", models: ["*"]}\n`, env: { REQUIRE_API_KEY: 'false' } });
    const none = await startGateway({ yaml: providers });
    try {
      expect((await declared.req('POST', '/v1/chat/completions', chat('oa/m1'), {}, { tcp: true })).status).toBe(401);
      expect((await declared.req('POST', '/v1/chat/completions', chat('oa/m1'), { authorization: 'Bearer wrong' }, { tcp: true })).status).toBe(401);
      expect((await declared.req('POST', '/v1/chat/completions', chat('oa/m1'), { authorization: 'Bearer sk-gw-declared-0000' }, { tcp: true })).status).toBe(200);
      expect((await off.req('POST', '/v1/chat/completions', chat('oa/m1'), { authorization: 'Bearer wrong' }, { tcp: true })).status).toBe(200);
      // No key anywhere: open, until one is created through the API.
      expect((await none.req('POST', '/v1/chat/completions', chat('oa/m1'), {}, { tcp: true })).status).toBe(200);
      expect((await none.req('POST', '/api/keys', { name: 'made', models: ['*'] })).status).toBeLessThan(300);
      expect((await none.req('POST', '/v1/chat/completions', chat('oa/m1'), {}, { tcp: true })).status).toBe(401);
    } finally {
      for (const g of [declared, off, none]) await g.close();
    }
  });

  it('applies the key allow-list', async () => {
    const narrow = { authorization: 'Bearer sk-gw-narrow-00000' };
    expect((await gw.req('POST', '/v1/chat/completions', chat('oa/m1'), narrow, { tcp: true })).status).toBe(200);
    expect((await gw.req('POST', '/v1/chat/completions', chat('fast'), narrow, { tcp: true })).status).toBe(200);
    const denied = await gw.req('POST', '/v1/chat/completions', chat('an/claude-x'), narrow, { tcp: true });
    expect(denied.status).toBe(403);
    expect(denied.json.error.code).toBe('model_not_allowed');
    expect((await gw.req('POST', '/v1/chat/completions', chat('smart'), narrow, { tcp: true })).status).toBe(403);
  });
});

describe('fallback', () => {
  it('moves to the next target on 5xx and reports the attempts', async () => {
    mock.enqueue({ status: 503, errorMessage: 'overloaded upstream' });
    const r = await gw.req('POST', '/v1/chat/completions', chat('smart'), KEY, { tcp: true });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-fallback-attempts']).toBe('1');
    expect(r.headers['x-gateway-decision']).toMatch(/^strategy=priority; provider=oa2;/);
    expect(r.headers['x-gateway-provider']).toBe('oa2');
    const logs = await requestLogs();
    expect(logs[0].combo).toBe('smart');
    expect(logs[0].attempts).toMatchObject([
      { provider: 'oa', model: 'm2', outcome: 'error', status: 503, action: 'fallback' },
      { provider: 'oa2', model: 'm1', outcome: 'success' },
    ]);
  });

  it('returns a non-retryable 400 to the client without trying other targets', async () => {
    mock.enqueue({ status: 400, errorMessage: 'messages: content must not be empty' });
    const r = await gw.req('POST', '/v1/chat/completions', chat('smart'), KEY, { tcp: true });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/content must not be empty/);
    expect(mock.requests).toHaveLength(1);
  });

  it('falls back on a 400 caused by provider differences (context length)', async () => {
    mock.enqueue({ status: 400, errorMessage: "This model's maximum context length is 10 tokens" });
    const r = await gw.req('POST', '/v1/chat/completions', chat('smart'), KEY, { tcp: true });
    expect(r.status).toBe(200);
    expect(mock.requests).toHaveLength(2);
  });

  it('waits out a short Retry-After on the same target', async () => {
    mock.enqueue({ status: 429, retryAfter: '0.2' });
    const t0 = Date.now();
    const r = await gw.req('POST', '/v1/chat/completions', chat('smart'), KEY, { tcp: true });
    expect(r.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(180);
    expect(r.headers['x-gateway-provider']).toBe('oa');
    expect((await requestLogs())[0].attempts.map((a: any) => a.action ?? a.outcome)).toEqual(['retry', 'success']);
  });

  it('cools a target down on a long Retry-After, skips it, and answers 429 with Retry-After when nothing is left', async () => {
    mock.enqueue({ status: 429, retryAfter: '30' });
    const r = await gw.req('POST', '/v1/chat/completions', chat('smart'), KEY, { tcp: true });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-provider']).toBe('oa2');
    // oa is cooling down: the next request skips it without an upstream call.
    mock.reset();
    const r2 = await gw.req('POST', '/v1/chat/completions', chat('smart'), KEY, { tcp: true });
    expect(r2.status).toBe(200);
    expect(mock.requests.map((q) => q.body)).toMatchObject([{ model: 'm1' }]);
    expect((await requestLogs())[0].attempts[0]).toMatchObject({ provider: 'oa', outcome: 'skipped' });
    // Direct request to the cooling target: 429 with Retry-After, no upstream call.
    mock.reset();
    const r3 = await gw.req('POST', '/v1/chat/completions', chat('oa/m2'), KEY, { tcp: true });
    expect(r3.status).toBe(429);
    expect(Number(r3.headers['retry-after'])).toBeGreaterThan(20);
    expect(mock.requests).toHaveLength(0);
  });

  it('treats an empty 200 stream as a failure and falls back before anything reaches the client', async () => {
    mock.enqueue({ stream: 'empty' });
    const r = await gw.req('POST', '/v1/chat/completions', chat('smart', { stream: true }), KEY, { tcp: true });
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-fallback-attempts']).toBe('1');
    expect(sseText(r.text)).toBe('Hello from openai');
  });

  it('reports every failed target when all fail', async () => {
    mock.enqueue({ status: 500, errorMessage: 'boom one' });
    mock.enqueue({ status: 502, errorMessage: 'boom two' });
    const r = await gw.req('POST', '/v1/chat/completions', chat('smart'), KEY, { tcp: true });
    expect(r.status).toBe(500);
    expect(r.json.error.message).toMatch(/all 2 attempts failed: oa\/m2: 500 boom one; oa2\/m1: 502 boom two/);
    expect(r.headers['x-gateway-decision']).toMatch(/strategy=priority; provider=oa2/);
    expect(r.headers['x-gateway-fallback-attempts']).toBe('2');
  });

  it('falls back across provider kinds', async () => {
    mock.enqueue({ status: 500 }, 'openai');
    mock.enqueue({ status: 529 }, 'anthropic');
    const r = await gw.req('POST', '/v1/messages', { model: 'three', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, KEY, { tcp: true });
    expect(r.status).toBe(200);
    expect(r.json.content[0].text).toBe('Hello from gemini');
    expect(r.headers['x-gateway-provider']).toBe('ge');
    expect(r.headers['x-gateway-fallback-attempts']).toBe('2');
  });
});

describe('client formats and listings', () => {
  it('lists models, combos and no-thinking variants', async () => {
    const r = await gw.req('GET', '/v1/models', undefined, KEY, { tcp: true });
    const ids = r.json.data.map((m: any) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['oa/m1', 'an/claude-x', 'ge/gemini-x', 'ol/llama-x', 'smart', 'three', 'r-gateway-no-thinking/oa/r1']));
    expect(ids).not.toContain('m-gateway-no-thinking/oa/m1');
    const tags = await gw.req('GET', '/api/tags', undefined, KEY, { tcp: true });
    expect(tags.json.models.map((m: any) => m.name)).toContain('ol/llama-x');
    const gem = await gw.req('GET', '/v1beta/models', undefined, KEY, { tcp: true });
    expect(gem.json.models.map((m: any) => m.name)).toContain('models/ge/gemini-x');
  });

  it('resolves a no-thinking variant to the real model with reasoning off', async () => {
    const r = await gw.req('POST', '/v1/chat/completions', chat('r-gateway-no-thinking/oa/r1', { reasoning_effort: 'high' }), KEY, { tcp: true });
    expect(r.status).toBe(200);
    const sent = mock.requests.at(-1)!.body as Record<string, unknown>;
    expect(sent.model).toBe('r1');
    expect(sent.reasoning_effort).toBeUndefined();
  });

  it('serves provider-scoped routes and rejects a mismatched model', async () => {
    const ok = await gw.req('POST', '/v1/providers/oa/chat/completions', chat('m2'), KEY, { tcp: true });
    expect(ok.status).toBe(200);
    expect(ok.json.model).toBe('oa/m2');
    const mismatch = await gw.req('POST', '/v1/providers/oa/chat/completions', chat('an/claude-x'), KEY, { tcp: true });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.error.code).toBe('model_provider_mismatch');
    expect((await gw.req('POST', '/v1/providers/nope/chat/completions', chat('m2'), KEY, { tcp: true })).status).toBe(404);
  });

  it('counts tokens for Anthropic and Gemini clients', async () => {
    const a = await gw.req('POST', '/v1/messages/count_tokens', { model: 'an/claude-x', messages: [{ role: 'user', content: 'hello world' }] }, KEY, { tcp: true });
    expect(a.status).toBe(200);
    expect(a.json.input_tokens).toBeGreaterThan(0);
    const g = await gw.req('POST', '/v1beta/models/ge/gemini-x:countTokens', { contents: [{ role: 'user', parts: [{ text: 'hello' }] }] }, KEY, { tcp: true });
    expect(g.json.totalTokens).toBeGreaterThan(0);
    expect(mock.requests).toHaveLength(0);
  });

  it('serves Ollama chat on /api/chat and /v1/api/chat', async () => {
    for (const p of ['/api/chat', '/v1/api/chat']) {
      const r = await gw.req('POST', p, { model: 'ol/llama-x', messages: [{ role: 'user', content: 'hi' }], stream: false }, KEY, { tcp: true });
      expect(r.status).toBe(200);
      expect(r.json.message.content).toBe('Hello from ollama');
      expect(r.json.done).toBe(true);
    }
  });
});

describe('embeddings', () => {
  it('embeds strings through the router with telemetry headers', async () => {
    const r = await gw.req('POST', '/v1/embeddings', { model: 'oa/emb', input: ['a', 'b'], dimensions: 4 }, KEY, { tcp: true });
    expect(r.status).toBe(200);
    expect(r.json.data).toHaveLength(2);
    expect(r.json.data[0].embedding).toHaveLength(4);
    expect(r.json.model).toBe('oa/emb');
    expect(r.headers['x-gateway-tokens-in']).toBe('6');
    expect(r.headers['x-gateway-decision']).toMatch(/strategy=single; provider=oa/);
    const scoped = await gw.req('POST', '/v1/providers/oa/embeddings', { model: 'emb', input: 'x' }, KEY, { tcp: true });
    expect(scoped.status).toBe(200);
    const list = await gw.req('GET', '/v1/embeddings', undefined, KEY, { tcp: true });
    expect(list.json.data.map((m: any) => m.id)).toEqual(['oa/emb']);
    expect((await requestLogs())[0]).toMatchObject({ endpoint: 'embeddings', status: 200 });
  });

  it('rejects structured items for models without multimodal support', async () => {
    const items = await gw.req('POST', '/v1/embeddings', { model: 'oa/emb', input: [{ type: 'text', text: 'x' }] }, KEY, { tcp: true });
    expect(items.status).toBe(400);
    expect(items.json.error.message).toMatch(/structured input/);
    const chatItems = await gw.req('POST', '/v1/embeddings', { model: 'oa/m1', input: [{ type: 'text', text: 'x' }] }, KEY, { tcp: true });
    expect(chatItems.status).toBe(400);
    const tooMany = await gw.req('POST', '/v1/embeddings', { model: 'oa/emb', input: Array.from({ length: 33 }, () => ({ type: 'text', text: 'x' })) }, KEY, { tcp: true });
    expect(tooMany.status).toBe(400);
    expect(mock.requests).toHaveLength(0);
  });

  it('forwards a plain string to a model listed without a type (seed rule 3), whatever its name suggests', async () => {
    const plain = await gw.req('POST', '/v1/embeddings', { model: 'oa/m1', input: 'x' }, KEY, { tcp: true });
    expect(plain.status, plain.text).toBe(200);
    expect(plain.json.data).toHaveLength(1);
    expect(mock.requests.at(-1)!.path).toMatch(/\/embeddings$/);
  });
});

describe('client disconnect', () => {
  it('aborts the upstream stream and records the request', async () => {
    mock.enqueue({ text: 'a'.repeat(60), chunkDelayMs: 150 });
    const ac = new AbortController();
    const res = await fetch(`${gw.tcpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...KEY },
      body: JSON.stringify(chat('oa/m1', { stream: true })),
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    await new Promise((r) => setTimeout(r, 400));
    expect(mock.aborted).toBeGreaterThanOrEqual(1);
    const logs = await requestLogs();
    expect(logs[0]).toMatchObject({ status: 499, clientAborted: true, stream: true });
  });
});

describe('client disconnect (non-streaming)', () => {
  it('aborts the upstream call while waiting for the answer', async () => {
    mock.enqueue({ latencyMs: 800 });
    const ac = new AbortController();
    const p = fetch(`${gw.tcpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...KEY },
      body: JSON.stringify(chat('oa/m1')),
      signal: ac.signal,
    }).catch((e) => e);
    await new Promise((r) => setTimeout(r, 150));
    ac.abort();
    await p;
    await new Promise((r) => setTimeout(r, 200));
    expect(mock.aborted).toBe(1);
    const logs = await requestLogs();
    expect(logs[0]).toMatchObject({ status: 499, clientAborted: true, stream: false });
    expect(logs[0].attempts).toHaveLength(1);
  });
});

describe('in-process handle', () => {
  it('chats through any resolvable model id', async () => {
    const r = await gw.handle.chat({ model: 'smart', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }] });
    expect(r).toMatchObject({ content: 'Hello from openai', model: 'oa/m2', provider: 'oa', usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } });
    const logs = await requestLogs();
    expect(logs[0].endpoint).toBe('internal');
    await expect(gw.handle.chat({ model: 'nope/x', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 404 });
  });
});
