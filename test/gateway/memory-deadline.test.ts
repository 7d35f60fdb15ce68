/**
 * Memory injection never holds a chat request: a lookup in the shared database that has not
 * answered within MEMORY_DEADLINE_MS (a frozen PostgreSQL) is skipped and counted; one that answers
 * in time is used.
 */
import { describe, expect, it } from 'vitest';
import { injectContext, MEMORY_DEADLINE_MS } from '../../src/gateway/routes/inference/context-injection.js';
import type { GatewayServices } from '../../src/gateway/services.js';
import type { CanonicalRequest } from '../../src/gateway/canonical.js';

function services(lookup: () => Promise<unknown[]>) {
  const skipped: string[] = [];
  const svc = {
    state: { fileConfig: { memory: { inject: true, maxTokens: 2000, maxItems: 20 } } },
    memory: { any: () => true, forCaller: lookup },
    clock: { now: () => Date.now() },
    skills: { store: { auto: () => [] } },
    prometheus: { memorySkipped: (r: string) => skipped.push(r) },
    log: { warn: () => {} },
  } as unknown as GatewayServices;
  return { svc, skipped };
}

const req = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'what do you remember?' }] }] } as unknown as CanonicalRequest;

describe('memory injection deadline', () => {
  it('a lookup that does not answer (frozen database) is skipped after the deadline and counted', async () => {
    const { svc, skipped } = services(() => new Promise(() => {}));
    const t0 = Date.now();
    const out = await injectContext(svc, {}, req, { kind: 'key' } as never, undefined);
    const waited = Date.now() - t0;
    expect(out.request).toBe(req);
    expect(waited).toBeLessThan(MEMORY_DEADLINE_MS + 200);
    expect(skipped).toEqual(['late']);
  });

  it('a lookup that answers in time is used', async () => {
    const { svc, skipped } = services(async () => [{ id: '1', content: 'likes tea', createdAt: 0 }]);
    const out = await injectContext(svc, {}, req, { kind: 'key' } as never, undefined);
    expect(JSON.stringify(out.request)).toContain('likes tea');
    expect(skipped).toEqual([]);
  });
});
