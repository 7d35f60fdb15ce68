import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';

describe('ctl gateway against a real daemon', () => {
  let d: TestDaemon;
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startLlmUpstream();
    d = await startDaemon({
      files: {
        'gateway.yaml': `
providers:
  - {id: local, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: "sk-x-0123456789", models: [m1, m2]}
aliases: {fast: local/m1}
combos:
  - {name: smart, strategy: priority, targets: [local/m2, local/m1]}
keys:
  - {name: ci, key: "sk-gw-ci-0000000000", models: ["*"]}
pricing:
  local/m1: {input: 0.15, output: 0.60}
`,
      },
      env: { REQUIRE_API_KEY: 'true' },
    });
  });
  afterAll(async () => {
    await d.cleanup();
    await mock.close();
  });

  it('lists, adds, gets, tests and removes providers', async () => {
    const list = await d.cli(['gateway', 'provider', 'list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^local\s+openai\s+http:\/\/127\.0\.0\.1:\d+\/openai\/v1\s+true\s+1\s+m1,m2\s+file$/m);
    const add = await d.cli(['gateway', 'provider', 'add', 'an', '--kind', 'anthropic', '--base-url', mock.baseUrl('anthropic'), '--api-key-stdin', '--model', 'claude-x'], undefined, 'sk-ant-secret-123456\n');
    expect(add.code).toBe(0);
    expect(add.stdout).toMatch(/added provider an/);
    const get = await d.cli(['-o', 'json', 'gateway', 'provider', 'get', 'an']);
    const v = JSON.parse(get.stdout);
    expect(v.accounts[0].apiKey).toBe('sk-a…3456');
    expect(get.stdout).not.toContain('sk-ant-secret-123456');
    const test = await d.cli(['gateway', 'provider', 'test', 'local']);
    expect(test.code).toBe(0);
    expect(test.stdout).toMatch(/^ok: local answered in \d+ ms \(2 models\)/);
    const dup = await d.cli(['gateway', 'provider', 'add', 'an', '--kind', 'anthropic']);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/already exists/);
    const rm = await d.cli(['gateway', 'provider', 'rm', 'an']);
    expect(rm.code).toBe(0);
    expect((await d.cli(['gateway', 'provider', 'get', 'an'])).code).toBe(1);
    expect((await d.cli(['gateway', 'provider', 'add', 'x'])).code).toBe(2);
  });

  it('imports providers from a CSV file with per-row results', async () => {
    const file = join(d.dir, 'providers.csv');
    writeFileSync(file, `id,kind,base_url,models\nol,ollama,${mock.baseUrl('ollama')},llama-x\nbad,nope,,\n`);
    const r = await d.cli(['gateway', 'provider', 'import', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/1 created, 0 updated, 1 failed/);
    expect(r.stdout).toMatch(/^1\s+bad\s+error\s+unknown provider kind/m);
  });

  it('manages combos and keys', async () => {
    const add = await d.cli(['gateway', 'combo', 'add', 'duo', '--strategy', 'weighted', '--target', 'local/m1*3', '--target', 'fast']);
    expect(add.code).toBe(0);
    expect(add.stdout).toMatch(/added combo duo \(weighted: local\/m1\*3, fast\)/);
    const list = await d.cli(['gateway', 'combo', 'list']);
    expect(list.stdout).toMatch(/^duo\s+weighted/m);
    expect(list.stdout).toMatch(/^smart\s+priority\s+local\/m2, local\/m1\s+true\s+file$/m);
    expect((await d.cli(['gateway', 'combo', 'set', 'duo', '--strategy', 'random'])).stdout).toMatch(/random/);
    expect((await d.cli(['gateway', 'combo', 'rm', 'duo'])).code).toBe(0);

    const key = await d.cli(['gateway', 'key', 'create', 'app', '--model', 'local/*']);
    expect(key.code).toBe(0);
    const raw = key.stdout.trim();
    expect(raw).toMatch(/^sk-gw-/);
    const keys = await d.cli(['gateway', 'key', 'list']);
    expect(keys.stdout).not.toContain(raw);
    expect(keys.stdout).toMatch(/\sapp\s+sk-gw-.{4}\s+local\/\*\s+inference\s+active/);
    // The new key works on TCP; after revoking it does not.
    const base = await d.baseUrl('gateway');
    const call = (k: string) =>
      fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${k}` },
        body: JSON.stringify({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] }),
      });
    expect((await call(raw)).status).toBe(200);
    const id = JSON.parse((await d.cli(['-o', 'json', 'gateway', 'key', 'list'])).stdout).keys.find((k: any) => k.name === 'app').id;
    expect((await d.cli(['gateway', 'key', 'revoke', id])).stdout).toMatch(/revoked key app/);
    expect((await call(raw)).status).toBe(401);
  });

  it('lists models and streams a chat to the terminal', async () => {
    const models = await d.cli(['gateway', 'models']);
    expect(models.stdout).toMatch(/^local\/m1\s+chat\s+local$/m);
    expect(models.stdout).toMatch(/^smart\s+combo\s+combo$/m);
    const chat = await d.cli(['gateway', 'chat', 'smart', 'say hi']);
    expect(chat.code).toBe(0);
    expect(chat.stdout).toBe('Hello from openai\n');
    const bad = await d.cli(['gateway', 'chat', 'nope/x', 'hi']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/not found/);
  });

  it('shows usage and the request log', async () => {
    const u = await d.cli(['gateway', 'usage']);
    expect(u.code).toBe(0);
    expect(u.stdout).toMatch(/^total: [1-9]\d* requests/m);
    const logs = await d.cli(['gateway', 'usage', '--logs']);
    expect(logs.stdout).toMatch(/ 200 chat smart -> local\/m2 in=11 out=7 /);
    const grouped = await d.cli(['-o', 'json', 'gateway', 'usage', '--group-by', 'provider']);
    expect(JSON.parse(grouped.stdout).history.map((h: any) => h.group)).toContain('local');
  });

  it('reloads gateway.yaml on SIGHUP', async () => {
    writeFileSync(join(d.dir, 'gateway.yaml'), `
providers:
  - {id: local, kind: openai, base_url: "${mock.baseUrl('openai')}", api_key: "sk-x-0123456789", models: [m1, m2, m3]}
`);
    d.signal('SIGHUP');
    await d.waitLog(/gateway: configuration reloaded/);
    const models = await d.cli(['gateway', 'models']);
    expect(models.stdout).toMatch(/^local\/m3\s/m);
    expect(models.stdout).not.toMatch(/^smart\s/m);
  });
});
