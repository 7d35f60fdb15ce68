/**
 * A2A once the gateway has API keys: /a2a and the REST helpers take a Bearer API key like the /v1
 * routes (401 without one, or with a wrong one), and each caller sees, reads and cancels only the
 * tasks it created; the control socket sees them all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let mock: MockUpstream;
let gw: GatewayHarness;
const ALICE = 'sk-alice-a2a-key-0001';
const BOB = 'sk-bob-a2a-key-00002';
const as = (key: string) => ({ Authorization: `Bearer ${key}` });

beforeAll(async () => {
  mock = await startLlmUpstream({ defaults: { text: 'routed answer', usage: { input: 5, output: 2 } } });
  gw = await startGateway({
    yaml: `providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}
keys:
  - {name: alice, key: "${ALICE}", models: ["*"]}
  - {name: bob, key: "${BOB}", models: ["*"]}
settings:
  a2a_enabled: true
`,
  });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

const send = (headers: Record<string, string>, content = 'health?') =>
  gw.req('POST', '/a2a', { jsonrpc: '2.0', id: 1, method: 'message/send', params: { skill: 'health-report', messages: [{ role: 'user', content }] } }, headers, { tcp: true });
const rpc = (headers: Record<string, string>, method: string, params: unknown) => gw.req('POST', '/a2a', { jsonrpc: '2.0', id: 2, method, params }, headers, { tcp: true });
type Sent = { result: { task: { id: string; state: string } } };

describe('A2A with API keys', () => {
  it('takes a Bearer key like /v1: 401 without one or with a wrong one, over JSON-RPC and REST', async () => {
    const none = await send({});
    expect(none.status).toBe(401);
    expect(none.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, message: expect.stringMatching(/unauthorized/) } });
    expect((await send(as('sk-not-a-key'))).status).toBe(401);
    for (const path of ['/api/a2a/tasks', '/api/a2a/status', '/api/a2a/tasks/x']) {
      const r = await gw.req('GET', path, undefined, {}, { tcp: true });
      expect(r.status, path).toBe(401);
      expect(r.json, path).toMatchObject({ error: { code: 'missing_api_key' } });
    }
    expect((await gw.req('GET', '/.well-known/agent.json', undefined, {}, { tcp: true })).json).toMatchObject({ authentication: { schemes: ['bearer'] } });
  });

  it('a caller sees, reads and cancels only its own tasks; the control socket sees all', async () => {
    const a = (await send(as(ALICE))).json as Sent;
    const b = (await send(as(BOB))).json as Sent;
    expect(a.result.task.state).toBe('completed');
    expect(b.result.task.state).toBe('completed');

    const listOf = async (key: string) => ((await gw.req('GET', '/api/a2a/tasks', undefined, as(key), { tcp: true })).json as { tasks: { id: string }[]; total: number });
    expect((await listOf(ALICE)).tasks.map((t) => t.id)).toEqual([a.result.task.id]);
    expect((await listOf(BOB)).tasks.map((t) => t.id)).toEqual([b.result.task.id]);
    expect((await listOf(ALICE)).total).toBe(1);
    expect(((await gw.req('GET', '/api/a2a/status', undefined, as(BOB), { tcp: true })).json as { tasks: Record<string, number> }).tasks.completed).toBe(1);

    // Another caller's task is as good as missing, over REST and JSON-RPC.
    expect((await gw.req('GET', `/api/a2a/tasks/${a.result.task.id}`, undefined, as(BOB), { tcp: true })).status).toBe(404);
    expect((await gw.req('POST', `/api/a2a/tasks/${a.result.task.id}/cancel`, undefined, as(BOB), { tcp: true })).status).toBe(404);
    expect((await rpc(as(BOB), 'tasks/get', { taskId: a.result.task.id })).json).toMatchObject({ error: { code: -32602 } });
    expect((await rpc(as(BOB), 'tasks/cancel', { taskId: a.result.task.id })).json).toMatchObject({ error: { code: -32602 } });
    expect((await rpc(as(ALICE), 'tasks/get', { taskId: a.result.task.id })).json).toMatchObject({ result: { id: a.result.task.id, state: 'completed' } });
    expect((await gw.req('GET', `/api/a2a/tasks/${b.result.task.id}`, undefined, as(BOB), { tcp: true })).status).toBe(200);

    const all = (await gw.req('GET', '/api/a2a/tasks')).json as { tasks: { id: string }[] };
    expect(all.tasks.map((t) => t.id).sort()).toEqual([a.result.task.id, b.result.task.id].sort());
  });
});
