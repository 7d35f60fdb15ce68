/**
 * The provider plugin manifest (generated from the provider registry, nothing secret in it) and
 * provider nodes (self-hosted endpoints: add, list, test, list models, route to, delete).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let mock: MockUpstream;
let gw: GatewayHarness;

beforeAll(async () => {
  mock = await startLlmUpstream({ models: ['llama-3-8b', 'qwen-7b'] });
  gw = await startGateway({
    yaml: `providers:
  - {id: cloud, kind: openai, api_key: sk-very-secret-upstream-key, headers: {x-org: secret-org}, models: [gpt]}
`,
  });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

describe('provider plugin manifest', () => {
  it('lists every provider kind with its operations and config fields, and nothing secret', async () => {
    const r = await gw.req('GET', '/api/v1/provider-plugin-manifest', undefined, {}, { tcp: true });
    expect(r.status).toBe(200);
    expect(r.json.plugins.map((p: { id: string }) => p.id)).toEqual(['openai', 'anthropic', 'gemini', 'ollama']);
    const byId = Object.fromEntries(r.json.plugins.map((p: { id: string }) => [p.id, p]));
    expect(byId.openai).toMatchObject({ defaultBaseUrl: expect.stringMatching(/^https:\/\/api\.openai\.com/), auth: { type: 'api-key', header: 'authorization', scheme: 'Bearer' }, operations: { chat: true, images: true, speech: true, transcriptions: true, rerank: true } });
    expect(byId.anthropic).toMatchObject({ auth: { header: 'x-api-key' }, operations: { chat: true, images: false, speech: false } });
    expect(byId.gemini.operations).toMatchObject({ images: true, rerank: false });
    expect(byId.ollama).toMatchObject({ auth: { type: 'none' }, breakerProfile: 'local' });
    expect(byId.openai.aliases).toContain('openai-compatible');
    expect(byId.openai.configFields.find((f: { name: string }) => f.name === 'apiKey')).toMatchObject({ secret: true });
    for (const s of ['sk-very-secret', 'secret-org', 'cloud']) expect(r.text).not.toContain(s);
  });
});

describe('provider nodes', () => {
  it('adds a self-hosted node, lists, tests, lists its models, routes to it and deletes it', async () => {
    const add = await gw.req('POST', '/api/provider-nodes', { id: 'gpu1', kind: 'openai', baseUrl: mock.baseUrl('openai'), models: ['llama-3-8b'] });
    expect(add.status, add.text).toBe(201);
    expect(add.json).toMatchObject({ id: 'gpu1', node: true, operations: { chat: true } });
    const list = await gw.req('GET', '/api/provider-nodes');
    expect(list.json.nodes.map((n: { id: string }) => n.id)).toEqual(['gpu1']); // `cloud` uses the public default
    const t = await gw.req('POST', '/api/provider-nodes/gpu1/test', {});
    expect(t.json).toMatchObject({ node: 'gpu1', ok: true, method: 'models', models: 2 });
    const models = await gw.req('GET', '/api/provider-nodes/gpu1/models');
    expect(models.json.models.map((m: { id: string }) => m.id)).toEqual(['llama-3-8b', 'qwen-7b']);
    const chat = await gw.req('POST', '/v1/chat/completions', { model: 'gpu1/llama-3-8b', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(200);
    expect((await gw.req('GET', '/api/provider-nodes/cloud')).status).toBe(404);
    expect((await gw.req('DELETE', '/api/provider-nodes/gpu1')).json).toEqual({ id: 'gpu1', deleted: true });
    expect((await gw.req('GET', '/api/provider-nodes')).json.nodes).toEqual([]);
  });

  it('a node answering a page that is not JSON: 502 for its models, a failed test, and the page is never echoed', async () => {
    const page = '<html><body>PAGE-SECRET-MARKER internal router login</body></html>';
    const srv = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(page);
    });
    const errSrv = createServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/html' });
      res.end(page);
    });
    await Promise.all([srv, errSrv].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))));
    try {
      for (const [id, s] of [['html200', srv], ['html500', errSrv]] as const) {
        const base = `http://127.0.0.1:${(s.address() as AddressInfo).port}/v1`;
        expect((await gw.req('POST', '/api/provider-nodes', { id, kind: 'openai', baseUrl: base, models: ['m'] })).status).toBe(201);
        const models = await gw.req('GET', `/api/provider-nodes/${id}/models`);
        expect(models.status, models.text).toBe(502);
        expect(models.json.error.message).toMatch(new RegExp(`provider node ${id}`));
        expect(models.text).not.toContain('PAGE-SECRET-MARKER');
        const t = await gw.req('POST', `/api/provider-nodes/${id}/test`, {});
        expect(t.json).toMatchObject({ node: id, ok: false });
        expect(t.text).not.toContain('PAGE-SECRET-MARKER');
        await gw.req('DELETE', `/api/provider-nodes/${id}`);
      }
    } finally {
      srv.close();
      errSrv.close();
    }
  });

  it('a node needs an address of its own', async () => {
    expect((await gw.req('POST', '/api/provider-nodes', { id: 'n1', kind: 'openai' })).json.error.message).toMatch(/baseUrl is required/);
    const pub = await gw.req('POST', '/api/provider-nodes', { id: 'n2', kind: 'anthropic', baseUrl: 'https://api.anthropic.com' });
    expect(pub.status).toBe(400);
    expect(pub.json.error.message).toMatch(/public default/);
    expect((await gw.req('GET', '/api/providers/n2')).status).toBe(404);
  });
});
