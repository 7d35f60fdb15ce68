/**
 * `ctl gateway resilience|cooldowns|cache|budget|limits` against a real daemon.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startLlmUpstream, type MockUpstream } from '../fakes/llm-upstream.js';

describe('ctl gateway resilience, cooldowns, cache, budget and limits', () => {
  let d: TestDaemon;
  let mock: MockUpstream;
  const chat = (model: string, extra: Record<string, unknown> = {}) =>
    d.request('gateway', 'POST', '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }], ...extra });

  beforeAll(async () => {
    mock = await startLlmUpstream();
    d = await startDaemon({
      files: {
        'gateway.yaml': `
providers:
  - {id: local, kind: openai, base_url: "${mock.baseUrl('openai')}", models: [m1, m2]}
  - {id: keyed, kind: openai, base_url: "${mock.baseUrl('openai')}", api_keys: [k1, k2], models: [m1]}
keys:
  - {name: ci, key: "sk-gw-ci-0000000000", models: ["*"]}
pricing:
  local/m1: {input: 0.15, output: 0.60}
resilience:
  provider_breaker: {local: {failure_threshold: 2, degradation_threshold: 1, reset_timeout_ms: 60000}}
cache:
  memory_max_size: 100
`,
      },
    });
  });
  afterAll(async () => {
    await d.cleanup();
    await mock.close();
  });

  it('shows breakers and resets them', async () => {
    mock.enqueue({ status: 500 });
    mock.enqueue({ status: 500 });
    await chat('local/m1');
    await chat('local/m1');
    expect((await chat('local/m1')).status).toBe(503);
    const show = await d.cli(['gateway', 'resilience']);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^local\s+local\s+OPEN\s+2 \(degraded 1, open 2\)\s+1\s+60s\s+60s/m);
    expect(show.stdout).toMatch(/^keyed\s+apikey\s+CLOSED/m);
    const yaml = await d.cli(['-o', 'json', 'gateway', 'resilience']);
    expect(JSON.parse(yaml.stdout).providerBreaker.local.failureThreshold).toBe(2);
    const reset = await d.cli(['gateway', 'resilience', 'reset', '--provider', 'local']);
    expect(reset.code).toBe(0);
    expect(reset.stdout).toBe('reset 1 breaker(s) of local\n');
    expect((await chat('local/m1')).status).toBe(200);
    expect((await d.cli(['gateway', 'resilience', 'reset', '--provider', 'nope'])).code).toBe(1);
  });

  it('lists and clears cool-downs and lock-outs', async () => {
    expect((await d.cli(['gateway', 'cooldowns'])).stdout).toBe('no account is cooling down and no model is locked out\n');
    mock.enqueue({ status: 429, retryAfter: '120' });
    await chat('keyed/m1');
    mock.enqueue({ status: 404, errorMessage: 'The model m2 does not exist' });
    await chat('local/m2');
    const list = await d.cli(['gateway', 'cooldowns']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^account\s+keyed\s+account-1\s+\*\s+120s/m);
    expect(list.stdout).toMatch(/^model\s+local\s+none\s+m2\s+120s/m);
    const one = await d.cli(['gateway', 'cooldowns', 'clear', '--provider', 'local', '--model', 'm2']);
    expect(one.stdout).toBe('cleared 1 lock-out(s) of local/m2\n');
    expect((await d.cli(['gateway', 'cooldowns', 'clear', '--model', 'm2'])).code).toBe(2);
    const all = await d.cli(['gateway', 'cooldowns', 'clear']);
    expect(all.stdout).toBe('cleared 1 account cool-down(s) and 0 model lock-out(s)\n');
  });

  it('shows cache stats and clears the cache', async () => {
    await chat('local/m1', { temperature: 0 });
    expect((await chat('local/m1', { temperature: 0 })).headers['x-gateway-cache']).toBe('HIT');
    const stats = await d.cli(['gateway', 'cache', 'stats']);
    expect(stats.code).toBe(0);
    expect(stats.stdout).toMatch(/^memory:\s+1 \/ 100 entries$/m);
    expect(stats.stdout).toMatch(/^hit rate:\s+50\.0% \(1 hits, 1 misses\)$/m);
    expect(stats.stdout).toMatch(/^idempotency:\s+0 active key\(s\), 5000 ms window$/m);
    expect((await d.cli(['gateway', 'cache', 'clear', '--model', 'other/x'])).stdout).toBe('deleted 0 cache entries\n');
    expect((await d.cli(['gateway', 'cache', 'clear'])).stdout).toBe('cleared 1 cache entry\n');
    expect((await chat('local/m1', { temperature: 0 })).headers['x-gateway-cache']).toBe('MISS');
  });

  it('sets and shows budgets and token limits by key name', async () => {
    expect((await d.cli(['gateway', 'budget', 'get'])).stdout).toBe('no budgets\n');
    const set = await d.cli(['gateway', 'budget', 'set', 'ci', '--daily', '5', '--monthly', '50', '--warning', '0.9']);
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(/^file:ci\s+daily\s+5\s+0\.000000\s+5\.000000\s+\S+\s+ok$/m);
    expect(set.stdout).toMatch(/^file:ci\s+monthly\s+50\s/m);
    expect((await d.cli(['gateway', 'budget', 'get', 'ci'])).stdout).toMatch(/daily/);
    expect((await d.cli(['gateway', 'budget', 'set', 'ci'])).code).toBe(2);
    const bad = await d.cli(['gateway', 'budget', 'set', 'ci', '--daily', '1', '--warning', '3']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/warningThreshold/);
    expect((await d.cli(['gateway', 'budget', 'set', 'nobody', '--daily', '1'])).code).toBe(1);

    const lim = await d.cli(['-o', 'json', 'gateway', 'limits', 'set', '--key', 'ci', '--scope', 'model', '--value', 'local/m1', '--tokens', '1000', '--interval', 'daily']);
    expect(lim.code).toBe(0);
    const id = JSON.parse(lim.stdout).id as string;
    expect((await d.cli(['gateway', 'limits', 'set', '--key', 'ci', '--scope', 'model', '--tokens', '5'])).code).toBe(2);
    const list = await d.cli(['gateway', 'limits', 'list', '--key', 'ci']);
    expect(list.stdout).toMatch(new RegExp(`^${id}\\s+file:ci\\s+model local/m1\\s+1000\\s+0\\s+1000\\s+daily`, 'm'));
    expect((await d.cli(['gateway', 'limits', 'rm', id])).stdout).toBe(`deleted token limit ${id}\n`);
    expect((await d.cli(['gateway', 'limits', 'list'])).stdout).toBe('no token limits\n');
    expect((await d.cli(['gateway', 'limits', 'rm', id])).code).toBe(1);
  });
});
