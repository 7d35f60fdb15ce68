/**
 * The gateway inside the real daemon, driven by the official SDKs over its TCP listener: fallback
 * across provider kinds, headers, auth, and durability of management writes across kill -9.
 */
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { Ollama } from 'ollama';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';

const KEY = 'sk-gw-e2e-key-000000';
let d: TestDaemon;
let mock: MockUpstream;
let base: string;

beforeAll(async () => {
  mock = await startLlmUpstream({ apiKey: 'sk-up' });
  d = await startDaemon({
    files: {
      'gateway.yaml': `
providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: "sk-up", models: [m1]}
  - {id: an, kind: anthropic, base_url: "${mock.baseUrl('anthropic')}", api_key: "sk-up", models: [claude-x]}
  - {id: ge, kind: gemini, base_url: "${mock.baseUrl('gemini')}", api_key: "sk-up", models: [gemini-x]}
  - {id: ol, kind: ollama, base_url: "${mock.baseUrl('ollama')}", api_key: "sk-up", models: [llama-x]}
combos:
  - {name: chain, strategy: priority, targets: [oa/m1, an/claude-x, ge/gemini-x, ol/llama-x]}
keys:
  - {name: e2e, key: "${KEY}", models: ["*"]}
pricing:
  an/claude-x: {input: 3, output: 15}
settings: {retry_wait_max_ms: 0}
`,
    },
    env: { REQUIRE_API_KEY: 'true', INITIAL_PASSWORD: 'e2e-password' },
  });
  base = await d.baseUrl('gateway');
});
afterAll(async () => {
  await d?.cleanup();
  await mock?.close();
});
beforeEach(() => mock.reset());

describe('official SDKs through the daemon', () => {
  it('openai: a combo falls back across kinds and the headers say so', async () => {
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: KEY, maxRetries: 0 });
    mock.enqueue({ status: 503 }, 'openai');
    const { data, response } = await client.chat.completions
      .create({ model: 'chain', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'X-Session-Id': 'e2e-session' } })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe('Hello from anthropic');
    expect(data.model).toBe('an/claude-x');
    const h = response.headers;
    expect(h.get('x-gateway-version')).toMatch(/^\d+\.\d+\.\d+/);
    expect(h.get('x-gateway-decision')).toMatch(/^strategy=priority; provider=an; latency_ms=\d+$/);
    expect(h.get('x-gateway-fallback-attempts')).toBe('1');
    expect(h.get('x-gateway-response-cost')).toBe(((11 * 3 + 7 * 15) / 1e6).toFixed(10));
    expect(h.get('x-gateway-provider')).toBe('an');
    expect(h.get('x-gateway-session-id')).toBe('e2e-session');
  });

  it('anthropic: streaming through a combo whose first target sends an empty stream', async () => {
    const client = new Anthropic({ baseURL: base, apiKey: KEY, maxRetries: 0 });
    mock.enqueue({ stream: 'empty' }, 'openai');
    const stream = client.messages.stream({ model: 'chain', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    stream.on('text', (t) => (text += t));
    const final = await stream.finalMessage();
    expect(text).toBe('Hello from anthropic');
    expect(final.usage.output_tokens).toBe(7);
  });

  it('gemini: x-goog-api-key auth and fallback to the Gemini upstream', async () => {
    const ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: base, apiVersion: 'v1beta' } });
    mock.enqueue({ status: 500 }, 'openai');
    mock.enqueue({ status: 500 }, 'anthropic');
    const res = await ai.models.generateContent({ model: 'chain', contents: 'hi' });
    expect(res.text).toBe('Hello from gemini');
  });

  it('ollama: the last target of the chain answers', async () => {
    const ollama = new Ollama({ host: base, headers: { Authorization: `Bearer ${KEY}` } });
    mock.enqueue({ status: 500 }, 'openai');
    mock.enqueue({ status: 500 }, 'anthropic');
    mock.enqueue({ status: 500 }, 'gemini');
    const res = await ollama.chat({ model: 'chain', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.message.content).toBe('Hello from ollama');
    const tags = await ollama.list();
    expect(tags.models.map((m) => m.name)).toContain('chain');
  });

  it('every attempt is in the request log', async () => {
    const r = await d.request('gateway', 'GET', '/api/usage/request-logs?limit=5&combo=chain');
    const last = r.json.items[0];
    expect(last.attempts.map((a: any) => `${a.provider}:${a.outcome}`)).toEqual(['oa:error', 'an:error', 'ge:error', 'ol:success']);
  });

  it('openai: a wrong key is a 401 AuthenticationError; a 429 with nothing left is a RateLimitError (runs last: it cools oa down)', async () => {
    const bad = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'nope', maxRetries: 0 });
    await expect(bad.chat.completions.create({ model: 'oa/m1', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: KEY, maxRetries: 0 });
    mock.enqueue({ status: 429, retryAfter: '1' }, 'openai');
    const err = await client.chat.completions.create({ model: 'oa/m1', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.headers.get('retry-after')).toBe('1');
  });
});

describe('management over TCP and durability', () => {
  it('needs a login on TCP, and keeps acknowledged writes across kill -9', async () => {
    expect((await fetch(`${base}/api/providers`)).status).toBe(401);
    const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: 'e2e-password' }) });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const created = await fetch(`${base}/api/providers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ id: 'durable', kind: 'openai', baseUrl: mock.baseUrl('openai'), apiKey: 'sk-up', models: ['m1'] }),
    });
    expect(created.status).toBe(201);
    const key = await d.request('gateway', 'POST', '/api/keys', { name: 'durable-key' });
    expect(key.status).toBe(201);
    await d.kill9();
    await d.start();
    base = await d.baseUrl('gateway');
    const p = await d.request('gateway', 'GET', '/api/providers/durable');
    expect(p.status).toBe(200);
    expect(p.json.accounts[0].apiKey).toBe('••••••••');
    // The login session and the new key survived too.
    expect((await fetch(`${base}/api/providers/durable`, { headers: { cookie } })).status).toBe(200);
    const chat = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key.json.key}` },
      body: JSON.stringify({ model: 'durable/m1', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(200);
  });
});
