/**
 * Compression: golden cases per mode (code, URLs, paths and JSON kept byte for byte; savings
 * measured with gpt-tokenizer), what the upstream receives, the precedence of every plan source and
 * the master switch, prompt-cache markers, the X-Gateway-Compression header, combos, RTK routes,
 * settings and analytics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startGateway, type GatewayHarness } from './harness.js';

let mock: MockUpstream;
let gw: GatewayHarness;

const CODE = '```ts\nconst   really  =  "please just";   // basically\n```';
const PROSE = `Hi there! Could you please help me understand why my build basically fails? I think that it is probably due to the fact that the cache is very old. ${CODE} See https://example.com/really/just and /usr/local/lib/really for details. The config is {"really": "just", "n": 1}. Thanks so much!`;

beforeAll(async () => {
  mock = await startLlmUpstream({ defaults: { text: 'ok', usage: { input: 10, output: 2 } } });
  gw = await startGateway({
    yaml: `providers:
  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}
  - {id: an, kind: anthropic, base_url: "${mock.baseUrl('anthropic')}", api_key: k, models: [claude]}
combos:
  - {name: team, strategy: priority, targets: [oa/m1]}
compression:
  enabled: true
  default_mode: standard
`,
  });
});
afterAll(async () => {
  await gw.close();
  await mock.close();
});

type Preview = { compressed: string | { role: string; content: string }[]; originalTokens: number; compressedTokens: number; savings: number; savingsPct: number; rules: { rule: string; count: number }[] };
const preview = async (mode: string, body: Record<string, unknown>) => {
  const r = await gw.req('POST', '/api/compression/preview', { mode, ...body });
  expect(r.status, r.text).toBe(200);
  return r.json as Preview;
};

describe('modes (preview)', () => {
  it('standard: filler, politeness and hedging go; code, URLs, paths and JSON stay byte for byte', async () => {
    const p = await preview('standard', { text: PROSE });
    expect(p.compressed).toBe(`Help me understand why my build fails? It is because the cache is old. ${CODE} See https://example.com/really/just and /usr/local/lib/really for details. The config is {"really": "just", "n": 1}.`);
    expect(p.savings).toBeGreaterThan(15);
    expect(p.compressedTokens).toBe(p.originalTokens - p.savings);
    expect(p.rules.map((x) => x.rule)).toEqual(expect.arrayContaining(['polite/could-you-please', 'hedging/i-think', 'verbose/due-to-the-fact', 'pleasantries/thanks']));
  });

  it('lite: whitespace only, code untouched; ultra abbreviates', async () => {
    const p = await preview('lite', { text: `a   b\n\n\n\nc  \n${CODE}\n\n\n` });
    expect(p.compressed).toBe(`a b\n\nc\n${CODE}`);
    expect((await preview('ultra', { text: 'Please update the configuration of the repository in production now.' })).compressed).toBe('Update the config of the repo in prod now.');
  });

  it('rtk: tool results filtered by the shipped filters; errors kept; stacked is rtk then caveman', async () => {
    const out = ['added 120 packages, and audited 121 packages in 3s', '', '14 packages are looking for funding', '  run `npm fund` for details', '', 'found 0 vulnerabilities'].join('\n');
    const tests = [...Array.from({ length: 50 }, (_, i) => ` ✓ test/t${i}.test.ts (3 tests) 12ms`), ' × test/c.test.ts > adds', '   AssertionError: expected 1 to be 2', '', ' Test Files  1 failed | 50 passed (51)'].join('\n');
    const p = await preview('rtk', { messages: [{ role: 'user', content: 'install and test' }, { role: 'tool', content: out }, { role: 'tool', content: tests }] });
    const c = p.compressed as { role: string; content: string }[];
    expect(c[1]!.content).toBe('added 120 packages, and audited 121 packages in 3s');
    expect(c[2]!.content).toBe('× test/c.test.ts > adds\n   AssertionError: expected 1 to be 2\n Test Files  1 failed | 50 passed (51)');
    expect(p.rules).toEqual(expect.arrayContaining([{ rule: 'rtk/package-install', count: 1 }, { rule: 'rtk/test-runner', count: 1 }]));
    expect(p.savingsPct).toBeGreaterThan(50);
    const s = await preview('stacked', { messages: [{ role: 'user', content: 'Could you please basically check why the tests fail in this output below?' }, { role: 'tool', content: tests }] });
    expect((s.compressed as { content: string }[])[0]!.content).toBe('Check why the tests fail in this output below?');
  });

  it('ultra drops the middle of a long conversation at a turn boundary, keeping tool pairs; aggressive keeps every message', async () => {
    const messages = [{ role: 'user', content: 'Start of the task: refactor the parser.' }];
    for (let i = 0; i < 12; i++) messages.push({ role: 'assistant', content: `Step ${i} done.` }, { role: 'user', content: `Continue with step ${i + 1}.` });
    const u = await preview('ultra', { messages });
    const c = u.compressed as { role: string; content: string }[];
    expect(c[0]).toEqual({ role: 'system', content: '[16 earlier messages were left out to save context]' });
    expect(c[1]!.content).toBe('Start of the task: refactor the parser.');
    expect(c[2]!.role).toBe('assistant');
    expect(c.at(-1)!.content).toBe('Continue with step 12.');
    const a = await preview('aggressive', { messages });
    expect((a.compressed as unknown[]).length).toBe(messages.length);
  });

  it('language packs and rules are listed; a bad mode is a 400', async () => {
    const packs = (await gw.req('GET', '/api/compression/language-packs')).json as { packs: { code: string }[]; active: string };
    expect(packs.packs.map((x) => x.code)).toEqual(['en', 'es']);
    const rules = (await gw.req('GET', '/api/compression/rules')).json as { families: { family: string }[] };
    expect(rules.families.map((f) => f.family)).toEqual(expect.arrayContaining(['pleasantries', 'polite', 'hedging', 'filler', 'verbose', 'meta', 'emphasis', 'abbreviations']));
    expect((await gw.req('POST', '/api/compression/preview', { mode: 'extreme', text: 'x' })).status).toBe(400);
  });
});

const ask = async (content: string, headers: Record<string, string> = {}, model = 'oa/m1') => {
  mock.requests.length = 0;
  const r = await gw.req('POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content }] }, headers);
  expect(r.status, r.text).toBe(200);
  const sent = mock.requests.at(-1)!.body as { messages: { content: string }[] };
  return { header: r.headers['x-gateway-compression'], sent: sent.messages.at(-1)!.content };
};

describe('plan precedence and the header', () => {
  it('the default mode applies; what reaches the upstream is compressed with the code intact', async () => {
    const r = await ask(PROSE);
    expect(r.header).toBe('standard; source=default');
    expect(r.sent).toContain(CODE);
    expect(r.sent.startsWith('Help me understand')).toBe(true);
  });

  it('request header > routing override > active profile > auto-trigger > default; unknown values ignored', async () => {
    expect((await ask(PROSE, { 'X-Gateway-Compression': 'off' })).header).toBe('off; source=request-header');
    expect((await ask(PROSE, { 'X-Gateway-Compression': 'lite' })).header).toBe('lite; source=request-header');
    expect((await ask(PROSE, { 'X-Gateway-Compression': 'engine:rtk' })).header).toBe('rtk; source=request-header');
    expect((await ask(PROSE, { 'X-Gateway-Compression': 'nonsense' })).header).toBe('standard; source=default');

    const c = (await gw.req('POST', '/api/context/combos', { name: 'Terse', pipeline: [{ engine: 'lite' }, { engine: 'caveman', intensity: 'ultra' }] })).json as { id: string };
    const offNamed = (await gw.req('POST', '/api/context/combos', { name: 'off', pipeline: [{ engine: 'rtk' }] })).json as { id: string };
    expect((await ask(PROSE, { 'X-Gateway-Compression': 'terse' })).header).toBe('standard; source=request-header');
    expect((await ask(PROSE, { 'X-Gateway-Compression': offNamed.id })).header).toBe('rtk; source=request-header');

    await gw.req('PUT', `/api/context/combos/${c.id}/assignments`, { assignments: ['team'] });
    expect((await ask(PROSE, {}, 'team')).header).toBe('standard; source=routing-override');
    expect((await ask(PROSE, { 'X-Gateway-Compression': 'lite' }, 'team')).header).toBe('lite; source=request-header');

    await gw.req('PATCH', '/api/settings/compression', { activeProfile: 'terse' });
    expect((await ask(PROSE)).header).toBe('standard; source=active-profile');
    expect((await ask(PROSE)).sent).toContain('Help me understand why my build fails');
    expect((await ask(PROSE, { 'X-Gateway-Compression': 'default' })).header).toBe('standard; source=request-header');
    await gw.req('PATCH', '/api/settings/compression', { activeProfile: null, autoTriggerTokens: 20, autoMode: 'lite', defaultMode: 'off' });
    expect((await ask(PROSE)).header).toBe('lite; source=auto-trigger');
    expect((await ask('short')).header).toBe('off; source=default');

    // The master switch is a hard gate.
    await gw.req('PATCH', '/api/settings/compression', { enabled: false });
    const off = await ask(PROSE, { 'X-Gateway-Compression': 'standard' });
    expect(off.header).toBe('off; source=off');
    expect(off.sent).toBe(PROSE);
    await gw.req('PATCH', '/api/settings/compression', { enabled: true, autoTriggerTokens: 0, defaultMode: 'standard' });
    await gw.req('DELETE', `/api/context/combos/${c.id}`);
    await gw.req('DELETE', `/api/context/combos/${offNamed.id}`);
  });

  it('prompt-cache markers downgrade aggressive and ultra to standard', async () => {
    mock.requests.length = 0;
    const r = await gw.req('POST', '/v1/messages', { model: 'an/claude', max_tokens: 10, system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: PROSE }] }, { 'X-Gateway-Compression': 'aggressive' });
    expect(r.headers['x-gateway-compression']).toBe('standard; source=request-header');
    const plain = await gw.req('POST', '/v1/messages', { model: 'an/claude', max_tokens: 10, messages: [{ role: 'user', content: PROSE }] }, { 'X-Gateway-Compression': 'aggressive' });
    expect(plain.headers['x-gateway-compression']).toBe('aggressive; source=request-header');
  });
});

describe('rtk routes, settings and analytics', () => {
  it('rtk test, filters, config; raw outputs kept when asked', async () => {
    const t = (await gw.req('POST', '/api/context/rtk/test', { command: 'git status', output: 'On branch main\nChanges not staged for commit:\n  (use "git add <file>..." to update what will be committed)\n\tmodified:   src/a.ts\n' })).json as { filter: string; text: string };
    expect(t).toMatchObject({ filter: 'git-status', text: 'On branch main\nChanges not staged for commit:\n\tmodified:   src/a.ts' });
    expect(((await gw.req('GET', '/api/context/rtk/filters')).json as { filters: { id: string }[] }).filters.length).toBeGreaterThanOrEqual(10);
    expect((await gw.req('PUT', '/api/context/rtk/config', { maxLines: 50, keepRaw: true })).json).toMatchObject({ maxLines: 50, keepRaw: true });
    expect((await gw.req('GET', '/api/context/caveman/config')).json).toMatchObject({ intensity: 'full', minMessageChars: 50, language: 'en' });
    expect((await gw.req('PUT', '/api/context/caveman/config', { language: 'xx' })).status).toBe(400);

    mock.requests.length = 0;
    const tool = `npm ERR! code E404\n${'npm http fetch GET 404 https://registry.example/x\n'.repeat(10)}`;
    await gw.req('POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'user', content: 'run it' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'sh', arguments: '{"command":"npm install"}' } }] }, { role: 'tool', tool_call_id: 'c1', content: tool }] }, { 'X-Gateway-Compression': 'rtk' });
    const sent = JSON.stringify(mock.requests.at(-1)!.body);
    const id = /raw output: (rtk_[\w-]+)/.exec(sent)![1]!;
    expect(((await gw.req('GET', `/api/context/rtk/raw-output/${id}`)).json as { content: string }).content).toBe(tool);
    await gw.req('PUT', '/api/context/rtk/config', { keepRaw: false, maxLines: 120 });
  });

  it('analytics: tokens before and after per mode from recorded requests, in the seed shape', async () => {
    let a: { totalOriginalTokens: number; totalCompressedTokens: number; totalSavings: number; savingsPct: number; modeBreakdown: Record<string, number>; engineBreakdown: Record<string, number>; window: string } | undefined;
    for (let i = 0; i < 100; i++) {
      a = (await gw.req('GET', '/api/analytics/compression')).json as typeof a;
      if (a && a.modeBreakdown.standard >= 2 && a.modeBreakdown.rtk >= 1) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(a!.window).toBe('24h');
    expect(a!.modeBreakdown.standard).toBeGreaterThanOrEqual(2);
    expect(a!.totalSavings).toBe(a!.totalOriginalTokens - a!.totalCompressedTokens);
    expect(a!.totalSavings).toBeGreaterThan(0);
    expect(a!.engineBreakdown.caveman).toBeGreaterThan(0);
    const ctxA = (await gw.req('GET', '/api/context/analytics')).json as { bySource: Record<string, number> };
    expect(ctxA.bySource['request-header']).toBeGreaterThan(0);
  });
});
