/**
 * Policies and compliance (management auth):
 *   GET/POST /api/policies; DELETE /api/policies?id= (the seed's form); GET/PUT/DELETE /api/policies/{id}
 *   GET /api/compliance/audit-log   filters actor, method, path (prefix), since, until; limit, offset
 */
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { RequestContext } from '../../http/context.js';
import { badRequest, notFound } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { intQuery, ok, readPlainObject, timeQuery, validated } from '../routes/common.js';
import type { AuditLog } from './audit.js';
import type { Policies, Policy } from './policies.js';

const models = Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 1000 });
const fields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  apiKeyId: Type.Union([Type.String({ minLength: 1, maxLength: 256 }), Type.Null()]),
  allowModels: models,
  denyModels: models,
  maxTokens: Type.Union([Type.Integer({ minimum: 1, maximum: 10_000_000 }), Type.Null()]),
  enabled: Type.Boolean(),
};
const validateCreate = compile(
  Type.Object(
    { name: fields.name, apiKeyId: Type.Optional(fields.apiKeyId), allowModels: Type.Optional(fields.allowModels), denyModels: Type.Optional(fields.denyModels), maxTokens: Type.Optional(fields.maxTokens), enabled: Type.Optional(fields.enabled) },
    { additionalProperties: false },
  ),
);
const validatePatch = compile(
  Type.Object(
    { name: Type.Optional(fields.name), apiKeyId: Type.Optional(fields.apiKeyId), allowModels: Type.Optional(fields.allowModels), denyModels: Type.Optional(fields.denyModels), maxTokens: Type.Optional(fields.maxTokens), enabled: Type.Optional(fields.enabled) },
    { additionalProperties: false },
  ),
);

const iso = (ms: number) => new Date(ms).toISOString();
const view = (p: Policy) => ({ ...p, apiKeyId: p.apiKeyId ?? null, maxTokens: p.maxTokens ?? null, scope: p.apiKeyId ? 'key' : 'global', createdAt: iso(p.createdAt), updatedAt: iso(p.updatedAt) });

export function complianceRoutes(r: Router, policies: Policies, audit: AuditLog, keyExists: (id: string) => boolean, now: () => number): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const byId = (id: string): Policy => {
    const p = policies.get(id);
    if (!p) throw notFound(`policy ${id} not found`);
    return p;
  };
  const find = (ctx: RequestContext): Policy => byId(ctx.params.id!);
  const remove = (ctx: RequestContext, p: Policy) => {
    policies.delete(p.id);
    ok(ctx, { id: p.id, deleted: true });
  };
  const checkKey = (id: string | null | undefined) => {
    if (id && !keyExists(id)) throw badRequest(`apiKeyId: no API key ${JSON.stringify(id)}`);
  };

  m(r.get('/api/policies', (ctx) => ok(ctx, { policies: policies.list().map(view) })));
  m(
    r.post('/api/policies', async (ctx) => {
      const b = validated(validateCreate, await readPlainObject(ctx));
      checkKey(b.apiKeyId);
      const t = now();
      const p: Policy = { id: `pol_${randomBytes(6).toString('hex')}`, name: b.name, ...(b.apiKeyId ? { apiKeyId: b.apiKeyId } : {}), allowModels: b.allowModels ?? [], denyModels: b.denyModels ?? [], ...(b.maxTokens ? { maxTokens: b.maxTokens } : {}), enabled: b.enabled ?? true, createdAt: t, updatedAt: t };
      policies.save(p);
      ok(ctx, view(p), 201);
    }),
  );
  m(
    r.delete('/api/policies', (ctx) => {
      const id = ctx.query.get('id');
      if (!id) throw badRequest('id is required (DELETE /api/policies?id=ID)');
      remove(ctx, byId(id));
    }),
  );
  m(r.get('/api/policies/:id', (ctx) => ok(ctx, view(find(ctx)))));
  m(
    r.put('/api/policies/:id', async (ctx) => {
      const prev = find(ctx);
      const b = validated(validatePatch, await readPlainObject(ctx));
      checkKey(b.apiKeyId);
      const next: Policy = {
        id: prev.id,
        name: b.name ?? prev.name,
        allowModels: b.allowModels ?? prev.allowModels,
        denyModels: b.denyModels ?? prev.denyModels,
        enabled: b.enabled ?? prev.enabled,
        createdAt: prev.createdAt,
        updatedAt: now(),
      };
      const apiKeyId = b.apiKeyId === null ? undefined : (b.apiKeyId ?? prev.apiKeyId);
      const maxTokens = b.maxTokens === null ? undefined : (b.maxTokens ?? prev.maxTokens);
      if (apiKeyId) next.apiKeyId = apiKeyId;
      if (maxTokens) next.maxTokens = maxTokens;
      policies.save(next);
      ok(ctx, view(next));
    }),
  );
  m(
    r.delete('/api/policies/:id', (ctx) => remove(ctx, find(ctx))),
  );
  m(
    r.get('/api/compliance/audit-log', (ctx) => {
      const limit = intQuery(ctx, 'limit', 100, 1, 1000);
      const offset = intQuery(ctx, 'offset', 0, 0, 1_000_000_000);
      const { rows, total } = audit.list(
        { actor: ctx.query.get('actor') || undefined, method: ctx.query.get('method') || undefined, path: ctx.query.get('path') || undefined, since: timeQuery(ctx, 'since'), until: timeQuery(ctx, 'until') },
        offset,
        limit,
      );
      ok(ctx, { entries: rows.map((e) => ({ ...e, at: iso(e.ts) })), total, limit, offset });
    }),
  );
}
