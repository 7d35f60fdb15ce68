/**
 * Outbound proxies: real loopback HTTP (CONNECT) and SOCKS5 proxies carry the assigned provider's
 * traffic (counted by the proxies); connection beats provider beats global; a disabled proxy falls
 * through; delete refused while assigned; probes and health; the global proxy setting; secrets never shown.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startConnectProxy, startSocks5Proxy, type FakeProxy } from '../fakes/proxies.js';
import { Egress } from '../../src/egress/index.js';
import { startGateway, type GatewayHarness } from './harness.js';

let mock: MockUpstream;
let gw: GatewayHarness;
let httpProxy: FakeProxy;
let socksProxy: FakeProxy;
let accounts: { id: string; name: string }[] = [];

beforeAll(async () => {
  mock = await startLlmUpstream();
  httpProxy = await startConnectProxy('alice:s3cret-http');
  socksProxy = await startSocks5Proxy('bob:s3cret-socks');
  gw = await startGateway({
    yaml: `providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_keys: [k1, k2], models: [m1]}
  - {id: an, kind: anthropic, base_url: "${mock.baseUrl('anthropic')}", api_key: k, models: [claude]}
`,
  });
  accounts = ((await gw.req('GET', '/api/providers/oa')).json as { accounts: { id: string; name: string }[] }).accounts;
});
afterAll(async () => {
  await gw.close();
  await mock.close();
  await httpProxy.close();
  await socksProxy.close();
});

const chat = (model: string) => gw.req('POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });
const counts = () => [httpProxy.requests, socksProxy.requests];

describe('outbound proxies', () => {
  let httpId = '';
  let socksId = '';

  it('a provider assignment sends that provider, and only it, through an HTTP proxy with credentials', async () => {
    const c = await gw.req('POST', '/api/v1/management/proxies', { name: 'corp', url: httpProxy.url });
    expect(c.status, c.text).toBe(201);
    expect(c.json).toMatchObject({ type: 'http', host: '127.0.0.1', port: httpProxy.port, username: 'alice', hasPassword: true, url: `http://alice:***@127.0.0.1:${httpProxy.port}` });
    expect(c.text).not.toContain('s3cret');
    httpId = c.json.id;
    const a = await gw.req('PUT', '/api/v1/management/proxies/assignments', { scope: 'provider', scope_id: 'oa', proxy_id: httpId });
    expect(a.status, a.text).toBe(200);
    expect(a.json.assignments).toEqual([expect.objectContaining({ scope: 'provider', scopeId: 'oa', proxyId: httpId })]);

    const before = mock.requests.length;
    for (let i = 0; i < 3; i++) expect((await chat('oa/m1')).status).toBe(200);
    expect(httpProxy.requests).toBe(3);
    expect(httpProxy.refusedAuth).toBe(0);
    expect(httpProxy.tunnels.every((t) => t === `127.0.0.1:${mock.port}`)).toBe(true);
    // The other provider goes direct.
    expect((await gw.req('POST', '/v1/messages', { model: 'an/claude', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    expect(counts()).toEqual([3, 0]);
    expect(mock.requests.length - before).toBe(4);
  });

  it('SOCKS5 as the global proxy; the provider assignment still wins for its provider; connection beats both', async () => {
    const c = await gw.req('POST', '/api/v1/management/proxies', { name: 'socks', type: 'socks5', host: '127.0.0.1', port: socksProxy.port, username: 'bob', password: 's3cret-socks' });
    expect(c.status, c.text).toBe(201);
    socksId = c.json.id;
    expect((await gw.req('PUT', '/api/v1/management/proxies/assignments', { scope: 'global', proxy_id: socksId })).status).toBe(200);

    expect((await gw.req('POST', '/v1/messages', { model: 'an/claude', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    expect((await chat('oa/m1')).status).toBe(200);
    expect(counts()).toEqual([4, 1]);
    expect(socksProxy.refusedAuth).toBe(0);

    const r = await gw.req('GET', `/api/v1/management/proxies/assignments?resolve_connection_id=${encodeURIComponent(accounts[0]!.id)}`);
    expect(r.json).toMatchObject({ connectionId: accounts[0]!.id, provider: 'oa', scope: 'provider', scopeId: 'oa', proxy: { id: httpId } });

    // Both of oa's connections to SOCKS: connection beats provider.
    const b = await gw.req('PUT', '/api/v1/management/proxies/bulk-assign', { scope: 'connection', scope_ids: accounts.map((x) => x.id), proxy_id: socksId });
    expect(b.status, b.text).toBe(200);
    expect(b.json.changed).toBe(2);
    for (let i = 0; i < 2; i++) expect((await chat('oa/m1')).status).toBe(200);
    expect(counts()).toEqual([4, 3]);
    expect((await gw.req('GET', `/api/v1/management/proxies/assignments?resolve_connection_id=${encodeURIComponent(accounts[1]!.id)}`)).json).toMatchObject({ scope: 'connection', proxy: { id: socksId } });
    expect((await gw.req('GET', '/api/v1/management/proxies/assignments?scope=connection')).json.assignments).toHaveLength(2);
    expect((await gw.req('GET', `/api/v1/management/proxies/assignments?proxy_id=${httpId}`)).json.assignments).toEqual([expect.objectContaining({ scope: 'provider', scopeId: 'oa', name: 'oa' })]);
  });

  it('a disabled proxy is skipped: the next wider assignment applies', async () => {
    expect((await gw.req('PATCH', `/api/v1/management/proxies?id=${socksId}`, { enabled: false })).status).toBe(200);
    expect((await chat('oa/m1')).status).toBe(200);
    expect(counts()).toEqual([5, 3]);
    expect((await gw.req('PATCH', `/api/v1/management/proxies?id=${socksId}`, { enabled: true })).status).toBe(200);
    expect((await chat('oa/m1')).status).toBe(200);
    expect(counts()).toEqual([5, 4]);
  });

  it('wrong proxy credentials fail the call (502), never a silent direct call', async () => {
    expect((await gw.req('PATCH', `/api/v1/management/proxies?id=${socksId}`, { password: 'wrong' })).status).toBe(200);
    const r = await chat('oa/m1');
    expect(r.status).toBeGreaterThanOrEqual(500);
    expect(socksProxy.refusedAuth).toBeGreaterThan(0);
    expect(counts()).toEqual([5, 4]);
    expect((await gw.req('PATCH', `/api/v1/management/proxies?id=${socksId}`, { password: 's3cret-socks' })).status).toBe(200);
    expect((await chat('oa/m1')).status).toBe(200);
  });

  it('where_used shows the assignment graph; delete is refused while assigned unless force=1', async () => {
    const w = await gw.req('GET', `/api/v1/management/proxies?id=${socksId}&where_used=1`);
    expect(w.json.proxy.whereUsed.map((a: { scope: string }) => a.scope).sort()).toEqual(['connection', 'connection', 'global']);
    const all = await gw.req('GET', '/api/v1/management/proxies?where_used=1');
    expect(all.json.total).toBe(2);
    expect(all.text).not.toContain('s3cret');
    const d = await gw.req('DELETE', `/api/v1/management/proxies?id=${socksId}`);
    expect(d.status).toBe(409);
    expect(d.json.error.message).toMatch(/assigned/);
    const f = await gw.req('DELETE', `/api/v1/management/proxies?id=${socksId}&force=1`);
    expect(f.json).toMatchObject({ deleted: true, detached: 3 });
    expect((await gw.req('GET', '/api/v1/management/proxies/assignments')).json.assignments).toHaveLength(1);
    const before = counts();
    expect((await gw.req('POST', '/v1/messages', { model: 'an/claude', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    expect(counts()).toEqual(before); // global gone: direct again
  });

  it('probes: the test route and the health history; a dead proxy reports its error', async () => {
    const t = await gw.req('POST', '/api/settings/proxy/test', { proxyId: httpId, target: `${mock.baseUrl('openai')}/models` });
    expect(t.status, t.text).toBe(200);
    expect(t.json).toMatchObject({ ok: true, status: 200, target: `${mock.baseUrl('openai')}/models` });
    const dead = await gw.req('POST', '/api/settings/proxy/test', { url: 'http://127.0.0.1:1', target: `${mock.baseUrl('openai')}/models` });
    expect(dead.json).toMatchObject({ ok: false });
    expect(dead.json.error).toMatch(/ECONNREFUSED|connect/i);
    const h = await gw.req('GET', '/api/v1/management/proxies/health?hours=1');
    const mine = h.json.proxies.find((p: { id: string }) => p.id === httpId);
    expect(mine).toMatchObject({ probes: 1, ok: 1, failed: 0, successRate: 1, lastOk: true });
    expect(mine.history[0]).toMatchObject({ ok: true, target: `${mock.baseUrl('openai')}/models` });
    expect(h.json.proxies).toHaveLength(1); // the unsaved URL tried above is not recorded
  });

  it('a proxy that accepts and never answers: the test answers within its 10 s, not ok', async () => {
    const held: Socket[] = [];
    const silent = createServer((c) => void held.push(c));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const port = (silent.address() as AddressInfo).port;
    try {
      for (const target of [`${mock.baseUrl('openai')}/models`, 'https://127.0.0.1:9/x']) {
        const answer = gw.req('POST', '/api/settings/proxy/test', { url: `http://127.0.0.1:${port}`, target });
        const t = await Promise.race([answer, new Promise<'hang'>((r) => setTimeout(() => r('hang'), 20_000).unref())]);
        if (t === 'hang') throw new Error(`no answer within 20 s for target ${target}`);
        expect(t.status, t.text).toBe(200);
        expect(t.json).toMatchObject({ ok: false, error: expect.stringMatching(/no answer within 10000 ms/) });
      }
    } finally {
      for (const c of held) c.destroy();
      silent.close();
    }
  }, 60_000);

  it('the global proxy setting: set by URL, shown masked, disabled, cleared', async () => {
    const p = await gw.req('PUT', '/api/settings/proxy', { url: socksProxy.url });
    expect(p.status, p.text).toBe(200);
    expect(p.json).toMatchObject({ enabled: true, proxy: { id: 'prx_global', type: 'socks5', username: 'bob', hasPassword: true } });
    expect(p.text).not.toContain('s3cret');
    const before = counts();
    expect((await gw.req('POST', '/v1/messages', { model: 'an/claude', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    expect(counts()).toEqual([before[0], before[1]! + 1]);
    expect((await gw.req('PUT', '/api/settings/proxy', { enabled: false })).json).toMatchObject({ enabled: false });
    expect((await gw.req('PUT', '/api/settings/proxy', { url: null })).json).toEqual({ enabled: false, proxy: null });
    const audit = await gw.req('GET', '/api/compliance/audit-log?path=/api/settings/proxy');
    expect(audit.json.total).toBeGreaterThanOrEqual(3);
    expect(audit.text).not.toContain('s3cret');
  });

  it('bad input is a 400 naming the problem', async () => {
    const cases: [string, string, unknown, RegExp][] = [
      ['POST', '/api/v1/management/proxies', { url: 'ftp://127.0.0.1:21' }, /unsupported proxy scheme/],
      ['POST', '/api/v1/management/proxies', { url: 'http://127.0.0.1:8080', host: 'x' }, /not both/],
      ['POST', '/api/v1/management/proxies', { type: 'socks5' }, /host is required/],
      ['POST', '/api/v1/management/proxies', { url: 'http://127.0.0.1:99999' }, /proxy URL/],
      ['PATCH', '/api/v1/management/proxies', { enabled: false }, /id is required/],
      ['PUT', '/api/v1/management/proxies/assignments', { scope: 'provider', scope_id: 'nope', proxy_id: httpId }, /no provider "nope"/],
      ['PUT', '/api/v1/management/proxies/assignments', { scope: 'connection', proxy_id: httpId }, /needs scope_id/],
      ['PUT', '/api/v1/management/proxies/assignments', { scope: 'planet', proxy_id: httpId }, /scope/],
      ['POST', '/api/settings/proxy/test', { proxyId: httpId, target: 'file:///etc/passwd' }, /target must be an http/],
    ];
    for (const [method, path, body, msg] of cases) {
      const r = await gw.req(method, path, body);
      expect(r.status, `${method} ${path} ${JSON.stringify(body)}: ${r.text}`).toBe(400);
      expect(r.json.error.message).toMatch(msg);
    }
    expect((await gw.req('PUT', '/api/v1/management/proxies/assignments', { scope: 'provider', scope_id: 'oa', proxy_id: 'prx_none' })).status).toBe(404);
    expect((await gw.req('GET', '/api/v1/management/proxies?id=prx_none')).status).toBe(404);
  });
});

describe('egress through proxies', () => {
  it('in loopback-only mode a destination outside loopback is refused before the proxy sees it', async () => {
    const proxy = await startConnectProxy();
    const egress = new Egress({ loopbackOnly: true });
    try {
      await expect(egress.request('http://203.0.113.9:8080/x', { method: 'GET' }, egress.proxied(proxy.url, 4))).rejects.toThrow(/egress refused/);
      expect(proxy.tunnels).toEqual([]);
    } finally {
      await egress.close();
      await proxy.close();
    }
  });
});
