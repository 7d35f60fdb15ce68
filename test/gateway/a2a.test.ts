/**
 * A2A: JSON-RPC message/send with every built-in skill answering from real state (smart-routing
 * through routing), message/stream as SSE, tasks/get and tasks/cancel, JSON-RPC errors, the agent
 * card, the REST helpers, GATEWAY_API_KEY, and 503 when disabled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let mock: MockUpstream;
let gw: GatewayHarness;
const SECRET = 'a2a-secret-token';
const B = { Authorization: `Bearer ${SECRET}` };

beforeAll(async () => {
  mock = await startLlmUpstream({ defaults: { text: 'routed answer', usage: { input: 5, output: 2 } } });
  gw = await startGateway({
    env: { GATEWAY_API_KEY: SECRET },
    yaml: `providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}
pricing:
  oa/m1: {input: 1000, output: 1000}
settings:
  a2a_enabled: true
`,
  });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

const rpc = (method: string, params: unknown, headers: Record<string, string> = B, id: unknown = 1) => gw.req('POST', '/a2a', { jsonrpc: '2.0', id, method, params }, headers, { tcp: true });
type Result = { result: { task: { id: string; state: string; skill: string }; artifacts: { type: string; text?: string; data?: unknown }[]; metadata: Record<string, unknown> } };

describe('A2A', () => {
  it('message/send runs each built-in skill against real state', async () => {
    mock.requests.length = 0;
    const routed = (await rpc('message/send', { skill: 'smart-routing', messages: [{ role: 'user', content: 'hello' }] })).json as Result;
    expect(routed.result.task.state).toBe('completed');
    expect(routed.result.artifacts[0]).toEqual({ type: 'text', text: 'routed answer' });
    expect(routed.result.metadata).toMatchObject({ model: 'oa/m1', usage: { prompt_tokens: 5 } });
    expect((mock.requests[0]!.body as { messages: { content: string }[] }).messages.at(-1)!.content).toBe('hello');

    const providers = (await rpc('message/send', { skill: 'provider-discovery', messages: [{ role: 'user', content: 'which providers?' }] })).json as Result;
    expect(providers.result.artifacts[0]!.text).toBe('oa (openai): m1');
    const cost = (await rpc('message/send', { skill: 'cost-analysis', messages: [{ role: 'user', content: 'costs of the last 3 days' }] })).json as Result;
    expect(cost.result.metadata.days).toBe(3);
    expect(cost.result.artifacts[0]!.text).toMatch(/^Last 3 day\(s\): 1 requests, \$0\.0070; by cost: m1 \$0\.0070 \(1\)\.$/);
    const health = (await rpc('message/send', { skill: 'health-report', messages: [{ role: 'user', content: 'health?' }] })).json as Result;
    expect(health.result.artifacts[0]!.text).toBe('Status healthy: 1 of 1 provider(s) taking traffic.');
    const quota = (await rpc('message/send', { skill: 'quota-management', messages: [{ role: 'user', content: 'quotas?' }] })).json as Result;
    expect(quota.result.artifacts[1]!.data).toHaveProperty('budgets');

    // A skill that fails ends its task failed, with the reason.
    const failed = (await rpc('message/send', { skill: 'smart-routing', messages: [{ role: 'user', content: 'x' }], metadata: { model: 'nope/none' } })).json as Result & { result: { task: { error: string } } };
    expect(failed.result.task).toMatchObject({ state: 'failed', error: expect.stringMatching(/nope\/none: HTTP 404/) });

    const got = (await rpc('tasks/get', { taskId: routed.result.task.id })).json as { result: { state: string; artifacts: unknown[] } };
    expect(got.result).toMatchObject({ state: 'completed', artifacts: [{ type: 'text', text: 'routed answer' }] });
    const list = (await gw.req('GET', '/api/a2a/tasks?skill=smart-routing', undefined, B, { tcp: true })).json as { tasks: { state: string }[]; total: number };
    expect(list.tasks.map((t) => t.state)).toEqual(['failed', 'completed']);
    expect(((await gw.req('GET', '/api/a2a/tasks?state=failed', undefined, B, { tcp: true })).json as { total: number }).total).toBe(1);
    expect((await gw.req('GET', '/api/a2a/tasks?limit=201', undefined, B, { tcp: true })).status).toBe(400);
    expect((await gw.req('GET', `/api/a2a/tasks/${routed.result.task.id}`, undefined, B, { tcp: true })).json).toMatchObject({ skill: 'smart-routing' });
    expect(((await gw.req('GET', '/api/a2a/status', undefined, B, { tcp: true })).json as { tasks: Record<string, number> }).tasks).toMatchObject({ completed: 5, failed: 1 });
  });

  it('message/stream sends state changes, the artifact, and a final status as SSE; a running task can be cancelled', async () => {
    const r = await gw.req('POST', '/a2a', { jsonrpc: '2.0', id: 'abc', method: 'message/stream', params: { skill: 'smart-routing', messages: [{ role: 'user', content: 'stream me' }] } }, B, { tcp: true });
    expect(r.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = r.text.split('\n\n').filter(Boolean).map((e) => JSON.parse(e.replace(/^data: /, '')) as { id: string; result: { kind: string; state?: string; final?: boolean; artifact?: unknown } });
    expect(events.every((e) => e.id === 'abc')).toBe(true);
    expect(events.map((e) => `${e.result.kind}:${e.result.state ?? ''}`)).toEqual(['status:submitted', 'status:working', 'artifact:', 'status:completed']);
    expect(events[2]!.result.artifact).toEqual({ type: 'text', text: 'routed answer' });
    expect(events[3]!.result.final).toBe(true);

    // Slow upstream: cancel while it works; the late answer does not overwrite the cancel.
    mock.enqueue({ latencyMs: 400, text: 'too late' });
    const sending = rpc('message/send', { skill: 'smart-routing', messages: [{ role: 'user', content: 'slow' }] });
    let id = '';
    for (let i = 0; i < 50 && !id; i++) {
      await new Promise((res) => setTimeout(res, 20));
      const working = (await gw.req('GET', '/api/a2a/tasks?state=working', undefined, B, { tcp: true })).json as { tasks: { id: string }[] };
      id = working.tasks[0]?.id ?? '';
    }
    expect((await rpc('tasks/cancel', { taskId: id })).json).toMatchObject({ result: { id, state: 'cancelled' } });
    expect(((await sending).json as Result).result.task.state).toBe('cancelled');
    expect((await gw.req('POST', `/api/a2a/tasks/${id}/cancel`, undefined, B, { tcp: true })).json).toMatchObject({ state: 'cancelled' });
  });

  it('JSON-RPC errors: parse, invalid request, unknown method, bad params; 401 without the key; 503 when disabled', async () => {
    const raw = await fetch(`${gw.tcpUrl}/a2a`, { method: 'POST', headers: { ...B, 'content-type': 'application/json' }, body: '{nope' });
    expect(await raw.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    expect((await gw.req('POST', '/a2a', [1, 2], B, { tcp: true })).json).toMatchObject({ error: { code: -32600 } });
    expect((await gw.req('POST', '/a2a', { jsonrpc: '1.0', id: 4, method: 'x' }, B, { tcp: true })).json).toMatchObject({ id: 4, error: { code: -32600 } });
    expect((await rpc('tasks/list', {}, B, 5)).json).toMatchObject({ id: 5, error: { code: -32601 } });
    expect((await rpc('message/send', { skill: 'nope', messages: [{ role: 'user', content: 'x' }] })).json).toMatchObject({ error: { code: -32602, message: expect.stringMatching(/unknown skill/) } });
    expect((await rpc('message/send', { skill: 'health-report', messages: [] })).json).toMatchObject({ error: { code: -32602 } });
    expect((await rpc('tasks/get', { taskId: 'missing' })).json).toMatchObject({ error: { code: -32602 } });
    const unauth = await rpc('message/send', { skill: 'health-report', messages: [{ role: 'user', content: 'x' }] }, {});
    expect(unauth.status).toBe(401);
    expect(unauth.json).toMatchObject({ error: { code: -32600 } });
    expect((await gw.req('GET', '/api/a2a/tasks', undefined, {}, { tcp: true })).status).toBe(401);

    const card = await gw.req('GET', '/.well-known/agent.json', undefined, {}, { tcp: true });
    expect(card.headers['cache-control']).toBe('public, max-age=3600');
    expect((card.json as { skills: { id: string }[] }).skills.map((s) => s.id)).toEqual(['smart-routing', 'quota-management', 'provider-discovery', 'cost-analysis', 'health-report']);

    await gw.req('PATCH', '/api/settings', { a2aEnabled: false });
    const off = await rpc('message/send', { skill: 'health-report', messages: [{ role: 'user', content: 'x' }] });
    expect(off.status).toBe(503);
    expect(off.json).toMatchObject({ error: { code: -32000 } });
    expect((await gw.req('GET', '/api/a2a/status', undefined, B, { tcp: true })).status).toBe(503);
    await gw.req('PATCH', '/api/settings', { a2aEnabled: true });
  });
});
