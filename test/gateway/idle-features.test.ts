/**
 * Features configured for others cost a chat request nothing: memories that belong only to other
 * keys or sessions are not looked up, a webhook that listens to other events gets no event built,
 * routing policies of other keys are not checked, and auto skills of other keys are not offered.
 * Each is answered from memory, and kept up to date when the configuration changes.
 */
import { describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { openStore } from '../../src/store/index.js';
import { GATEWAY_MIGRATIONS } from '../../src/gateway/schema.js';
import { MemoryStore, type MemoryRecord } from '../../src/gateway/memory/store.js';
import { sqliteSql } from '../../src/gateway/sql.js';
import { injectContext } from '../../src/gateway/routes/inference/context-injection.js';
import { WebhookService } from '../../src/gateway/webhooks/service.js';
import { Policies } from '../../src/gateway/ops/policies.js';
import { skillsToOffer } from '../../src/gateway/skills/tools.js';
import { Egress } from '../../src/egress/index.js';
import type { GatewayServices } from '../../src/gateway/services.js';
import type { CanonicalRequest } from '../../src/gateway/canonical.js';
import type { SkillRecord } from '../../src/gateway/skills/store.js';

const req = { model: 'm', stream: false, messages: [{ role: 'user', content: [{ type: 'text', text: 'what do you remember about deploys?' }] }] } as unknown as CanonicalRequest;

function memory(id: string, over: Partial<MemoryRecord>): MemoryRecord {
  return { id, key: '', content: 'deploys happen on Fridays', type: 'FACTUAL', scope: 'global', metadata: {}, createdAt: 1, updatedAt: 1, ...over } as MemoryRecord;
}

describe('features configured but idle', () => {
  it('memories only of other keys and sessions are not looked up; one that reaches the caller is', async () => {
    const store = new MemoryStore(sqliteSql(openStore(':memory:', GATEWAY_MIGRATIONS)));
    await store.save(memory('a', { apiKeyId: 'other', scope: 'key' }));
    await store.save(memory('b', { sessionId: 'their-session', scope: 'session' }));
    const forCaller = vi.spyOn(store, 'forCaller');
    const svc = {
      state: { fileConfig: { memory: { inject: true, maxTokens: 2000, maxItems: 20 } } },
      memory: store,
      clock: { now: () => 10 },
      skills: { store: { auto: () => [] } },
    } as unknown as GatewayServices;
    const principal = { kind: 'key', key: { id: 'mine' } } as never;

    expect(store.reaches({ apiKeyId: 'mine' })).toBe(false);
    expect(store.reaches({ apiKeyId: 'mine', sessionId: 'my-session' })).toBe(false);
    const out = await injectContext(svc, {}, req, principal, undefined);
    expect(out).toEqual({ request: req, skills: expect.any(Map) });
    expect(forCaller).not.toHaveBeenCalled();

    // Its own session's memory, its key's, an unkeyed one: each reaches it (a save updates the owners).
    expect(store.reaches({ apiKeyId: 'other' })).toBe(true);
    expect(store.reaches({ apiKeyId: 'mine', sessionId: 'their-session' })).toBe(true);
    await store.save(memory('c', { apiKeyId: 'mine', scope: 'key' }));
    expect(store.reaches({ apiKeyId: 'mine' })).toBe(true);
    const injected = (await injectContext(svc, {}, req, principal, undefined)) as { request: CanonicalRequest };
    expect(forCaller).toHaveBeenCalledTimes(1);
    expect(injected.request.system).toContain('deploys happen on Fridays');

    // A delete reads the owners again.
    await store.delete('c');
    expect(store.reaches({ apiKeyId: 'mine' })).toBe(false);
    await store.save(memory('d', {}));
    expect(store.reaches({ apiKeyId: 'mine' })).toBe(true);
    await store.clear({});
    expect(store.reaches({})).toBe(false);
  });

  it('a webhook for other events is not given request events; a refresh after a change is seen', () => {
    const db = openStore(':memory:', GATEWAY_MIGRATIONS);
    const hooks = WebhookService.local(db, new Egress({}), { now: () => 1 } as never, pino({ level: 'silent' }));
    const base = { secret: 's', description: '', enabled: true, createdAt: 1, updatedAt: 1 };
    hooks.store.save({ id: 'w1', url: 'https://hooks.example.com/a', events: ['budget.exceeded'], ...base });
    hooks.refresh();
    expect(hooks.subscribed).toBe(true);
    expect(hooks.wants('request.completed')).toBe(false);
    expect(hooks.wants('budget.exceeded')).toBe(true);
    hooks.store.save({ id: 'w2', url: 'https://hooks.example.com/b', events: ['*'], ...base });
    hooks.refresh();
    expect(hooks.wants('request.completed')).toBe(true);
  });

  it('policies of other keys are not checked; a change is seen', () => {
    const policies = new Policies(openStore(':memory:', GATEWAY_MIGRATIONS));
    const base = { allowModels: [], denyModels: [], enabled: true, createdAt: 1, updatedAt: 1 };
    policies.save({ id: 'p1', name: 'theirs', apiKeyId: 'other', maxTokens: 10, ...base });
    expect(policies.appliesTo('mine')).toBe(false);
    expect(policies.appliesTo('other')).toBe(true);
    expect(policies.maxTokens('mine', 500)).toBe(500);
    expect(() => policies.maxTokens('other', 500)).toThrow(/at most 10/);
    policies.save({ id: 'p2', name: 'everyone', ...base, denyModels: ['x/*'] });
    expect(policies.appliesTo('mine')).toBe(true);
    expect(() => policies.checkModel('mine', 'x/y', ['x/y'])).toThrow(/denies model/);
    policies.delete('p2');
    expect(policies.appliesTo('mine')).toBe(false);
  });

  it('auto skills of other keys are not offered', () => {
    const skill = (name: string, apiKeyId?: string) => ({ name, apiKeyId, description: '', schema: {} }) as unknown as SkillRecord;
    const svc = (all: SkillRecord[]) => ({ store: { auto: () => all } }) as never;
    expect(skillsToOffer(svc([skill('theirs', 'other')]), req, 'mine')).toEqual([]);
    expect(skillsToOffer(svc([skill('theirs', 'other'), skill('mine', 'mine'), skill('shared')]), req, 'mine').map((s) => s.name)).toEqual(['mine', 'shared']);
  });
});
