/**
 * The MCP server with the official SDK client: streamable HTTP and SSE transports list and call
 * tools against the gateway's real state; the mcp scope (401/403), 503 when disabled, 400 on a
 * transport mismatch; the audit log; /api/settings switches it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

const MCP_KEY = 'sk-mcp-key-aaaaaaaaaaaaaaaa';
const PLAIN_KEY = 'sk-plain-key-bbbbbbbbbbbbbb';
let mock: MockUpstream;
let gw: GatewayHarness;

beforeAll(async () => {
  mock = await startLlmUpstream({ defaults: { text: 'pong', usage: { input: 7, output: 3 } } });
  gw = await startGateway({
    yaml: `providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1, m2]}
combos:
  - {name: duo, strategy: priority, targets: [oa/m1, oa/m2]}
keys:
  - {name: agent, key: "${MCP_KEY}", models: ["oa/m1"], scopes: [inference, mcp]}
  - {name: plain, key: "${PLAIN_KEY}", models: ["*"]}
settings:
  mcp_enabled: true
`,
  });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

const auth = (key: string) => ({ requestInit: { headers: { Authorization: `Bearer ${key}` } } });
const text = (r: unknown) => ((r as { content: { text: string }[] }).content[0]!.text);

describe('MCP', () => {
  it('streamable HTTP: lists the tools and calls them against real state, as the caller’s key', async () => {
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.tcpUrl}/api/mcp/stream`), auth(MCP_KEY)));
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['list_models', 'list_combos', 'chat_completion', 'usage_summary', 'provider_health', 'cache_stats', 'budget_status', 'web_fetch']));
    expect(tools).not.toContain('web_search'); // no search provider configured

    const combos = JSON.parse(text(await client.callTool({ name: 'list_combos', arguments: {} }))) as { combos: { name: string }[] };
    expect(combos.combos.map((c) => c.name)).toEqual(['duo']);
    const chat = await client.callTool({ name: 'chat_completion', arguments: { model: 'oa/m1', messages: [{ role: 'user', content: 'ping' }] } });
    expect(chat.isError).toBeFalsy();
    expect(JSON.parse(text(chat))).toMatchObject({ model: 'oa/m1', content: 'pong', usage: { prompt_tokens: 7, completion_tokens: 3 } });
    // The key's model allow-list applies.
    const denied = await client.callTool({ name: 'chat_completion', arguments: { model: 'oa/m2', messages: [{ role: 'user', content: 'ping' }] } });
    expect(denied.isError).toBe(true);
    expect(text(denied)).toMatch(/HTTP 403: .*not allowed to use model oa\/m2/);
    const usage = JSON.parse(text(await client.callTool({ name: 'usage_summary', arguments: { days: 1 } }))) as { groupBy: string; history: { group: string; requests: number; tokensIn: number }[] };
    expect(usage.groupBy).toBe('model');
    expect(usage.history.find((h) => h.group === 'm1')).toMatchObject({ requests: 1, tokensIn: 7 });
    expect(JSON.parse(text(await client.callTool({ name: 'provider_health', arguments: {} })))).toBeTypeOf('object');
    // A bad argument is refused by the schema, not run.
    const bad = await client.callTool({ name: 'usage_summary', arguments: { days: 'many' } }).catch((e: Error) => ({ isError: true, content: [{ text: e.message }] }));
    expect(bad.isError).toBe(true);
    await client.close();

    const audit = (await gw.req('GET', '/api/mcp/audit?tool=chat_completion')).json as { entries: { tool: string; success: boolean; apiKeyId: string | null }[]; total: number };
    expect(audit.entries.map((e) => e.success)).toEqual([false, true]);
    expect(audit.entries[0]!.apiKeyId).toBeTruthy();
    expect(((await gw.req('GET', '/api/mcp/audit?success=false')).json as { total: number }).total).toBe(1);
    const stats = (await gw.req('GET', '/api/mcp/audit/stats')).json as { total: number; failed: number; byTool: { tool: string; calls: number }[] };
    expect(stats.byTool.find((t) => t.tool === 'chat_completion')).toMatchObject({ calls: 2 });
  });

  it('SSE transport lists and calls tools', async () => {
    const client = new Client({ name: 'test-sse', version: '1' });
    const transport = new SSEClientTransport(new URL(`${gw.tcpUrl}/api/mcp/sse`), { ...auth(MCP_KEY), eventSourceInit: { fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${MCP_KEY}` } }) } });
    await client.connect(transport);
    expect((await client.listTools()).tools.length).toBeGreaterThan(5);
    const cache = JSON.parse(text(await client.callTool({ name: 'cache_stats', arguments: {} }))) as Record<string, unknown>;
    expect(cache).toHaveProperty('idempotency');
    const status = (await gw.req('GET', '/api/mcp/status')).json as { enabled: boolean; sessions: { sse: number } };
    expect(status).toMatchObject({ enabled: true, sessions: { sse: 1 } });
    await client.close();
  });

  it('401 without a key, 403 without the mcp scope, 400 on a transport mismatch, 503 when disabled', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const h = { Accept: 'application/json, text/event-stream' };
    expect((await gw.req('POST', '/api/mcp/stream', init, h, { tcp: true })).status).toBe(401);
    const forbidden = await gw.req('POST', '/api/mcp/stream', init, { ...h, Authorization: `Bearer ${PLAIN_KEY}` }, { tcp: true });
    expect(forbidden.status).toBe(403);
    expect(forbidden.text).toMatch(/lacks the mcp scope/);
    // An SSE session id sent to the streamable transport.
    const ac = new AbortController();
    const res = await fetch(`${gw.tcpUrl}/api/mcp/sse`, { headers: { Authorization: `Bearer ${MCP_KEY}`, Accept: 'text/event-stream' }, signal: ac.signal });
    const reader = res.body!.getReader();
    let first = '';
    while (!/sessionId=/.test(first)) first += new TextDecoder().decode((await reader.read()).value);
    const sid = /sessionId=([\w-]+)/.exec(first)![1]!;
    const mismatch = await gw.req('POST', '/api/mcp/stream', { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { ...h, Authorization: `Bearer ${MCP_KEY}`, 'mcp-session-id': sid }, { tcp: true });
    expect(mismatch.status).toBe(400);
    expect(mismatch.text).toMatch(/SSE/);
    // Another key may not use the session.
    expect((await gw.req('POST', `/api/mcp/sse?sessionId=${sid}`, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { Authorization: `Bearer ${PLAIN_KEY}` }, { tcp: true })).status).toBe(403);
    ac.abort();

    expect((await gw.req('PATCH', '/api/settings', { mcpEnabled: false })).json).toMatchObject({ mcpEnabled: false, a2aEnabled: false });
    expect((await gw.req('POST', '/api/mcp/stream', init, { ...h, Authorization: `Bearer ${MCP_KEY}` }, { tcp: true })).status).toBe(503);
    expect((await gw.req('PATCH', '/api/settings', { nope: 1 })).status).toBe(400);
    await gw.req('PATCH', '/api/settings', { mcpEnabled: true });
  });
});
