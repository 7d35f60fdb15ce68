/**
 * Cloud agent tasks against a loopback fake agent provider: create (201 with the task), status
 * refreshed from the upstream, approve / message / cancel, list filters and the limit, delete (a
 * running task cancelled upstream first), a provider that refuses, and management auth on every method.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway, type GatewayHarness } from './harness.js';

let gw: GatewayHarness;
let fake: Server;
const upstream = new Map<string, { status: string; result?: unknown; messages: string[] }>();
const calls: string[] = [];
let seq = 0;

beforeAll(async () => {
  fake = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c));
    req.on('end', () => {
      calls.push(`${req.method} ${req.url}`);
      const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.headers.authorization !== 'Bearer agent-key') return send(401, { error: 'bad key' });
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      if (req.method === 'POST' && req.url === '/tasks') {
        if (String(body.prompt).includes('refuse')) return send(422, { error: 'prompt refused' });
        const id = `ext-${++seq}`;
        upstream.set(id, { status: 'pending', messages: [] });
        return send(201, { id, status: 'pending', url: `https://agents.example/tasks/${id}` });
      }
      const m = /^\/tasks\/([^/]+)(?:\/(approve|messages|cancel))?$/.exec(req.url ?? '');
      const t = m ? upstream.get(m[1]!) : undefined;
      if (!m || !t) return send(404, { error: 'no such task' });
      if (req.method === 'GET' && !m[2]) return send(200, { id: m[1], status: t.status, ...(t.result ? { result: t.result } : {}) });
      if (m[2] === 'approve') t.status = 'in_progress';
      if (m[2] === 'messages') t.messages.push(String(body.message));
      if (m[2] === 'cancel') t.status = 'canceled';
      send(200, { id: m[1], status: t.status });
    });
  });
  await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
  gw = await startGateway({
    yaml: 'keys:\n  - {name: plain, key: "sk-plain-key-000000000000000", models: ["*"]}\n',
    config: { agent_providers: [{ id: 'coder', name: 'Coder', base_url: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`, api_key: 'agent-key' }] },
  });
});
afterAll(async () => {
  await gw.close();
  await new Promise((r) => fake.close(r));
});

describe('cloud agent tasks', () => {
  let id = '';

  it('creates a task upstream and follows its status; approve, message, cancel', async () => {
    const c = await gw.req('POST', '/api/v1/agents/tasks', { providerId: 'coder', prompt: 'fix the build', source: { repo: 'acme/app', branch: 'main' }, options: { autoApprove: false } });
    expect(c.status, c.text).toBe(201);
    expect(c.json.task).toMatchObject({ providerId: 'coder', externalId: 'ext-1', status: 'queued', url: 'https://agents.example/tasks/ext-1', source: { repo: 'acme/app' } });
    id = c.json.task.id;

    upstream.get('ext-1')!.status = 'needs_approval';
    expect((await gw.req('GET', `/api/v1/agents/tasks/${id}`)).json.task.status).toBe('awaiting_approval');
    expect((await gw.req('POST', `/api/v1/agents/tasks/${id}`, { action: 'approve' })).json.task.status).toBe('running');
    const msg = await gw.req('POST', `/api/v1/agents/tasks/${id}`, { action: 'message', message: 'also run the linter' });
    expect(msg.json.task.messages).toEqual([{ role: 'user', text: 'also run the linter', at: expect.any(String) }]);
    expect(upstream.get('ext-1')!.messages).toEqual(['also run the linter']);
    expect((await gw.req('POST', `/api/v1/agents/tasks/${id}`, { action: 'approve' })).status).toBe(409); // not awaiting approval

    upstream.get('ext-1')!.status = 'succeeded';
    upstream.get('ext-1')!.result = { pullRequest: 'https://git.example/acme/app/pull/7' };
    const done = (await gw.req('GET', `/api/v1/agents/tasks/${id}`)).json.task;
    expect(done).toMatchObject({ status: 'completed', result: { pullRequest: 'https://git.example/acme/app/pull/7' } });
    const before = calls.length;
    await gw.req('GET', `/api/v1/agents/tasks/${id}`);
    expect(calls.length).toBe(before); // finished: no more upstream refreshes
    expect((await gw.req('POST', `/api/v1/agents/tasks/${id}`, { action: 'cancel' })).status).toBe(409);
  });

  it('lists with filters and the limit; deleting a running task cancels it upstream', async () => {
    const run = (await gw.req('POST', '/api/v1/agents/tasks', { providerId: 'coder', prompt: 'second', source: 'acme/app' })).json.task;
    const list = await gw.req('GET', '/api/v1/agents/tasks?provider=coder');
    expect(list.json).toMatchObject({ total: 2, limit: 50 });
    expect((await gw.req('GET', '/api/v1/agents/tasks?status=completed')).json.tasks.map((t: { id: string }) => t.id)).toEqual([id]);
    expect((await gw.req('GET', '/api/v1/agents/tasks?limit=1')).json.tasks).toHaveLength(1);
    for (const bad of ['limit=0', 'limit=501', 'limit=x', 'status=sleeping']) expect((await gw.req('GET', `/api/v1/agents/tasks?${bad}`)).status).toBe(400);
    const d = await gw.req('DELETE', `/api/v1/agents/tasks?id=${run.id}`);
    expect(d.json).toEqual({ id: run.id, deleted: true, cancelledUpstream: true });
    expect(upstream.get(run.externalId)!.status).toBe('canceled');
    expect((await gw.req('DELETE', `/api/v1/agents/tasks/${id}`)).json.cancelledUpstream).toBe(false);
    expect((await gw.req('GET', `/api/v1/agents/tasks/${id}`)).status).toBe(404);
  });

  it('a provider that refuses: 502, and the task is kept as failed; unknown providers and bad bodies are 400', async () => {
    const r = await gw.req('POST', '/api/v1/agents/tasks', { providerId: 'coder', prompt: 'please refuse', source: { repo: 'acme/app' } });
    expect(r.status).toBe(502);
    expect(r.json.error.message).toMatch(/cloud agent provider coder/);
    const failed = (await gw.req('GET', '/api/v1/agents/tasks?status=failed')).json.tasks;
    expect(failed).toHaveLength(1);
    expect(failed[0].error).toMatch(/422|refused/);
    expect((await gw.req('POST', `/api/v1/agents/tasks/${failed[0].id}`, { action: 'cancel' })).status).toBe(409);
    expect((await gw.req('POST', '/api/v1/agents/tasks', { providerId: 'nope', prompt: 'x', source: 'acme/app' })).json.error.message).toMatch(/no cloud agent provider "nope"/);
    expect((await gw.req('POST', '/api/v1/agents/tasks', { providerId: 'coder' })).status).toBe(400);
    expect((await gw.req('POST', '/api/v1/agents/tasks', { providerId: 'coder', prompt: 'no source' })).status).toBe(400);
    expect((await gw.req('POST', `/api/v1/agents/tasks/${failed[0].id}`, { action: 'dance' })).status).toBe(400);
  });

  it('management auth on every method: 401 without it', async () => {
    for (const [method, path] of [['GET', '/api/v1/agents/tasks'], ['POST', '/api/v1/agents/tasks'], ['GET', '/api/v1/agents/tasks/x'], ['POST', '/api/v1/agents/tasks/x'], ['DELETE', '/api/v1/agents/tasks/x'], ['DELETE', '/api/v1/agents/tasks?id=x']] as const) {
      expect((await gw.req(method, path, method === 'POST' ? {} : undefined, {}, { tcp: true })).status, `${method} ${path}`).toBe(401);
      expect((await gw.req(method, path, method === 'POST' ? {} : undefined, { Authorization: 'Bearer sk-plain-key-000000000000000' }, { tcp: true })).status, `${method} ${path} inference key`).toBe(401);
    }
  });
});
