/** src/gateway/config-file.ts: gateway.yaml parsing. */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseConfigText } from '../../src/gateway/config-file.js';

describe('gateway.yaml', () => {
  it('rejects unknown fields, kinds, strategies and duplicate ids with the path', () => {
    expect(() => parseConfigText('providers: [{id: a, kind: openai, base_url: "http://x", bogus: 1}]', {}, 0)).toThrow(/unknown property bogus/);
    expect(() => parseConfigText('providers: [{id: a, kind: nope, base_url: "http://x"}]', {}, 0)).toThrow(/unknown kind/);
    expect(() => parseConfigText('combos: [{name: c, strategy: fastest, targets: [a/b]}]', {}, 0)).toThrow(/unknown strategy/);
    expect(() => parseConfigText('providers: [{id: a, kind: openai, base_url: "http://x"}, {id: a, kind: openai, base_url: "http://x"}]', {}, 0)).toThrow(/duplicate/);
    expect(() => parseConfigText('keys: [{name: k}]', {}, 0)).toThrow(/exactly one of key/);
    expect(() => parseConfigText('providers: [{id: a, kind: openai, base_url: "http://x", api_key_env: NOPE}]', {}, 0)).toThrow(/NOPE is not set/);
    expect(() => parseConfigText(': : :', {}, 0)).toThrow(/invalid YAML/);
  });

  it('parses examples/gateway.yaml', () => {
    const text = readFileSync(new URL('../../examples/gateway.yaml', import.meta.url), 'utf8');
    const cfg = parseConfigText(text, { GATEWAY_APP_KEY: 'sk-app-key-1234' }, 0);
    expect(cfg.providers.map((p) => p.id)).toEqual(['local', 'claude', 'ollama']);
    expect(cfg.combos.map((c) => c.name)).toEqual(['smart', 'spread', 'by-shape']);
    expect(cfg.combos[2]!.rules).toEqual([{ when: { hasTools: true }, prefer: ['local/m1'] }, { when: { minPromptTokens: 4000 }, prefer: ['local/m1'] }]);
    expect(cfg.settings).toEqual({ maxAttempts: 10, retryWaitMaxMs: 2000, streamReadinessTimeoutMs: 60000, rateLimitCooldownMs: 5000 });
  });

  it('reads environment secrets and key hashes', () => {
    const cfg = parseConfigText(
      'providers: [{id: a, kind: claude, base_url: "http://x", api_key_env: K}]\nkeys: [{name: k, key_sha256: "' + 'A'.repeat(64) + '"}]',
      { K: 'secret' },
      0,
    );
    expect(cfg.providers[0]).toMatchObject({ kind: 'anthropic', accounts: [{ apiKey: 'secret' }] });
    expect(cfg.keys[0]!.hash).toBe('a'.repeat(64));
  });
});

describe('gateway.yaml runtime sections', () => {
  it('camelises and checks the resilience, cache and concurrency sections (ids kept as they are)', () => {
    const cfg = parseConfigText(
      `
resilience:
  provider_breaker: {apikey: {failure_threshold: 3, degradation_threshold: 2}}
  accounts: {strategy: round-robin, per_provider: {my_prov: fill-first}}
  provider_profiles: {my_prov: local}
cache: {mode: all, memory_max_size: 10}
concurrency: {global: 4, per_provider: {my_prov: 2}}
`,
      {},
      0,
    );
    expect(cfg.sections).toEqual({
      resilience: { providerBreaker: { apikey: { failureThreshold: 3, degradationThreshold: 2 } }, accounts: { strategy: 'round-robin', perProvider: { my_prov: 'fill-first' } }, providerProfiles: { my_prov: 'local' } },
      cache: { mode: 'all', memoryMaxSize: 10 },
      concurrency: { global: 4, perProvider: { my_prov: 2 } },
    });
    expect(() => parseConfigText('resilience: {provider_breaker: {apikey: {degradation_threshold: 20}}}', {}, 0)).toThrow(/degradationThreshold \(20\) must not exceed failureThreshold \(12\)/);
    expect(() => parseConfigText('cache: {mode: sometimes}', {}, 0)).toThrow(/cache\/mode/);
    expect(() => parseConfigText('concurrency: {bogus: 1}', {}, 0)).toThrow(/unknown property bogus/);
  });
});
