/**
 * Routing policies (allow/deny model patterns, global or per key, a max-tokens ceiling; 403 in the
 * client's format) and the compliance audit log (every management change with who, before, after,
 * secrets redacted; append-only; filters).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

const KEY_A = 'sk-policy-key-aaaaaaaaaaaaaa';
const KEY_B = 'sk-policy-key-bbbbbbbbbbbbbb';
const ADMIN = 'sk-policy-admin-cccccccccccc';
let mock: MockUpstream;
let gw: GatewayHarness;
let idA = '';

beforeAll(async () => {
  mock = await startLlmUpstream();
  gw = await startGateway({
    yaml: `providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1, m2, big]}
  - {id: an, kind: anthropic, base_url: "${mock.baseUrl('anthropic')}", api_key: k, models: [claude]}
combos:
  - {name: duo, strategy: priority, targets: [oa/m1, oa/m2]}
keys:
  - {name: a, key: "${KEY_A}", models: ["*"]}
  - {name: b, key: "${KEY_B}", models: ["*"]}
  - {name: admin, key: "${ADMIN}", models: ["*"], scopes: [management]}
`,
  });
  idA = ((await gw.req('GET', '/api/keys')).json as { keys: { id: string; name: string }[] }).keys.find((k) => k.name === 'a')!.id;
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

const chat = (key: string, model: string, extra: Record<string, unknown> = {}, path = '/v1/chat/completions') =>
  gw.req('POST', path, path === '/v1/messages' ? { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], ...extra } : { model, messages: [{ role: 'user', content: 'hi' }], ...extra }, { Authorization: `Bearer ${key}` }, { tcp: true });

describe('policies', () => {
  it('a global deny list refuses the model for everyone, and a combo that resolves to it; 403 in each wire format', async () => {
    const p = await gw.req('POST', '/api/policies', { name: 'no-big', denyModels: ['oa/big'] });
    expect(p.status, p.text).toBe(201);
    const r = await chat(KEY_A, 'oa/big');
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({ error: { code: 'policy_denied', message: 'policy no-big denies model oa/big' } });
    expect((await chat(KEY_B, 'oa/m1')).status).toBe(200);
    await gw.req('PUT', `/api/policies/${(p.json as { id: string }).id}`, { denyModels: ['oa/m2'] });
    expect((await chat(KEY_A, 'duo')).status).toBe(403);
    await gw.req('DELETE', `/api/policies/${(p.json as { id: string }).id}`);
    expect((await chat(KEY_A, 'duo')).status).toBe(200);
  });

  it('DELETE /api/policies?id= (the seed lists DELETE on the collection) removes one; no id or an unknown one is a clear 4xx', async () => {
    const p = await gw.req('POST', '/api/policies', { name: 'no-m2', denyModels: ['oa/m2'] });
    const id = (p.json as { id: string }).id;
    expect((await chat(KEY_A, 'oa/m2')).status).toBe(403);
    const d = await gw.req('DELETE', `/api/policies?id=${encodeURIComponent(id)}`);
    expect(d.status, d.text).toBe(200);
    expect(d.json).toEqual({ id, deleted: true });
    expect((await chat(KEY_A, 'oa/m2')).status).toBe(200);
    expect((await gw.req('GET', `/api/policies/${id}`)).status).toBe(404);
    const none = await gw.req('DELETE', '/api/policies');
    expect(none.status).toBe(400);
    expect(none.json).toMatchObject({ error: { message: expect.stringContaining('id is required') } });
    expect((await gw.req('DELETE', '/api/policies?id=pol_nothing')).status).toBe(404);
  });

  it('a per-key allow list and max-tokens ceiling touch only that key', async () => {
    const p = await gw.req('POST', '/api/policies', { name: 'a-only-oa', apiKeyId: idA, allowModels: ['oa/*'], maxTokens: 100 });
    expect(p.status).toBe(201);
    const an = await chat(KEY_A, 'an/claude', {}, '/v1/messages');
    expect(an.status).toBe(403);
    expect(an.json).toMatchObject({ type: 'error', error: { message: 'policy a-only-oa does not allow model an/claude' } });
    expect((await chat(KEY_B, 'an/claude', {}, '/v1/messages')).status).toBe(200);
    expect((await chat(KEY_A, 'duo')).status).toBe(200); // a combo whose targets are all allowed
    const tooMany = await chat(KEY_A, 'oa/m1', { max_tokens: 500 });
    expect(tooMany.status).toBe(403);
    expect(tooMany.text).toMatch(/at most 100 max tokens/);
    mock.requests.length = 0;
    expect((await chat(KEY_A, 'oa/m1')).status).toBe(200);
    expect((mock.requests.at(-1)!.body as { max_tokens?: number; max_completion_tokens?: number }).max_tokens ?? (mock.requests.at(-1)!.body as { max_completion_tokens?: number }).max_completion_tokens).toBe(100);
    expect((await gw.req('POST', '/api/policies', { name: 'x', apiKeyId: 'nope' })).status).toBe(400);
    await gw.req('DELETE', `/api/policies/${(p.json as { id: string }).id}`);
  });
});

describe('audit log', () => {
  it('records every management change: who, what, before and after, secrets redacted; reads are not recorded', async () => {
    const created = await gw.req('POST', '/api/keys', { name: 'audited', key: 'sk-audited-key-0000000000000' }, { Authorization: `Bearer ${ADMIN}` }, { tcp: true });
    expect(created.status).toBe(201);
    const id = (created.json as { id: string }).id;
    await gw.req('PATCH', `/api/keys/${id}`, { name: 'audited-2' });
    expect((await gw.req('POST', '/api/keys', { name: '' })).status).toBe(400);
    await gw.req('GET', '/api/keys');

    const log = (await gw.req('GET', '/api/compliance/audit-log?path=/api/keys')).json as { entries: { actor: string; method: string; path: string; status: number; before?: Record<string, unknown>; after?: Record<string, unknown> }[] };
    const [failed, patched, made] = log.entries;
    expect(made).toMatchObject({ actor: 'key:admin', method: 'POST', path: '/api/keys', status: 201 });
    expect(made!.after!.key).toBe('[REDACTED]');
    expect(JSON.stringify(log.entries)).not.toContain('sk-audited-key');
    expect(patched).toMatchObject({ actor: 'control-socket', method: 'PATCH', path: `/api/keys/${id}`, status: 200, before: { name: 'audited' }, after: { name: 'audited-2' } });
    expect(failed).toMatchObject({ method: 'POST', status: 400, after: { error: expect.any(String) } });
    expect(log.entries.some((e) => e.method === 'GET')).toBe(false);
    expect(((await gw.req('GET', '/api/compliance/audit-log?actor=key:admin')).json as { total: number }).total).toBe(1);
    // Policy changes are there too.
    expect(((await gw.req('GET', '/api/compliance/audit-log?path=/api/policies')).json as { total: number }).total).toBeGreaterThanOrEqual(5);
  });

  it('is append-only: the database refuses updates and deletes', () => {
    const db = new Database(join(gw.dir, 'database', 'gateway.db'));
    try {
      expect(() => db.prepare('DELETE FROM audit_log').run()).toThrow(/append-only/);
      expect(() => db.prepare("UPDATE audit_log SET actor = 'someone else'").run()).toThrow(/append-only/);
    } finally {
      db.close();
    }
  });

  it('every management route that changes something writes an audit row, whatever its outcome', async () => {
    const changing = gw.instance.router
      .routes()
      .filter((r) => ((r.meta.auth as string | undefined) ?? 'management') === 'management' && ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method));
    expect(changing.length).toBeGreaterThan(60);
    const total = async () => ((await gw.req('GET', '/api/compliance/audit-log?limit=1')).json as { total: number }).total;
    const before = await total();
    const sent: string[] = [];
    for (const r of changing) {
      // Parameters get a name nothing has, so nothing real is deleted; bodies are empty objects.
      const path = r.pattern.replace(/:[A-Za-z_]+/g, 'audit-probe').replace(/\*$/, 'audit-probe');
      const res = await gw.req(r.method, path, {});
      expect(res.status, `${r.method} ${path}`).toBeGreaterThanOrEqual(200);
      sent.push(`${r.method} ${path}`);
    }
    expect(await total()).toBe(before + sent.length);
    const log = (await gw.req('GET', `/api/compliance/audit-log?limit=1000`)).json as { entries: { method: string; path: string }[] };
    const seen = new Set(log.entries.map((e) => `${e.method} ${e.path}`));
    expect(sent.filter((x) => !seen.has(x))).toEqual([]);
  });
});
