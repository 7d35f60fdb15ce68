/**
 * Persistent memory: CRUD with both documented bodies, list filters and paging, FTS5 search,
 * expiry, stats, health, clear; injection into what the upstream receives (by key, by session, by
 * relevance, within the budget) and skipped with x-gateway-no-memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/http/clock.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

const KEY_A = 'sk-memory-key-aaaaaaaaaaaa';
const KEY_B = 'sk-memory-key-bbbbbbbbbbbb';
let mock: MockUpstream;
let gw: GatewayHarness;
let clock: ManualClock;
let dir: string;
let idA = '';
let idB = '';

const yaml = (m: MockUpstream) => `
providers:
  - {id: oa, kind: openai, base_url: "${m.baseUrl('openai')}", api_key: "sk-up", models: [m1]}
  - {id: an, kind: anthropic, base_url: "${m.baseUrl('anthropic')}", api_key: "sk-up", models: [claude-x]}
keys:
  - {name: a, key: "${KEY_A}", models: ["*"]}
  - {name: b, key: "${KEY_B}", models: ["*"]}
memory:
  max_tokens: 60
`;

beforeAll(async () => {
  mock = await startLlmUpstream();
  clock = new ManualClock(Date.parse('2030-01-01T12:00:00Z'));
  dir = mkdtempSync(join(tmpdir(), 'ctl-gw-memory-'));
  gw = await startGateway({ yaml: yaml(mock), clock, dir });
  const keys = (await gw.req('GET', '/api/keys')).json as { keys: { id: string; name: string }[] };
  idA = keys.keys.find((k) => k.name === 'a')!.id;
  idB = keys.keys.find((k) => k.name === 'b')!.id;
});
afterAll(async () => {
  await gw.close();
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});

const create = async (body: Record<string, unknown>) => {
  const r = await gw.req('POST', '/api/memory', body);
  expect(r.status, r.text).toBe(201);
  return (r.json as { id: string }).id;
};

/** The system text the upstream received for one chat call. */
async function systemSeen(key: string, text: string, headers: Record<string, string> = {}, path = '/v1/chat/completions'): Promise<string> {
  mock.requests.length = 0;
  const body = path === '/v1/messages' ? { model: 'an/claude-x', max_tokens: 50, messages: [{ role: 'user', content: text }] } : { model: 'oa/m1', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: text }] };
  const r = await gw.req('POST', path, body, { Authorization: `Bearer ${key}`, ...headers });
  expect(r.status, r.text).toBe(200);
  const sent = mock.requests.at(-1)!.body as { messages?: { role: string; content: string }[]; system?: string | { text: string }[] };
  if (path === '/v1/messages') return typeof sent.system === 'string' ? sent.system : (sent.system ?? []).map((b) => b.text).join('');
  return (sent.messages ?? []).filter((m) => m.role === 'system').map((m) => m.content).join('\n');
}

