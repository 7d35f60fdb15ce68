/**
 * General settings (/api/settings and its parts): precedence, validation, require-login, the IP
 * filter through real sockets (IPv4 and IPv6 loopback), the global system prompt, the thinking
 * budget, and purging the request history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createDispatcher } from '../../src/http/dispatch.js';
import { ClientIpResolver } from '../../src/http/client-ip.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let mock: MockUpstream;
let gw: GatewayHarness;
let v6: Server;
let v6Url = '';

beforeAll(async () => {
  mock = await startLlmUpstream();
  gw = await startGateway({
    yaml: `providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}
  - {id: an, kind: anthropic, base_url: "${mock.baseUrl('anthropic')}", api_key: k, models: [claude]}
settings:
  system_prompt: {enabled: true, prompt: "Answer in English.", position: prepend}
`,
  });
  // The gateway's TCP dispatcher on IPv6 loopback too.
  const ips = new ClientIpResolver();
  v6 = createServer(createDispatcher({ target: () => gw.instance, listener: 'gateway', viaSocket: false, ips: () => ips, log: pino({ level: 'silent' }) }));
  await new Promise<void>((r) => v6.listen(0, '::1', () => r()));
  v6Url = `http://[::1]:${(v6.address() as AddressInfo).port}`;
});
afterAll(async () => {
  v6.closeAllConnections();
  await new Promise((r) => v6.close(r));
  await gw.close();
  await mock.close();
});

describe('settings', () => {
  it('GET shows every setting with the file layer; PATCH changes the fields given; unknown fields are 400', async () => {
    const s = (await gw.req('GET', '/api/settings')).json as Record<string, unknown>;
    expect(s).toMatchObject({ requireLogin: true, mcpEnabled: false, a2aEnabled: false, systemPrompt: { enabled: true, prompt: 'Answer in English.', position: 'prepend' }, thinkingBudget: { mode: 'passthrough' }, ipFilter: { enabled: false } });
    expect((await gw.req('PATCH', '/api/settings', { a2aEnabled: true })).json).toMatchObject({ a2aEnabled: true, mcpEnabled: false });
    expect((await gw.req('PATCH', '/api/settings', { bogus: 1 })).status).toBe(400);
    expect((await gw.req('PUT', '/api/settings/ip-filter', { enabled: true, deny: ['not-an-ip'] })).status).toBe(400);
    await gw.req('PATCH', '/api/settings', { a2aEnabled: false });
  });

  it('require-login off opens management on the TCP listener; on, it needs a login', async () => {
    expect((await gw.req('GET', '/api/settings', undefined, {}, { tcp: true })).status).toBe(401);
    expect((await gw.req('PUT', '/api/settings/require-login', { requireLogin: false })).json).toEqual({ requireLogin: false });
    expect((await gw.req('GET', '/api/settings', undefined, {}, { tcp: true })).status).toBe(200);
    expect((await gw.req('PUT', '/api/settings/require-login', { requireLogin: true })).json).toEqual({ requireLogin: true });
    expect((await gw.req('GET', '/api/settings', undefined, {}, { tcp: true })).status).toBe(401);
    expect((await gw.req('PUT', '/api/settings/require-login', { requireLogin: 'no' })).status).toBe(400);
  });

  it('the IP filter: deny wins, an allow list admits only what it names, IPv4 and IPv6; the control socket is never filtered', async () => {
    const models = async (base: string) => (await fetch(`${base}/v1/models`)).status;
    expect(await models(gw.tcpUrl)).toBe(200);
    expect(await models(v6Url)).toBe(200);
    await gw.req('PUT', '/api/settings/ip-filter', { enabled: true, deny: ['127.0.0.0/8'] });
    const refused = await fetch(`${gw.tcpUrl}/v1/models`);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: 'ip_not_allowed' } });
    expect(await models(v6Url)).toBe(200);
    await gw.req('PUT', '/api/settings/ip-filter', { enabled: true, deny: [], allow: ['::1/128'] });
    expect(await models(gw.tcpUrl)).toBe(403);
    expect(await models(v6Url)).toBe(200);
    await gw.req('PUT', '/api/settings/ip-filter', { allow: ['10.0.0.0/8', '127.0.0.1'] });
    expect(await models(gw.tcpUrl)).toBe(200);
    expect(await models(v6Url)).toBe(403);
    expect((await gw.req('GET', '/api/settings/ip-filter')).status).toBe(200); // the trusted listener
    await gw.req('PUT', '/api/settings/ip-filter', { enabled: false, allow: [], deny: [] });
    expect(await models(v6Url)).toBe(200);
  });

  it('the global system prompt goes before the client’s; the thinking budget is fixed or capped', async () => {
    mock.requests.length = 0;
    await gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] });
    expect((mock.requests[0]!.body as { messages: { role: string; content: string }[] }).messages[0]).toEqual({ role: 'system', content: 'Answer in English.\n\nBe brief.' });
    await gw.req('PUT', '/api/settings/system-prompt', { position: 'append' });
    await gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] });
    expect((mock.requests[1]!.body as { messages: { content: string }[] }).messages[0]!.content).toBe('Be brief.\n\nAnswer in English.');
    await gw.req('PUT', '/api/settings/system-prompt', { enabled: false });

    const think = async (budget: number) => {
      mock.requests.length = 0;
      await gw.req('POST', '/v1/messages', { model: 'an/claude', max_tokens: 40000, thinking: { type: 'enabled', budget_tokens: budget }, messages: [{ role: 'user', content: 'think' }] });
      return (mock.requests[0]!.body as { thinking?: { budget_tokens: number } }).thinking?.budget_tokens;
    };
    expect(await think(30000)).toBe(30000);
    await gw.req('PUT', '/api/settings/thinking-budget', { mode: 'cap', tokens: 4096 });
    expect(await think(30000)).toBe(4096);
    expect(await think(2048)).toBe(2048);
    await gw.req('PUT', '/api/settings/thinking-budget', { mode: 'fixed', tokens: 16000 });
    expect(await think(2048)).toBe(16000);
    await gw.req('PUT', '/api/settings/thinking-budget', { mode: 'passthrough' });
  });

  it('purge-request-history deletes the request log (optionally only older rows)', async () => {
    const count = async () => ((await gw.req('GET', '/api/usage/request-logs?limit=1')).json as { total: number }).total;
    expect(await count()).toBeGreaterThan(0);
    expect(((await gw.req('POST', '/api/settings/purge-request-history', { olderThan: '2000-01-01T00:00:00Z' })).json as { requestLogs: number }).requestLogs).toBe(0);
    const before = await count();
    expect((await gw.req('POST', '/api/settings/purge-request-history')).json).toMatchObject({ success: true, requestLogs: before });
    expect(await count()).toBe(0);
    expect((await gw.req('POST', '/api/settings/purge-request-history', { olderThan: 'yesterday-ish' })).status).toBe(400);
  });
});
