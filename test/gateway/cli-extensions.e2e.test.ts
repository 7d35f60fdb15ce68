/** `ctl gateway memory|skill|agent-skill …` against a real daemon (the bundle finds and starts the skill runner). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

let mock: MockUpstream;
let d: TestDaemon;
const dir = mkdtempSync(join(tmpdir(), 'ctl-cli-ext-'));

beforeAll(async () => {
  mock = await startLlmUpstream();
  d = await startDaemon({ files: { 'gateway.yaml': `providers:\n  - {id: oa, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: k, models: [m1]}\nskills:\n  timeout_ms: 1000\n` } });
}, 60_000);
afterAll(async () => {
  await d?.cleanup();
  await mock?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ctl gateway memory', () => {
  it('add, list, search, get, set, stats, clear; a chat request carries the memory', async () => {
    const add = await d.cli(['gateway', 'memory', 'add', 'The staging database is called pluto', '--key', 'db', '--meta', 'team=infra']);
    expect(add.code, add.stderr).toBe(0);
    const id = add.stdout.trim();
    expect(id).toMatch(/^mem_/);
    expect((await d.cli(['gateway', 'memory', 'list'])).stdout).toMatch(new RegExp(`${id} +FACTUAL +global +db +The staging database is called pluto`));
    expect((await d.cli(['gateway', 'memory', 'search', 'staging pluto'])).stdout).toContain(id);
    expect((await d.cli(['gateway', 'memory', 'get', id])).stdout).toMatch(/^metadata: +\{"team":"infra"\}$/m);
    expect((await d.cli(['gateway', 'memory', 'set', id, '--expires', '7d'])).stdout).toBe(`updated ${id}\n`);
    expect((await d.cli(['gateway', 'memory', 'stats'])).stdout).toMatch(/^memories: +1$/m);

    mock.requests.length = 0;
    await d.request('gateway', 'POST', '/v1/chat/completions', { model: 'oa/m1', messages: [{ role: 'user', content: 'Which staging database?' }] });
    expect(JSON.stringify(mock.requests.at(-1)!.body)).toContain('Memory context:\\n- The staging database is called pluto');

    const refuse = await d.cli(['gateway', 'memory', 'clear']);
    expect(refuse.code).toBe(2);
    expect((await d.cli(['gateway', 'memory', 'clear', '--all'])).stdout).toBe('cleared 1\n');
  });
});

describe('ctl gateway skill and agent-skill', () => {
  it('installs a manifest file, runs it in the sandbox, lists executions; a runaway fails with exit 1', async () => {
    const file = join(dir, 'wc.json');
    writeFileSync(file, JSON.stringify({ name: 'wordcount', version: '1.0.0', description: 'counts words', schema: { input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }, handlerCode: 'return { words: input.text.split(/\\s+/).filter(Boolean).length };' }));
    const inst = await d.cli(['gateway', 'skill', 'install', file]);
    expect(inst.code, inst.stderr).toBe(0);
    expect(inst.stdout).toMatch(/^installed wordcount 1\.0\.0 \(skl_\S+, mode on\)$/m);
    const run = await d.cli(['gateway', 'skill', 'run', 'wordcount', '--input', '{"text":"one two  three"}']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('{"words":3}\n');
    const bad = await d.cli(['gateway', 'skill', 'run', 'wordcount', '--input', '{}']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/input\/text is required/);

    writeFileSync(join(dir, 'spin.json'), JSON.stringify({ name: 'spin', version: '1', description: 'never ends', schema: {}, handlerCode: 'for (;;) {}' }));
    await d.cli(['gateway', 'skill', 'install', join(dir, 'spin.json')]);
    const spin = await d.cli(['gateway', 'skill', 'run', 'spin']);
    expect(spin.code).toBe(1);
    expect(spin.stderr).toMatch(/^timeout: time limit of 1000 ms exceeded/m);
    expect((await d.cli(['gateway', 'skill', 'executions', '--skill', 'wordcount'])).stdout).toMatch(/wordcount +success/);
    expect((await d.cli(['gateway', 'skill', 'list'])).stdout).toMatch(/wordcount +1\.0\.0 +on +local/);
  });

  it('agent-skill add, raw, list, rm', async () => {
    const add = await d.cli(['gateway', 'agent-skill', 'add', 'release-notes', '--description', 'Writes release notes', '--prompt', 'Group changes by kind.']);
    expect(add.code, add.stderr).toBe(0);
    expect((await d.cli(['gateway', 'agent-skill', 'raw', 'release-notes'])).stdout).toBe('---\nname: release-notes\ndescription: Writes release notes\n---\n\nGroup changes by kind.\n');
    expect((await d.cli(['gateway', 'agent-skill', 'list'])).stdout).toMatch(/release-notes +Writes release notes/);
    expect((await d.cli(['gateway', 'agent-skill', 'rm', 'release-notes'])).code).toBe(0);
  });
});