describe('memory API', () => {
  it('creates with both bodies, gets, updates, lists with filters and pages, deletes', async () => {
    const a = await create({ content: 'The user prefers metric units', key: 'units', type: 'FACTUAL', apiKeyId: idA, metadata: { source_app: 'cli' } });
    const g = await create({ scope: 'global', type: 'PROCEDURAL', content: 'Answer in British English' });
    const got = (await gw.req('GET', `/api/memory/${a}`)).json as Record<string, unknown>;
    expect(got).toMatchObject({ id: a, key: 'units', type: 'FACTUAL', scope: 'apiKey', apiKeyId: idA, sessionId: null, metadata: { source_app: 'cli' }, expiresAt: null });
    expect((await gw.req('GET', `/api/memory/${g}`)).json).toMatchObject({ scope: 'global', apiKeyId: null, key: '' });

    const put = await gw.req('PUT', `/api/memory/${a}`, { content: 'The user prefers metric units and 24-hour time' });
    expect(put.status).toBe(200);
    expect((put.json as { content: string; scope: string }).content).toMatch(/24-hour/);

    const byKey = (await gw.req('GET', `/api/memory?apiKeyId=${idA}`)).json as { memories: { id: string }[]; total: number; stats: { byType: Record<string, number> } };
    expect(byKey.memories.map((m) => m.id)).toEqual([a]);
    expect(byKey.stats.byType).toEqual({ FACTUAL: 1 });
    expect(((await gw.req('GET', '/api/memory?type=PROCEDURAL')).json as { total: number }).total).toBe(1);
    expect(((await gw.req('GET', '/api/memory?scope=global')).json as { memories: { id: string }[] }).memories.map((m) => m.id)).toEqual([g]);
    expect(((await gw.req('GET', '/api/memory?q=hour')).json as { memories: { id: string }[] }).memories.map((m) => m.id)).toEqual([a]);
    const p1 = (await gw.req('GET', '/api/memory?page=1&limit=1')).json as { memories: unknown[]; total: number; page: number };
    const p2 = (await gw.req('GET', '/api/memory?page=2&limit=1')).json as { memories: { id: string }[] };
    const o1 = (await gw.req('GET', '/api/memory?offset=1&limit=1')).json as { memories: { id: string }[] };
    expect(p1.memories).toHaveLength(1);
    expect(p1.total).toBe(2);
    expect(p2.memories[0]!.id).toBe(o1.memories[0]!.id);

    expect((await gw.req('DELETE', `/api/memory/${g}`)).status).toBe(200);
    expect((await gw.req('GET', `/api/memory/${g}`)).status).toBe(404);
    expect((await gw.req('DELETE', `/api/memory/${a}`)).status).toBe(200);
  });

  it('refuses bad bodies with a 400 naming the problem', async () => {
    const bad = async (body: unknown, re: RegExp) => {
      const r = await gw.req('POST', '/api/memory', body);
      expect(r.status, r.text).toBe(400);
      expect(r.text).toMatch(re);
    };
    await bad({ key: 'k' }, /content/);
    await bad({ content: 'x', type: 'OPINION' }, /type/);
    await bad({ content: 'x', scope: 'session' }, /scope session needs sessionId/);
    await bad({ content: 'x', scope: 'global', apiKeyId: idA }, /scope global/);
    await bad({ content: 'x', apiKeyId: 'no-such-key' }, /no API key/);
    await bad({ content: 'x', expiresAt: 'next tuesday' }, /expiresAt/);
    expect((await gw.req('GET', '/api/memory?type=nope')).status).toBe(400);
    expect((await gw.req('GET', '/api/memory/search')).status).toBe(400);
    expect((await gw.req('GET', '/api/memory/mem_nope')).status).toBe(404);
  });

  it('search ranks by FTS5 relevance; expired memories are hidden and cleared; stats and health', async () => {
    const best = await create({ content: 'Deploys go out on Tuesday; deploy freeze on Friday', key: 'deploy' });
    await create({ content: 'Coffee machine is on the second floor', key: 'coffee' });
    const weak = await create({ content: 'Friday lunch is pizza', key: 'lunch' });
    const s = (await gw.req('GET', '/api/memory/search?q=deploy%20friday')).json as { results: { id: string; score: number }[] };
    expect(s.results.map((x) => x.id)).toEqual([best, weak]);
    expect(s.results[0]!.score).toBeGreaterThan(s.results[1]!.score);
    // Words that FTS5 would read as syntax are plain words here.
    expect((await gw.req('GET', '/api/memory/search?q=' + encodeURIComponent('"NEAR( deploy* OR -'))).status).toBe(200);

    await create({ content: 'Temporary deploy window tonight', expiresAt: new Date(clock.now() + 60_000).toISOString() });
    expect(((await gw.req('GET', '/api/memory/search?q=tonight')).json as { results: unknown[] }).results).toHaveLength(1);
    clock.advance(61_000);
    expect(((await gw.req('GET', '/api/memory/search?q=tonight')).json as { results: unknown[] }).results).toHaveLength(0);
    const stats = (await gw.req('GET', '/api/memory/stats')).json as { total: number; expired: number; byType: Record<string, number> };
    expect(stats).toMatchObject({ total: 4, expired: 1 });
    expect(stats.byType.FACTUAL).toBe(4);
    expect((await gw.req('POST', '/api/memory/clear', { expired: true })).json).toEqual({ success: true, cleared: 1 });
    const health = await gw.req('GET', '/api/memory/health');
    expect(health.status).toBe(200);
    expect(health.json).toMatchObject({ status: 'ok', fts5: 'ok', memories: 3, injection: { enabled: true, maxTokens: 60 } });
    expect((await gw.req('POST', '/api/memory/clear', {})).json).toEqual({ success: true, cleared: 3 });
  });
});

