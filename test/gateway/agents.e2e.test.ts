/** Against a real daemon: `ctl gateway mcp` as an MCP stdio server (the official client's StdioClientTransport), and `ctl gateway a2a`. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { CTL, startDaemon, type TestDaemon } from '../helpers/daemon.js';

let mock: MockUpstream;
let d: TestDaemon;

beforeAll(async () => {
  mock = await startLlmUpstream({ defaults: { text: 'from stdio', usage: { input: 4, output: 2 } } });
  d = await startDaemon({ files: { 'gateway.yaml': `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}\nsettings:\n  mcp_enabled: true\n  a2a_enabled: true\n` } });
}, 60_000);
afterAll(async () => {
  await d?.cleanup();
  await mock?.close();
});

describe('ctl gateway mcp (stdio)', () => {
  it('lists and calls tools through the control socket', async () => {
    const client = new Client({ name: 'stdio-test', version: '1' });
    const transport = new StdioClientTransport({ command: process.execPath, args: [CTL, '--state-dir', d.dir, 'gateway', 'mcp'], stderr: 'pipe' });
    await client.connect(transport);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('chat_completion');
    const r = (await client.callTool({ name: 'chat_completion', arguments: { model: 'oa/m1', messages: [{ role: 'user', content: 'hi' }] } })) as { content: { text: string }[] };
    expect(JSON.parse(r.content[0]!.text)).toMatchObject({ content: 'from stdio' });
    await client.close();
    const audit = (await d.request('gateway', 'GET', '/api/mcp/audit')).json as { entries: { tool: string; success: boolean }[] };
    expect(audit.entries[0]).toMatchObject({ tool: 'chat_completion', success: true });
  }, 30_000);
});

describe('ctl gateway a2a', () => {
  it('send prints the answer; tasks, get, cancel; a failed task exits 1', async () => {
    const sent = await d.cli(['gateway', 'a2a', 'send', 'smart-routing', 'say', 'hello']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toBe('from stdio\n');
    const tasks = await d.cli(['gateway', 'a2a', 'tasks']);
    expect(tasks.stdout).toMatch(/smart-routing +completed/);
    const id = (JSON.parse((await d.cli(['gateway', 'a2a', 'tasks', '-o', 'json'])).stdout) as { tasks: { id: string }[] }).tasks[0]!.id;
    expect((await d.cli(['gateway', 'a2a', 'get', id])).stdout).toMatch(/^artifacts: +from stdio$/m);
    expect((await d.cli(['gateway', 'a2a', 'cancel', id])).stdout).toBe(`${id} completed\n`);
    const bad = await d.cli(['gateway', 'a2a', 'send', 'smart-routing', 'x', '--model', 'nope/none']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/failed: nope\/none: HTTP 404/);
    const unknown = await d.cli(['gateway', 'a2a', 'send', 'nope', 'x']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/A2A error -32602: unknown skill/);
  });
});
