/** src/gateway/resilience/policy.ts: the policy's account selection, session affinity, and the mechanisms kept apart. */
import { describe, expect, it } from 'vitest';
import { ResilientPolicy } from '../../../src/gateway/resilience/policy.js';
import { DEFAULT_RESILIENCE, type ResilienceSettings } from '../../../src/gateway/resilience/settings.js';
import { classify } from '../../../src/gateway/routing/classify.js';
import { UpstreamError } from '../../../src/gateway/providers/index.js';
import { Catalog } from '../../../src/gateway/catalog.js';
import { parseConfigText } from '../../../src/gateway/config-file.js';
import { GatewayStore } from '../../../src/gateway/store.js';
import { GATEWAY_MIGRATIONS } from '../../../src/gateway/schema.js';
import { openStore } from '../../../src/store/index.js';
import { ManualClock } from '../../../src/http/clock.js';
import { deepMerge } from '../../../src/gateway/runtime-settings.js';

const http = (status: number, message = `upstream ${status}`, retryAfterMs?: number) =>
  classify(new UpstreamError('http', message, { status, upstreamMessage: message, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) }));

describe('policy: accounts, affinity, and mechanisms kept apart', () => {
  const yaml = `
providers:
  - {id: a, kind: openai, base_url: "http://127.0.0.1:1/v1", api_keys: [k1, k2, k3], models: [m1, m2]}
  - {id: lo, kind: ollama, base_url: "http://127.0.0.1:2", models: [l1]}
`;
  function setup(patch: Record<string, unknown> = {}) {
    const db = new GatewayStore(openStore(':memory:', GATEWAY_MIGRATIONS));
    const catalog = new Catalog(db, parseConfigText(yaml, {}, 0));
    const clock = new ManualClock(0);
    const settings = deepMerge(DEFAULT_RESILIENCE as unknown as Record<string, unknown>, patch) as unknown as ResilienceSettings;
    const policy = new ResilientPolicy({ settings: () => settings, defaultCooldownMs: () => 1000, provider: (id) => catalog.providers.get(id), clock });
    const provider = catalog.providers.get('a')!;
    const subject = (i: number, sessionId?: string) => ({
      ref: 'a/m1',
      provider,
      modelId: 'm1',
      account: provider.config.accounts[i]!,
      request: { requestId: 'r', ...(sessionId ? { sessionId } : {}) },
    });
    return { policy, provider, clock, subject, catalog };
  }

  it('guesses breaker profiles: keyless and Ollama are local, keyed ones apikey', () => {
    const { policy } = setup({ providerProfiles: { a: 'oauth' } });
    expect(policy.profileOf('lo')).toBe('local');
    expect(policy.profileOf('a')).toBe('oauth');
    expect(setup().policy.profileOf('a')).toBe('apikey');
  });

  it('fill-first keeps priority order; round-robin rotates (sticky for stickyLimit requests)', () => {
    const ff = setup();
    expect(ff.policy.accounts(ff.provider, 'm1', { requestId: 'r' }).map((a) => a.apiKey)).toEqual(['k1', 'k2', 'k3']);
    const rr = setup({ accounts: { strategy: 'round-robin' } });
    const firsts = [0, 1, 2, 3].map(() => rr.policy.accounts(rr.provider, 'm1', { requestId: 'r' })[0]!.apiKey);
    expect(firsts).toEqual(['k1', 'k2', 'k3', 'k1']);
    const sticky = setup({ accounts: { strategy: 'round-robin', stickyLimit: 2 } });
    expect([0, 1, 2, 3].map(() => sticky.policy.accounts(sticky.provider, 'm1', { requestId: 'r' })[0]!.apiKey)).toEqual(['k1', 'k1', 'k2', 'k2']);
  });

  it('pins a session to the account that served it, re-pins when it fails, forgets after the TTL', () => {
    const { policy, provider, clock, subject } = setup({ accounts: { sessionAffinityTtlMs: 60_000 } });
    const first = (sid: string) => policy.accounts(provider, 'm1', { requestId: 'r', sessionId: sid })[0]!.apiKey;
    policy.record(subject(1, 's1'), { ok: true, latencyMs: 1 }, clock.now());
    expect(first('s1')).toBe('k2');
    expect(first('s2')).toBe('k1');
    // The pinned account fails: the pin goes, and whatever serves next is pinned.
    policy.record(subject(1, 's1'), { ok: false, latencyMs: 1, classification: http(500) }, clock.now());
    expect(first('s1')).toBe('k1');
    policy.record(subject(2, 's1'), { ok: true, latencyMs: 1 }, clock.now());
    expect(first('s1')).toBe('k3');
    clock.advance(60_001);
    expect(first('s1')).toBe('k1');
  });

  it('a 429 cools the account, a 404 locks the model, a 5xx counts for the breaker: each alone', () => {
    const { policy, clock, subject } = setup();
    policy.record(subject(0), { ok: false, latencyMs: 1, classification: http(429) }, clock.now());
    expect(policy.admit(subject(0), clock.now())).toMatchObject({ ok: false, kind: 'cooldown', scope: 'account' });
    expect(policy.admit(subject(1), clock.now()).ok).toBe(true);
    expect(policy.breakers.get('a', clock.now())).toBeUndefined();

    policy.record(subject(1), { ok: false, latencyMs: 1, classification: http(404, 'The model m1 does not exist') }, clock.now());
    expect(policy.admit(subject(1), clock.now())).toMatchObject({ ok: false, kind: 'lockout' });
    expect(policy.admit({ ...subject(1), ref: 'a/m2', modelId: 'm2' }, clock.now()).ok).toBe(true);
    expect(policy.cooldowns.active('a#' + subject(1).account.id, clock.now())).toBeUndefined();

    for (let i = 0; i < 12; i++) policy.record(subject(2), { ok: false, latencyMs: 1, classification: http(503) }, clock.now());
    expect(policy.admit(subject(2), clock.now())).toMatchObject({ ok: false, kind: 'breaker', scope: 'target' });
    expect(policy.cooldowns.active('a#' + subject(2).account.id, clock.now())).toBeUndefined();
  });
});
