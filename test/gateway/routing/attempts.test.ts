/** src/gateway/routing/attempts.ts: the attempt loop over targets and accounts. */
import { describe, expect, it } from 'vitest';
import { resolveModel } from '../../../src/gateway/routing/resolve.js';
import { RoutingMetrics } from '../../../src/gateway/routing/metrics.js';
import { UpstreamError } from '../../../src/gateway/providers/index.js';
import { runAttempts } from '../../../src/gateway/routing/attempts.js';
import { BasicPolicy } from '../../../src/gateway/routing/policy.js';
import { ManualClock } from '../../../src/http/clock.js';
import { DEFAULT_ROUTING } from '../../../src/gateway/types.js';
import { catalog } from './catalog-fixture.js';

describe('attempt loop', () => {
  const c = catalog();
  const clock = new ManualClock();
  const metrics = new RoutingMetrics();
  const deps = () => ({ policy: new BasicPolicy(() => DEFAULT_ROUTING), metrics, clock, sleep: async () => undefined });
  const plan = (model: string, maxAttempts = 10) => {
    const resolution = resolveModel(c, model);
    return { resolution, ordered: resolution.targets, request: { requestId: 'r' }, maxAttempts, retryWaitMaxMs: 0, signal: new AbortController().signal };
  };

  it('bounds the number of upstream calls', async () => {
    let calls = 0;
    const p = runAttempts(plan('combo1', 2), deps(), async () => {
      calls++;
      throw new UpstreamError('http', 'down', { status: 500, upstreamMessage: 'down' });
    });
    await expect(p).rejects.toMatchObject({ status: 500, message: expect.stringMatching(/attempt limit 2 reached/) });
    expect(calls).toBe(2);
  });

  it('logs unresolved targets as skipped and returns the first success', async () => {
    const r = await runAttempts(plan('combo1'), deps(), async (s) => s.ref);
    expect(r.value).toBe('a/m1');
    expect(r.attempts[0]).toMatchObject({ outcome: 'skipped', error: 'unknown provider or model' });
  });

  it('tries the next account of a provider on a rate limit before the next target', async () => {
    const two = catalog(`
providers:
  - {id: a, kind: openai, base_url: "http://127.0.0.1:1/v1", api_keys: [k1, k2], models: [m1]}
`);
    const resolution = resolveModel(two, 'a/m1');
    const seen: string[] = [];
    const r = await runAttempts(
      { resolution, ordered: resolution.targets, request: { requestId: 'r' }, maxAttempts: 10, retryWaitMaxMs: 0, signal: new AbortController().signal },
      deps(),
      async (s) => {
        seen.push(s.account.apiKey);
        if (s.account.apiKey === 'k1') throw new UpstreamError('http', 'slow down', { status: 429, upstreamMessage: 'slow down' });
        return 'ok';
      },
    );
    expect(seen).toEqual(['k1', 'k2']);
    expect(r.failedAttempts).toBe(1);
  });
});
