import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type GatewayHarness } from './harness.js';

let gw: GatewayHarness;

const YAML = `
providers:
  - {id: local, kind: openai, base_url: "http://127.0.0.1:9/v1", api_key: "sk-local-secret-123456", models: [m1, m2]}
aliases: {fast: local/m1}
combos:
  - {name: smart, strategy: priority, targets: [local/m2, local/m1]}
keys:
  - {name: ci, key: "sk-gw-ci-key-000000", models: ["*"]}
  - {name: admin, key: "sk-gw-admin-key-0000", scopes: [management]}
pricing:
  local/m1: {input: 0.15, output: 0.60}
`;

beforeEach(async () => {
  gw = await startGateway({ yaml: YAML, env: { INITIAL_PASSWORD: 'hunter2-initial' } });
});
afterEach(async () => {
  await gw.close();
});

describe('providers', () => {
  it('lists gateway.yaml providers with secrets masked, and refuses to edit them', async () => {
    const r = await gw.req('GET', '/api/providers');
    expect(r.status).toBe(200);
    expect(r.headers['x-gateway-version']).toBe('0.1.0-test');
    const local = r.json.providers.find((p: any) => p.id === 'local');
    expect(local.source).toBe('file');
    expect(local.accounts[0].apiKey).toBe('sk-l…3456');
    expect(r.text).not.toContain('sk-local-secret-123456');
    expect(local.models.map((m: any) => m.id)).toEqual(['m1', 'm2']);
    const put = await gw.req('PUT', '/api/providers/local', { name: 'x' });
    expect(put.status).toBe(409);
    expect(put.json.error.message).toMatch(/gateway.yaml/);
  });

  it('creates, reads, updates and deletes a provider', async () => {
    const c = await gw.req('POST', '/api/providers', {
      id: 'oa',
      kind: 'openai',
      base_url: 'http://127.0.0.1:9/v1',
      api_key: 'sk-abcdefghijklmnop',
      models: ['gpt-x', { id: 'emb', type: 'embedding' }],
    });
    expect(c.status).toBe(201);
    expect(c.json.baseUrl).toBe('http://127.0.0.1:9/v1');
    expect(c.json.accounts[0].apiKey).toBe('sk-a…mnop');
    expect(c.json.models).toHaveLength(2);
    const dup = await gw.req('POST', '/api/providers', { id: 'oa', kind: 'openai' });
    expect(dup.status).toBe(409);
    const bad = await gw.req('POST', '/api/providers', { id: 'x/y', kind: 'openai' });
    expect(bad.status).toBe(400);
    const badKind = await gw.req('POST', '/api/providers', { id: 'z', kind: 'nope' });
    expect(badKind.status).toBe(400);
    expect(badKind.json.error.message).toMatch(/unknown provider kind/);
    const upd = await gw.req('PATCH', '/api/providers/oa', { enabled: false, accounts: [{ id: c.json.accounts[0].id, name: 'renamed' }] });
    expect(upd.status).toBe(200);
    expect(upd.json.enabled).toBe(false);
    expect(upd.json.accounts[0]).toMatchObject({ name: 'renamed', apiKey: 'sk-a…mnop' });
    const got = await gw.req('GET', '/api/providers/oa');
    expect(got.json.enabled).toBe(false);
    const del = await gw.req('DELETE', '/api/providers/oa');
    expect(del.status).toBe(200);
    expect((await gw.req('GET', '/api/providers/oa')).status).toBe(404);
    expect((await gw.req('DELETE', '/api/providers/oa')).status).toBe(404);
  });

  it('bulk-adds keys with per-row results', async () => {
    await gw.req('POST', '/api/providers', { id: 'oa', kind: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-first-000000000' });
    const r = await gw.req('POST', '/api/providers/bulk', { provider: 'oa', apiKeys: ['sk-first-000000000', 'sk-second-00000000', '', 'sk-second-00000000', 5] });
    expect(r.status).toBe(200);
    expect(r.json.added).toBe(1);
    expect(r.json.results.map((x: any) => x.status)).toEqual(['duplicate', 'added', 'skipped', 'duplicate', 'invalid']);
    const p = await gw.req('GET', '/api/providers/oa');
    expect(p.json.accounts).toHaveLength(2);
  });

  it('imports JSON and CSV with per-row partial failures', async () => {
    const r = await gw.req('POST', '/api/providers/import', {
      providers: [
        { id: 'a1', kind: 'anthropic', api_key: 'sk-ant-xxxxxxxxxxxx' },
        { id: 'local', kind: 'openai' },
        { id: 'bad id', kind: 'openai' },
        { id: 'g1', kind: 'gemini', models: ['gemini-2.5-flash'] },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ total: 4, created: 2, failed: 2 });
    expect(r.json.results[1]).toMatchObject({ row: 1, status: 'error', code: 409 });
    expect(r.json.results[2]).toMatchObject({ row: 2, status: 'error', code: 400 });
    const csv = 'id,kind,base_url,api_key,models\nol,ollama,http://127.0.0.1:11434,,llama3;qwen3\nzz,unknown,,,\n';
    const c = await gw.req('POST', '/api/providers/import', csv, { 'content-type': 'text/csv' });
    expect(c.status).toBe(200);
    expect(c.json).toMatchObject({ total: 2, created: 1, failed: 1 });
    const ol = await gw.req('GET', '/api/providers/ol');
    expect(ol.json.models.map((m: any) => m.id)).toEqual(['llama3', 'qwen3']);
    // upsert updates instead of failing
    const u = await gw.req('POST', '/api/providers/import?upsert=true', [{ id: 'ol', kind: 'ollama', name: 'Local Ollama' }]);
    expect(u.json).toMatchObject({ updated: 1, failed: 0 });
  });

  it('validates without saving', async () => {
    const r = await gw.req('POST', '/api/providers/validate', { kind: 'openai', base_url: 'http://127.0.0.1:9/v1', test: false });
    expect(r.status).toBe(200);
    expect(r.json.valid).toBe(true);
    expect((await gw.req('GET', '/api/providers/validate')).status).toBe(404);
    const bad = await gw.req('POST', '/api/providers/validate', { kind: 'openai', base_url: 'ftp://x' });
    expect(bad.status).toBe(400);
  });
});

describe('models, aliases, pricing, catalog', () => {
  it('manages custom models', async () => {
    const c = await gw.req('POST', '/api/provider-models', { provider: 'local', model: 'm3', thinking: true, thinkingDisable: true });
    expect(c.status).toBe(201);
    const hide = await gw.req('PATCH', '/api/provider-models', { provider: 'local', model: 'm1', hidden: true });
    expect(hide.status).toBe(200);
    expect(hide.json.hidden).toBe(true);
    const list = await gw.req('GET', '/api/provider-models?provider=local');
    expect(list.json.models.map((m: any) => m.id)).toEqual(['m1', 'm2', 'm3']);
    const v1 = await gw.req('GET', '/v1/models');
    const ids = v1.json.data.map((m: any) => m.id);
    expect(ids).not.toContain('local/m1');
    expect(ids).toContain('local/m3');
    expect(ids).toContain('smart');
    const del = await gw.req('DELETE', '/api/provider-models?provider=local&model=m3');
    expect(del.status).toBe(200);
    expect((await gw.req('DELETE', '/api/provider-models?provider=local&model=m3')).status).toBe(404);
  });

  it('manages aliases', async () => {
    const a = await gw.req('POST', '/api/models/alias', { alias: 'quick', model: 'local/m2' });
    expect(a.status).toBe(201);
    expect(a.json.aliases).toEqual({ fast: 'local/m1', quick: 'local/m2' });
    expect((await gw.req('POST', '/api/models/alias', { alias: 'fast', model: 'local/m2' })).status).toBe(409);
    expect((await gw.req('POST', '/api/models/alias', { alias: 'a/b', model: 'local/m2' })).status).toBe(400);
    expect((await gw.req('DELETE', '/api/models/alias?alias=quick')).status).toBe(200);
    expect((await gw.req('GET', '/api/models/alias')).json.aliases).toEqual({ fast: 'local/m1' });
  });

  it('edits pricing; overrides win over the file', async () => {
    const g = await gw.req('GET', '/api/pricing?model=local/m1');
    expect(g.json.pricing).toEqual([{ model: 'local/m1', input: 0.15, output: 0.6, cached: null, source: 'file' }]);
    const p = await gw.req('PUT', '/api/pricing', { model: 'local/m1', input: 1, output: 2, cached: 0.5 });
    expect(p.status).toBe(200);
    expect(p.json.pricing[0]).toMatchObject({ input: 1, source: 'api' });
    const bad = await gw.req('PUT', '/api/pricing', { model: 'local/m1', input: -1 });
    expect(bad.status).toBe(400);
    // Media prices: per image (by size/quality, size or default), second, character, search unit, request.
    const media = await gw.req('PUT', '/api/pricing', { model: 'local/img', per_image: { '1024x1024/hd': 0.08, low_res: 0.01, default: 0.04 }, per_request: 0.001 });
    expect(media.status, media.text).toBe(200);
    const back = await gw.req('GET', '/api/pricing?model=local/img');
    expect(back.json.pricing[0]).toMatchObject({ per_image: { '1024x1024/hd': 0.08, low_res: 0.01, default: 0.04 }, per_request: 0.001, source: 'api' });
    expect((await gw.req('PUT', '/api/pricing', { model: 'local/img', per_image: { default: -1 } })).status).toBe(400);
    expect((await gw.req('PUT', '/api/pricing', { model: 'local/img', per_minute: 1 })).status).toBe(400);
    expect((await gw.req('DELETE', '/api/pricing?model=local/m1')).status).toBe(200);
    expect((await gw.req('GET', '/api/pricing?model=local/m1')).json.pricing[0].source).toBe('file');
  });

  it('shows the catalog by provider and type', async () => {
    const r = await gw.req('GET', '/api/models/catalog');
    const local = r.json.providers.find((p: any) => p.id === 'local');
    expect(local.models.chat.map((m: any) => m.id)).toEqual(['local/m1', 'local/m2']);
    expect(local.models.chat[0].pricing).toEqual({ input: 0.15, output: 0.6, cached: null });
    expect(r.json.combos[0].name).toBe('smart');
    expect(r.json.aliases).toEqual({ fast: 'local/m1' });
  });
});

describe('combos and mappings', () => {
  it('creates, updates and deletes combos with checked targets', async () => {
    const c = await gw.req('POST', '/api/combos', { name: 'cheap', strategy: 'cost-optimized', targets: ['local/m1', { model: 'fast', weight: 2 }] });
    expect(c.status).toBe(201);
    expect(c.json.id).toMatch(/^cmb_/);
    expect((await gw.req('POST', '/api/combos', { name: 'cheap', targets: ['local/m1'] })).status).toBe(409);
    expect((await gw.req('POST', '/api/combos', { name: 'x', targets: ['nope/m1'] })).status).toBe(400);
    expect((await gw.req('POST', '/api/combos', { name: 'x', targets: ['smart'] })).status).toBe(400);
    expect((await gw.req('POST', '/api/combos', { name: 'x', strategy: 'bogus', targets: ['local/m1'] })).status).toBe(400);
    const u = await gw.req('PATCH', `/api/combos/cheap`, { strategy: 'round-robin' });
    expect(u.json.strategy).toBe('round-robin');
    expect((await gw.req('GET', `/api/combos/${c.json.id}`)).json.name).toBe('cheap');
    expect((await gw.req('PUT', '/api/combos/smart', { strategy: 'random' })).status).toBe(409);
    const m = await gw.req('GET', '/api/combos/metrics');
    expect(m.json.combos.map((x: any) => x.name).sort()).toEqual(['cheap', 'smart']);
    expect((await gw.req('DELETE', '/api/combos/cheap')).status).toBe(200);
    expect((await gw.req('GET', '/api/combos/cheap')).status).toBe(404);
  });

  it('manages model-combo mappings', async () => {
    const m = await gw.req('POST', '/api/model-combo-mappings', { pattern: 'gpt-4*', comboId: 'smart', priority: 5 });
    expect(m.status).toBe(201);
    expect(m.json).toMatchObject({ pattern: 'gpt-4*', comboId: 'file:smart', comboName: 'smart', priority: 5, enabled: true });
    expect((await gw.req('POST', '/api/model-combo-mappings', { pattern: 'x', comboId: 'nope' })).status).toBe(400);
    const u = await gw.req('PUT', `/api/model-combo-mappings/${m.json.id}`, { enabled: false });
    expect(u.json.enabled).toBe(false);
    expect((await gw.req('GET', '/api/model-combo-mappings')).json.mappings).toHaveLength(1);
    expect((await gw.req('DELETE', `/api/model-combo-mappings/${m.json.id}`)).status).toBe(200);
    expect((await gw.req('GET', `/api/model-combo-mappings/${m.json.id}`)).status).toBe(404);
  });
});

describe('keys and auth', () => {
  it('shows a raw key once and stores only its hash', async () => {
    const c = await gw.req('POST', '/api/keys', { name: 'app', models: ['local/*'] });
    expect(c.status).toBe(201);
    expect(c.json.key).toMatch(/^sk-gw-[A-Za-z0-9_-]{32}$/);
    const list = await gw.req('GET', '/api/keys');
    expect(list.text).not.toContain(c.json.key);
    const app = list.json.keys.find((k: any) => k.name === 'app');
    expect(app).toMatchObject({ prefix: c.json.key.slice(0, 10), status: 'active', models: ['local/*'] });
    const rev = await gw.req('POST', `/api/keys/${c.json.id}/revoke`);
    expect(rev.json.status).toBe('revoked');
    expect((await gw.req('DELETE', `/api/keys/${c.json.id}`)).status).toBe(200);
    expect((await gw.req('DELETE', '/api/keys/file:ci')).status).toBe(409);
  });

  it('requires management auth on TCP: cookie from login or a management-scoped key', async () => {
    const anon = await gw.req('GET', '/api/providers', undefined, {}, { tcp: true });
    expect(anon.status).toBe(401);
    expect(anon.json.error.type).toBe('authentication_error');
    const inferenceKey = await gw.req('GET', '/api/providers', undefined, { authorization: 'Bearer sk-gw-ci-key-000000' }, { tcp: true });
    expect(inferenceKey.status).toBe(401);
    const adminKey = await gw.req('GET', '/api/providers', undefined, { authorization: 'Bearer sk-gw-admin-key-0000' }, { tcp: true });
    expect(adminKey.status).toBe(200);
    const wrong = await gw.req('POST', '/api/auth/login', { password: 'nope' }, {}, { tcp: true });
    expect(wrong.status).toBe(401);
    const login = await gw.req('POST', '/api/auth/login', { password: 'hunter2-initial' }, {}, { tcp: true });
    expect(login.status).toBe(200);
    const cookie = login.headers['set-cookie']!.split(';')[0]!;
    expect(login.headers['set-cookie']).toMatch(/HttpOnly/);
    expect((await gw.req('GET', '/api/keys', undefined, { cookie }, { tcp: true })).status).toBe(200);
    // Changing it over TCP takes the current password (a stolen session is not enough).
    const missing = await gw.req('POST', '/api/auth/password', { password: 'new-password-1' }, { cookie }, { tcp: true });
    expect(missing.status).toBe(400);
    expect(missing.json.error.code).toBe('current_password_required');
    const wrongCurrent = await gw.req('POST', '/api/auth/password', { password: 'new-password-1', currentPassword: 'guess' }, { cookie }, { tcp: true });
    expect(wrongCurrent.status).toBe(403);
    expect((await gw.req('GET', '/api/keys', undefined, { cookie }, { tcp: true })).status).toBe(200);
    // A saved password replaces INITIAL_PASSWORD and ends sessions.
    expect((await gw.req('POST', '/api/auth/password', { password: 'new-password-1', currentPassword: 'hunter2-initial' }, { cookie }, { tcp: true })).status).toBe(200);
    expect((await gw.req('GET', '/api/keys', undefined, { cookie }, { tcp: true })).status).toBe(401);
    expect((await gw.req('POST', '/api/auth/login', { password: 'hunter2-initial' }, {}, { tcp: true })).status).toBe(401);
    const again = await gw.req('POST', '/api/auth/login', { password: 'new-password-1' }, {}, { tcp: true });
    expect(again.status).toBe(200);
    const cookie2 = again.headers['set-cookie']!.split(';')[0]!;
    expect((await gw.req('POST', '/api/auth/logout', undefined, { cookie: cookie2 }, { tcp: true })).status).toBe(200);
    expect((await gw.req('GET', '/api/keys', undefined, { cookie: cookie2 }, { tcp: true })).status).toBe(401);
  });

  it('limits failed logins per account as well as per address: guesses from many addresses are stopped too', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const g = await startGateway({ yaml: YAML, env: { INITIAL_PASSWORD: 'hunter2-initial' }, clock: { now: () => now } });
    try {
      const login = (password: string, ip: number) => g.req('POST', '/api/auth/login', { password }, { 'x-forwarded-for': `198.51.100.${ip}` }, { tcp: true });
      for (let i = 0; i < 30; i++) expect((await login(`guess-${i}`, i)).status).toBe(401);
      const locked = await login('hunter2-initial', 200);
      expect(locked.status).toBe(429);
      expect(locked.headers['retry-after']).toMatch(/^\d+$/);
      expect(locked.json.error.code).toBe('login_rate_limited');
      now += 61_000;
      expect((await login('hunter2-initial', 201)).status).toBe(200);
    } finally {
      await g.close();
    }
  });

  it('declares a rate limit on login', async () => {
    const route = gw.instance.router.routes().find((r) => r.pattern === '/api/auth/login');
    expect(route?.rateLimitDecl).toEqual({ limit: 10, interval: 60 });
  });
});

describe('gateway.yaml reload', () => {
  it('reloads, and keeps the old configuration when the file is bad', async () => {
    gw.writeYaml(YAML.replace('fast: local/m1', 'fast: local/m2'));
    await gw.instance.reload!();
    expect((await gw.req('GET', '/api/models/alias')).json.aliases.fast).toBe('local/m2');
    gw.writeYaml('providers: [{id: 1}]');
    expect(() => gw.instance.reload!()).toThrow(/gateway.yaml/);
    expect((await gw.req('GET', '/api/models/alias')).json.aliases.fast).toBe('local/m2');
  });
});

describe('usage', () => {
  it('answers empty usage reports', async () => {
    const h = await gw.req('GET', '/api/usage/history?days=3');
    expect(h.status).toBe(200);
    expect(h.json.totals.requests).toBe(0);
    expect((await gw.req('GET', '/api/usage/logs')).json.logs).toEqual([]);
    const rl = await gw.req('GET', '/api/usage/request-logs?limit=5');
    expect(rl.json).toMatchObject({ total: 0, limit: 5, offset: 0, items: [] });
    expect((await gw.req('GET', '/api/usage/request-logs?limit=0')).status).toBe(400);
  });
});
