/** src/gateway/routing/resolve.ts: model ids to targets. */
import { describe, expect, it } from 'vitest';
import { resolveModel, stripNoThinking } from '../../../src/gateway/routing/resolve.js';
import { catalog } from './catalog-fixture.js';

describe('model resolution', () => {
  const c = catalog();
  it('resolves provider/model, aliases, combos, mappings and bare ids', () => {
    expect(resolveModel(c, 'a/m1')).toMatchObject({ via: 'direct', strategy: 'single', targets: [{ ref: 'a/m1', modelId: 'm1' }] });
    expect(resolveModel(c, 'a/org/model-x').targets[0]).toMatchObject({ modelId: 'org/model-x' });
    expect(resolveModel(c, 'fast')).toMatchObject({ via: 'alias', targets: [{ ref: 'a/m1' }] });
    const combo = resolveModel(c, 'combo1');
    expect(combo.via).toBe('combo');
    expect(combo.targets.map((t) => t.ref)).toEqual(['a/m1', 'a/m1', 'b/m1']);
    expect(combo.targets[2]!.weight).toBe(3);
    expect(combo.unresolved).toEqual([{ ref: 'nope/x', reason: 'unknown provider or model' }]);
    expect(resolveModel(c, 'best').combo?.name).toBe('combo1');
    expect(resolveModel(c, 'gpt-4o')).toMatchObject({ via: 'mapping', combo: { name: 'combo1' } });
    // bare ids: the highest-priority provider (b has priority -1) wins
    expect(resolveModel(c, 'shared').targets[0]!.ref).toBe('b/shared');
  });

  it('handles the no-thinking prefix', () => {
    expect(stripNoThinking('claude-gateway-no-thinking/an/claude-x')).toEqual({ model: 'an/claude-x', noThinking: true });
    expect(stripNoThinking('gateway-no-thinking/a/m1')).toEqual({ model: 'a/m1', noThinking: true });
    expect(stripNoThinking('a/foo-gateway-no-thinking/x').noThinking).toBe(false);
    expect(resolveModel(c, 'm-gateway-no-thinking/a/m1')).toMatchObject({ noThinking: true, targets: [{ ref: 'a/m1' }] });
  });

  it('rejects bad ids and unknown models', () => {
    expect(() => resolveModel(c, '')).toThrow(/required/);
    expect(() => resolveModel(c, 'a/\u0001')).toThrow(/malformed/);
    expect(() => resolveModel(c, '../etc')).toThrow(/malformed/);
    expect(() => resolveModel(c, 'zz/m1')).toThrow(expect.objectContaining({ kind: 'not-found', code: 'model_not_found' }));
    expect(() => resolveModel(c, 'unknown')).toThrow(expect.objectContaining({ kind: 'not-found', code: 'model_not_found' }));
    expect(() => resolveModel(c, 'off/m9')).toThrow(expect.objectContaining({ kind: 'not-configured', code: 'provider_disabled' }));
  });
});
