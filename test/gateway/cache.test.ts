/**
 * Response cache and idempotency through the real component and the mock upstream: exact-signature
 * keys (tools, tool_choice, response_format, max tokens... all count), namespaces per API key,
 * deterministic requests only, bypass header, HIT/MISS headers and cost, cached answers replayed as
 * streams, the memory bound over SQLite, TTL on a hand-moved clock, the management routes, and
 * idempotency keys (concurrent duplicates make one upstream call).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/http/clock.js';
import { isDeterministic, requestSignature } from '../../src/gateway/cache/signature.js';
import { parseRequest } from '../../src/gateway/translate/index.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

const KEY_A = 'sk-gw-cache-aaaaaaaa';
const KEY_B = 'sk-gw-cache-bbbbbbbb';
const A = { Authorization: `Bearer ${KEY_A}` };
const B = { Authorization: `Bearer ${KEY_B}` };

let mock: MockUpstream;
let gw: GatewayHarness;
let clock: ManualClock;
let dir: string;

const yaml = (m: MockUpstream) => `
providers:
  - {id: oa, kind: openai, base_url: "${m.baseUrl('openai')}", api_key: "sk-up", models: [m1]}
  - {id: an, kind: anthropic, base_url: "${m.baseUrl('anthropic')}", api_key: "sk-up", models: [claude-x]}
keys:
  - {name: a, key: "${KEY_A}", models: ["*"]}
  - {name: b, key: "${KEY_B}", models: ["*"]}
pricing:
  oa/m1: {input: 1, output: 2}
`;

const WEATHER = { type: 'function', function: { name: 'weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const chat = (extra: Record<string, unknown> = {}) => ({ model: 'oa/m1', temperature: 0, messages: [{ role: 'user', content: 'cache me' }], ...extra });

beforeAll(async () => {
  mock = await startLlmUpstream({ defaults: { text: 'cached answer', usage: { input: 1000, output: 500 } } });
  clock = new ManualClock(Date.parse('2030-01-01T12:00:00Z'));
  dir = mkdtempSync(join(tmpdir(), 'ctl-gw-cache-'));
  gw = await startGateway({ yaml: yaml(mock), clock, dir });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  mock.reset();
  await gw.req('DELETE', '/api/cache/stats');
  await gw.req('PATCH', '/api/cache', { memoryMaxSize: 500, mode: 'deterministic', enabled: true });
});

describe('signature', () => {
  const sig = (body: Record<string, unknown>, ns = 'k') => requestSignature(parseRequest('openai', body), ns);

  it('covers everything that changes the answer, and nothing that does not', () => {
    const base = chat();
    const s = sig(base);
    expect(sig({ ...base })).toBe(s);
    // Field order does not matter.
    expect(sig({ messages: base.messages, temperature: 0, model: 'oa/m1' })).toBe(s);
    for (const change of [
      { tools: [WEATHER] },
      { tools: [WEATHER], tool_choice: 'required' },
      { response_format: { type: 'json_object' } },
      { max_tokens: 10 },
      { top_p: 0.5 },
      { seed: 7 },
      { stop: ['x'] },
      { model: 'oa/m2' },
      { messages: [{ role: 'user', content: 'cache me!' }] },
      { messages: [{ role: 'system', content: 'be brief' }, ...base.messages] },
      { logit_bias: { '42': 1 } },
    ]) {
      expect(sig({ ...base, ...change }), JSON.stringify(change)).not.toBe(s);
    }
    expect(sig({ ...base, tools: [WEATHER], tool_choice: 'auto' })).not.toBe(sig({ ...base, tools: [WEATHER], tool_choice: 'none' }));
    // Streaming, usage chunks and the end-user id do not change the answer.
    expect(sig({ ...base, stream: true, stream_options: { include_usage: true } })).toBe(s);
    expect(sig({ ...base, user: 'u-1' })).toBe(s);
    // Namespaced per API key.
    expect(sig(base, 'other')).not.toBe(s);
  });

  it('only temperature 0 or a seed is deterministic', () => {
    expect(isDeterministic(parseRequest('openai', chat()))).toBe(true);
    expect(isDeterministic(parseRequest('openai', { ...chat(), temperature: 0.2 }))).toBe(false);
    expect(isDeterministic(parseRequest('openai', { ...chat(), temperature: undefined }))).toBe(false);
    expect(isDeterministic(parseRequest('openai', { ...chat(), temperature: 1, seed: 3 }))).toBe(true);
  });
});

describe('response cache', () => {
  it('serves a repeated deterministic request from the cache: no upstream call, cost 0, cost saved', async () => {
    const miss = await gw.req('POST', '/v1/chat/completions', chat(), A);
    expect(miss.status).toBe(200);
    expect(miss.headers['x-gateway-cache']).toBe('MISS');
    expect(miss.headers['x-gateway-response-cost']).toBe('0.0020000000');
    const hit = await gw.req('POST', '/v1/chat/completions', chat(), A);
    expect(hit.status).toBe(200);
    expect(mock.requests).toHaveLength(1);
    expect(hit.headers['x-gateway-cache']).toBe('HIT');
    expect(hit.headers['x-gateway-cache-hit']).toBe('true');
    expect(hit.headers['x-gateway-response-cost']).toBe('0.0000000000');
    expect(hit.headers['x-gateway-cost-saved']).toBe('0.0020000000');
    expect(hit.headers['x-gateway-provider']).toBe('oa');
    expect(hit.headers['x-gateway-decision']).toMatch(/^strategy=single; provider=oa; latency_ms=\d+$/);
    expect(hit.json.choices[0].message.content).toBe('cached answer');
    expect(hit.json).toEqual(miss.json);
    const logs = (await gw.req('GET', '/api/usage/request-logs?limit=2')).json.items;
    expect(logs[0]).toMatchObject({ cache: 'hit', cost: 0, costSaved: 0.002, status: 200, provider: 'oa', model: 'm1', tokensIn: 1000 });
    expect(logs[1]).toMatchObject({ cache: 'miss', cost: 0.002 });
    const stats = (await gw.req('GET', '/api/cache/stats')).json;
    expect(stats).toMatchObject({
      semanticCache: { memorySize: 1, memoryMaxSize: 500, hitRate: 0.5, hits: 1, misses: 1 },
      idempotency: { activeKeys: 0, windowMs: 5000 },
    });
    expect(typeof stats.semanticCache.dbSize).toBe('number');
  });

  it('never shares an entry between requests that differ only in their tools', async () => {
    await gw.req('POST', '/v1/chat/completions', chat({ tools: [WEATHER] }), A);
    const other = await gw.req('POST', '/v1/chat/completions', chat(), A);
    expect(other.headers['x-gateway-cache']).toBe('MISS');
    const withOtherTool = await gw.req('POST', '/v1/chat/completions', chat({ tools: [{ ...WEATHER, function: { ...WEATHER.function, name: 'forecast' } }] }), A);
    expect(withOtherTool.headers['x-gateway-cache']).toBe('MISS');
    expect(mock.requests).toHaveLength(3);
    expect((await gw.req('POST', '/v1/chat/completions', chat({ tools: [WEATHER] }), A)).headers['x-gateway-cache']).toBe('HIT');
    expect(mock.requests).toHaveLength(3);
  });

  it('is namespaced per API key, skips non-deterministic requests, and honours X-Gateway-No-Cache', async () => {
    await gw.req('POST', '/v1/chat/completions', chat(), A);
    expect((await gw.req('POST', '/v1/chat/completions', chat(), B)).headers['x-gateway-cache']).toBe('MISS');
    expect(mock.requests).toHaveLength(2);
    const sampled = chat({ temperature: 0.7 });
    await gw.req('POST', '/v1/chat/completions', sampled, A);
    expect((await gw.req('POST', '/v1/chat/completions', sampled, A)).headers['x-gateway-cache']).toBe('MISS');
    expect(mock.requests).toHaveLength(4);
    const bypass = await gw.req('POST', '/v1/chat/completions', chat(), { ...A, 'X-Gateway-No-Cache': 'true' });
    expect(bypass.headers['x-gateway-cache']).toBe('MISS');
    expect(mock.requests).toHaveLength(5);
    // mode: all caches sampled requests too.
    await gw.req('PATCH', '/api/cache', { mode: 'all' });
    expect((await gw.req('POST', '/v1/chat/completions', sampled, A)).headers['x-gateway-cache']).toBe('MISS');
    expect((await gw.req('POST', '/v1/chat/completions', sampled, A)).headers['x-gateway-cache']).toBe('HIT');
  });

  it('answers a streaming request from the cache as a stream, and caches a streamed answer', async () => {
    await gw.req('POST', '/v1/chat/completions', chat(), A);
    const s = await gw.req('POST', '/v1/chat/completions', chat({ stream: true, stream_options: { include_usage: true } }), A);
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toMatch(/text\/event-stream/);
    expect(s.headers['x-gateway-cache']).toBe('HIT');
    const events = s.text.split('\n\n').filter((l) => l.startsWith('data: ') && !l.includes('[DONE]')).map((l) => JSON.parse(l.slice(6)));
    expect(events.map((e) => e.choices[0]?.delta?.content ?? '').join('')).toBe('cached answer');
    expect(events.at(-1).usage).toMatchObject({ prompt_tokens: 1000, completion_tokens: 500 });
    expect(s.text.trim().endsWith('data: [DONE]')).toBe(true);
    expect(mock.requests).toHaveLength(1);

    // A streamed miss is assembled and kept: the same request without stream is a hit.
    const streamed = chat({ messages: [{ role: 'user', content: 'stream first' }], stream: true });
    const first = await gw.req('POST', '/v1/chat/completions', streamed, A);
    expect(first.headers['x-gateway-cache']).toBe('MISS');
    const json = await gw.req('POST', '/v1/chat/completions', { ...streamed, stream: false }, A);
    expect(json.headers['x-gateway-cache']).toBe('HIT');
    expect(json.json.choices[0].message.content).toBe('cached answer');
    expect(mock.requests).toHaveLength(2);

    // A cached answer can be served in another client format (Anthropic messages, as a stream).
    const anthropic = { model: 'oa/m1', temperature: 0, max_tokens: 50, messages: [{ role: 'user', content: 'anthropic client' }] };
    await gw.req('POST', '/v1/messages', anthropic, A);
    const again = await gw.req('POST', '/v1/messages', { ...anthropic, stream: true }, A);
    expect(again.headers['x-gateway-cache']).toBe('HIT');
    expect(again.text).toMatch(/event: message_start/);
    expect(again.text).toMatch(/"text_delta","text":"cached answer"/);
    expect(again.text).toMatch(/event: message_stop/);
  });

  it('a stream that breaks is not cached', async () => {
    mock.enqueue({ stream: 'truncated', text: 'abcdefghijkl' });
    const body = chat({ messages: [{ role: 'user', content: 'will break' }], stream: true });
    await gw.req('POST', '/v1/chat/completions', body, A);
    expect((await gw.req('POST', '/v1/chat/completions', body, A)).headers['x-gateway-cache']).toBe('MISS');
  });

  it('bounds the memory LRU by memoryMaxSize, backed by SQLite, and expires entries after the TTL', async () => {
    await gw.req('PATCH', '/api/cache', { memoryMaxSize: 2 });
    for (const i of [1, 2, 3]) await gw.req('POST', '/v1/chat/completions', chat({ messages: [{ role: 'user', content: `q${i}` }] }), A);
    let stats = (await gw.req('GET', '/api/cache/stats')).json.semanticCache;
    expect(stats.memorySize).toBe(2);
    expect(stats.memoryMaxSize).toBe(2);
    // q1 left memory but is still in SQLite: a hit without an upstream call.
    mock.reset();
    const q1 = await gw.req('POST', '/v1/chat/completions', chat({ messages: [{ role: 'user', content: 'q1' }] }), A);
    expect(q1.headers['x-gateway-cache']).toBe('HIT');
    expect(mock.requests).toHaveLength(0);
    stats = (await gw.req('GET', '/api/cache/stats')).json.semanticCache;
    expect(stats.dbSize).toBe(3);
    expect(stats.memorySize).toBe(2);

    clock.advance(3_600_001);
    expect((await gw.req('POST', '/v1/chat/completions', chat({ messages: [{ role: 'user', content: 'q1' }] }), A)).headers['x-gateway-cache']).toBe('MISS');
  });

  it('lists and deletes entries, clears the cache, and validates settings', async () => {
    await gw.req('POST', '/v1/chat/completions', chat(), A);
    await gw.req('POST', '/v1/chat/completions', chat({ messages: [{ role: 'user', content: 'two' }] }), B);
    const list = await gw.req('GET', '/api/cache/entries');
    expect(list.json.total).toBe(2);
    expect(list.json.entries[0]).toMatchObject({ model: 'oa/m1', provider: 'oa', tokensIn: 1000, tokensOut: 500, inMemory: true });
    const keyA = (await gw.req('GET', '/api/keys')).json.keys.find((k: any) => k.name === 'a').id;
    expect((await gw.req('GET', `/api/cache/entries?apiKeyId=${encodeURIComponent(keyA)}`)).json.total).toBe(1);
    expect((await gw.req('DELETE', `/api/cache/entries?apiKeyId=${encodeURIComponent(keyA)}`)).json.deleted).toBe(1);
    expect((await gw.req('POST', '/v1/chat/completions', chat(), A)).headers['x-gateway-cache']).toBe('MISS');
    expect((await gw.req('DELETE', '/api/cache/entries', { olderThan: '1h' })).json.deleted).toBe(0);
    expect((await gw.req('DELETE', '/api/cache/entries', { model: 'oa/m1' })).json.deleted).toBe(2);
    expect((await gw.req('GET', '/api/cache/entries?olderThan=yesterday-ish')).status).toBe(400);

    await gw.req('POST', '/v1/chat/completions', chat(), A);
    const cleared = await gw.req('DELETE', '/api/cache/stats');
    expect(cleared.json).toMatchObject({ cleared: 1, semanticCache: { memorySize: 0, dbSize: 0, hitRate: 0 } });
    const overview = await gw.req('GET', '/api/cache');
    expect(overview.json.settings).toMatchObject({ enabled: true, mode: 'deterministic', memoryMaxSize: 500 });
    expect((await gw.req('PATCH', '/api/cache', { memoryMaxSize: -1 })).status).toBe(400);
    expect((await gw.req('PATCH', '/api/cache', { enabled: 'yes' })).status).toBe(400);
    // Disabled: no header claims a miss and nothing is kept.
    await gw.req('PATCH', '/api/cache', { enabled: false });
    const off = await gw.req('POST', '/v1/chat/completions', chat(), A);
    expect(off.headers['x-gateway-cache']).toBeUndefined();
    expect((await gw.req('GET', '/api/cache/stats')).json.semanticCache.memorySize).toBe(0);
  });

  it('survives a restart (SQLite)', async () => {
    await gw.req('POST', '/v1/chat/completions', chat({ messages: [{ role: 'user', content: 'durable' }] }), A);
    await gw.close();
    gw = await startGateway({ yaml: yaml(mock), clock, dir });
    mock.reset();
    const r = await gw.req('POST', '/v1/chat/completions', chat({ messages: [{ role: 'user', content: 'durable' }] }), A);
    expect(r.headers['x-gateway-cache']).toBe('HIT');
    expect(mock.requests).toHaveLength(0);
  });
});

describe('idempotency', () => {
  const sampled = (content: string) => ({ model: 'oa/m1', messages: [{ role: 'user', content }] });

  it('a concurrent duplicate waits for the first request and replays its answer: one upstream call', async () => {
    mock.enqueue({ latencyMs: 200, text: 'only once' });
    const h = { ...A, 'Idempotency-Key': 'idem-1' };
    const [r1, r2, r3] = await Promise.all([
      gw.req('POST', '/v1/chat/completions', sampled('pay'), h),
      new Promise((r) => setTimeout(r, 30)).then(() => gw.req('POST', '/v1/chat/completions', sampled('pay'), h)),
      new Promise((r) => setTimeout(r, 60)).then(() => gw.req('POST', '/v1/chat/completions', { ...sampled('pay'), stream: true }, { ...A, 'Idempotency-Key': 'idem-1s' })),
    ]);
    expect(mock.requests.filter((q) => (q.body as any).messages[0].content === 'pay')).toHaveLength(2);
    expect(r1.status).toBe(200);
    expect(r2.status).toBe(200);
    expect(r1.headers['x-gateway-idempotent']).toBeUndefined();
    expect(r2.headers['x-gateway-idempotent']).toBe('true');
    expect(r2.headers['x-gateway-response-cost']).toBe('0.0000000000');
    expect(r2.json).toEqual(r1.json);
    expect(r1.json.choices[0].message.content).toBe('only once');
    expect(r3.status).toBe(200);
    expect((await gw.req('GET', '/api/cache/stats')).json.idempotency).toEqual({ activeKeys: 2, windowMs: 5000 });
    const logs = (await gw.req('GET', '/api/usage/request-logs?limit=3')).json.items;
    expect(logs.filter((l: any) => l.cache === 'replay')).toHaveLength(1);
  });

  it('replays within 5 s, goes upstream again after, and refuses a reused key with another body', async () => {
    const h = { ...A, 'Idempotency-Key': 'idem-2' };
    await gw.req('POST', '/v1/chat/completions', sampled('window'), h);
    clock.advance(4999);
    expect((await gw.req('POST', '/v1/chat/completions', sampled('window'), h)).headers['x-gateway-idempotent']).toBe('true');
    expect(mock.requests).toHaveLength(1);
    const conflict = await gw.req('POST', '/v1/chat/completions', sampled('different'), h);
    expect(conflict.status).toBe(409);
    expect(conflict.json.error.code).toBe('idempotency_key_reused');
    clock.advance(2);
    expect((await gw.req('POST', '/v1/chat/completions', sampled('window'), h)).headers['x-gateway-idempotent']).toBeUndefined();
    expect(mock.requests).toHaveLength(2);
  });

  it('is scoped per API key, accepts X-Request-Id, and a failed first request is not replayed', async () => {
    await gw.req('POST', '/v1/chat/completions', sampled('scoped'), { ...A, 'Idempotency-Key': 'idem-3' });
    expect((await gw.req('POST', '/v1/chat/completions', sampled('scoped'), { ...B, 'Idempotency-Key': 'idem-3' })).headers['x-gateway-idempotent']).toBeUndefined();
    expect(mock.requests).toHaveLength(2);
    await gw.req('POST', '/v1/chat/completions', sampled('rid'), { ...A, 'X-Request-Id': 'rid-1' });
    expect((await gw.req('POST', '/v1/chat/completions', sampled('rid'), { ...A, 'X-Request-Id': 'rid-1' })).headers['x-gateway-idempotent']).toBe('true');
    mock.reset();
    mock.enqueue({ status: 500 });
    const h = { ...A, 'Idempotency-Key': 'idem-4' };
    expect((await gw.req('POST', '/v1/chat/completions', sampled('fails'), h)).status).toBe(500);
    const retry = await gw.req('POST', '/v1/chat/completions', sampled('fails'), h);
    expect(retry.status).toBe(200);
    expect(retry.headers['x-gateway-idempotent']).toBeUndefined();
    expect(mock.requests).toHaveLength(2);
  });
});