describe('memory injection', () => {
  it('adds the caller key’s relevant memories after the client’s system text; other keys do not see them', async () => {
    await create({ content: 'Alice is allergic to peanuts', key: 'allergy', apiKeyId: idA });
    await create({ content: 'Bob plays the cello', key: 'music', apiKeyId: idB });
    await create({ content: 'The office is closed on public holidays', scope: 'global' });
    const a = await systemSeen(KEY_A, 'Can I eat peanuts at the office?');
    expect(a).toBe('Be brief.\n\nMemory context:\n- Alice is allergic to peanuts\n- The office is closed on public holidays');
    const b = await systemSeen(KEY_B, 'Can I eat peanuts at the office?');
    expect(b).toBe('Be brief.\n\nMemory context:\n- The office is closed on public holidays');
    // Nothing relevant: nothing added.
    expect(await systemSeen(KEY_A, 'What is two plus two?')).toBe('Be brief.');
    // Skipped on request.
    expect(await systemSeen(KEY_A, 'peanuts?', { 'x-gateway-no-memory': 'true' })).toBe('Be brief.');
    // Anthropic wire: the memories go in the system field.
    expect(await systemSeen(KEY_A, 'peanuts?', {}, '/v1/messages')).toBe('Memory context:\n- Alice is allergic to peanuts');
  });

  it('session memories reach only that session, whatever the words; the budget caps what is added', async () => {
    await create({ content: 'This conversation is about the Lisbon trip', sessionId: 'trip-1', type: 'EPISODIC' });
    const inSession = await systemSeen(KEY_B, 'What should I pack?', { 'X-Gateway-Session-Id': 'trip-1' });
    expect(inSession).toBe('Be brief.\n\nMemory context:\n- This conversation is about the Lisbon trip');
    expect(await systemSeen(KEY_B, 'What should I pack?', { 'X-Gateway-Session-Id': 'trip-2' })).toBe('Be brief.');

    // max_tokens 60 ≈ 240 characters: the second long memory does not fit.
    await gw.req('POST', '/api/memory/clear', {});
    await create({ content: `Glacier facts: ${'ice '.repeat(40)}`, scope: 'global' });
    await create({ content: `Glacier history: ${'snow '.repeat(40)}`, scope: 'global' });
    const capped = await systemSeen(KEY_A, 'Tell me about glacier facts');
    expect(capped.match(/^- /gm)).toHaveLength(1);
    expect(capped).toContain('Glacier facts');
  });

  it('persists across a restart', async () => {
    await gw.req('POST', '/api/memory/clear', {});
    const id = await create({ content: 'Durable fact about zebras', scope: 'global' });
    await gw.close();
    gw = await startGateway({ yaml: yaml(mock), clock, dir });
    expect((await gw.req('GET', `/api/memory/${id}`)).status).toBe(200);
    expect(await systemSeen(KEY_A, 'zebras?')).toContain('Durable fact about zebras');
  });
});
