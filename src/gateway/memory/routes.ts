/**
 * Persistent memory (management auth):
 *   GET  /api/memory            list: apiKeyId, type, sessionId, scope, q; offset/limit or page/limit
 *   POST /api/memory            {content, key, type?, sessionId?, apiKeyId?, metadata?, expiresAt?} or {scope, type, content, metadata?}
 *   GET/PUT/DELETE /api/memory/{id}
 *   GET  /api/memory/search     q (required) ranked by FTS5 BM25; apiKeyId, sessionId, type, scope, limit
 *   GET  /api/memory/health     the FTS5 index's integrity and the injection settings
 *   GET  /api/memory/stats      counts by type and scope
 *   POST /api/memory/clear      delete what {apiKeyId?, sessionId?, type?, scope?} selects ({} = everything); {expired: true} only the expired
 */
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { RequestContext } from '../../http/context.js';
import { badRequest, notFound } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { intQuery, ok, pageQuery, readPlainObject, validated } from '../routes/common.js';
import type { MemoryConfig } from './config.js';
import type { MemoryData } from './data.js';
import { MEMORY_SCOPES, MEMORY_TYPES, type MemoryFilter, type MemoryRecord, type MemoryScope, type MemoryType } from './store.js';

export interface MemoryRouteDeps {
  store: MemoryData;
  config: () => MemoryConfig;
  now: () => number;
  /** Whether an API key id exists (memories bound to a key must name a real one). */
  keyExists: (id: string) => boolean;
}

const ident = Type.String({ minLength: 1, maxLength: 256 });
const fields = {
  content: Type.String({ minLength: 1, maxLength: 65_536 }),
  key: Type.String({ maxLength: 256 }),
  type: Type.Union(MEMORY_TYPES.map((t) => Type.Literal(t))),
  scope: Type.Union(MEMORY_SCOPES.map((s) => Type.Literal(s))),
  sessionId: ident,
  apiKeyId: ident,
  metadata: Type.Record(Type.String(), Type.Unknown()),
  expiresAt: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 0 }), Type.Null()]),
};
const validateCreate = compile(
  Type.Object(
    {
      content: fields.content,
      key: Type.Optional(fields.key),
      type: Type.Optional(fields.type),
      scope: Type.Optional(fields.scope),
      sessionId: Type.Optional(fields.sessionId),
      apiKeyId: Type.Optional(fields.apiKeyId),
      metadata: Type.Optional(fields.metadata),
      expiresAt: Type.Optional(fields.expiresAt),
    },
    { additionalProperties: false },
  ),
);
const validatePatch = compile(
  Type.Object(
    {
      content: Type.Optional(fields.content),
      key: Type.Optional(fields.key),
      type: Type.Optional(fields.type),
      scope: Type.Optional(fields.scope),
      sessionId: Type.Optional(Type.Union([fields.sessionId, Type.Null()])),
      apiKeyId: Type.Optional(Type.Union([fields.apiKeyId, Type.Null()])),
      metadata: Type.Optional(fields.metadata),
      expiresAt: Type.Optional(fields.expiresAt),
    },
    { additionalProperties: false },
  ),
);
const validateClear = compile(
  Type.Object(
    { apiKeyId: Type.Optional(fields.apiKeyId), sessionId: Type.Optional(fields.sessionId), type: Type.Optional(fields.type), scope: Type.Optional(fields.scope), expired: Type.Optional(Type.Boolean()) },
    { additionalProperties: false },
  ),
);

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

export function memoryView(m: MemoryRecord): Record<string, unknown> {
  return {
    id: m.id,
    key: m.key,
    content: m.content,
    type: m.type,
    scope: m.scope,
    sessionId: m.sessionId ?? null,
    apiKeyId: m.apiKeyId ?? null,
    metadata: m.metadata,
    createdAt: iso(m.createdAt),
    updatedAt: iso(m.updatedAt),
    expiresAt: iso(m.expiresAt),
  };
}

function parseExpiry(v: string | number | null | undefined): number | undefined {
  if (v === undefined || v === null) return undefined;
  const ms = typeof v === 'number' ? v : /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(ms)) throw badRequest(`expiresAt: ${JSON.stringify(v)} is not an ISO date/time or epoch milliseconds`);
  return ms;
}

/** The scope a memory gets when the body names none, and the check that the ids match it. */
function settleScope(scope: MemoryScope | undefined, apiKeyId: string | undefined, sessionId: string | undefined): MemoryScope {
  const s = scope ?? (sessionId !== undefined ? 'session' : apiKeyId !== undefined ? 'apiKey' : 'global');
  if (s === 'session' && sessionId === undefined) throw badRequest('scope session needs sessionId');
  if (s === 'apiKey' && apiKeyId === undefined) throw badRequest('scope apiKey needs apiKeyId');
  if (s === 'apiKey' && sessionId !== undefined) throw badRequest('scope apiKey takes no sessionId (use scope session)');
  if (s === 'global' && (apiKeyId !== undefined || sessionId !== undefined)) throw badRequest('scope global takes neither apiKeyId nor sessionId');
  return s;
}

function filterOf(ctx: RequestContext): MemoryFilter {
  const q = (n: string) => {
    const v = ctx.query.get(n);
    return v === null || v === '' ? undefined : v;
  };
  const type = q('type');
  if (type !== undefined && !(MEMORY_TYPES as readonly string[]).includes(type)) throw badRequest(`query parameter type must be one of ${MEMORY_TYPES.join(', ')}`);
  const scope = q('scope');
  if (scope !== undefined && !(MEMORY_SCOPES as readonly string[]).includes(scope)) throw badRequest(`query parameter scope must be one of ${MEMORY_SCOPES.join(', ')}`);
  const f: MemoryFilter = {};
  if (q('apiKeyId') !== undefined) f.apiKeyId = q('apiKeyId');
  if (q('sessionId') !== undefined) f.sessionId = q('sessionId');
  if (type !== undefined) f.type = type as MemoryType;
  if (scope !== undefined) f.scope = scope as MemoryScope;
  if (q('q') !== undefined) f.q = q('q');
  return f;
}

export function memoryRoutes(r: Router, d: MemoryRouteDeps): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const checkKey = (id: string | undefined) => {
    if (id !== undefined && !d.keyExists(id)) throw badRequest(`apiKeyId: no API key ${JSON.stringify(id)}`);
  };
  const find = async (ctx: RequestContext): Promise<MemoryRecord> => {
    const x = await d.store.get(ctx.params.id!);
    if (!x) throw notFound(`memory ${ctx.params.id} not found`);
    return x;
  };

  m(
    r.get('/api/memory', async (ctx) => {
      const { limit, offset, page } = pageQuery(ctx);
      const f = { ...filterOf(ctx), now: d.now() };
      const { rows, total } = await d.store.list(f, offset, limit);
      const byType: Record<string, number> = {};
      for (const x of rows) byType[x.type] = (byType[x.type] ?? 0) + 1;
      ok(ctx, { memories: rows.map(memoryView), stats: { total, byType }, total, offset, limit, page });
    }),
  );
  m(
    r.post('/api/memory', async (ctx) => {
      const b = validated(validateCreate, await readPlainObject(ctx));
      checkKey(b.apiKeyId);
      const now = d.now();
      const rec: MemoryRecord = {
        id: `mem_${randomBytes(12).toString('base64url')}`,
        key: b.key ?? '',
        content: b.content,
        type: b.type ?? 'FACTUAL',
        scope: settleScope(b.scope, b.apiKeyId, b.sessionId),
        ...(b.sessionId !== undefined ? { sessionId: b.sessionId } : {}),
        ...(b.apiKeyId !== undefined ? { apiKeyId: b.apiKeyId } : {}),
        metadata: b.metadata ?? {},
        createdAt: now,
        updatedAt: now,
      };
      const exp = parseExpiry(b.expiresAt);
      if (exp !== undefined) rec.expiresAt = exp;
      await d.store.save(rec);
      ok(ctx, { success: true, id: rec.id, memory: memoryView(rec) }, 201);
    }),
  );
  m(
    r.get('/api/memory/search', async (ctx) => {
      const f = filterOf(ctx);
      if (f.q === undefined) throw badRequest('query parameter q is required');
      const limit = intQuery(ctx, 'limit', 20, 1, 200);
      const { q, ...rest } = f;
      const results = (await d.store.search(q, { ...rest, now: d.now() }, limit)).map((x) => ({ ...memoryView(x.memory), score: -x.score }));
      ok(ctx, { query: q, results, total: results.length });
    }),
  );
  m(
    r.get('/api/memory/health', async (ctx) => {
      const problem = await d.store.integrity();
      const s = await d.store.stats(d.now());
      const c = d.config();
      ok(ctx, { status: problem ? 'degraded' : 'ok', fts5: problem ? problem : 'ok', memories: s.total, expired: s.expired, injection: { enabled: c.inject, maxTokens: c.maxTokens, maxItems: c.maxItems } }, problem ? 503 : 200);
    }),
  );
  m(r.get('/api/memory/stats', async (ctx) => ok(ctx, await d.store.stats(d.now()))));
  m(
    r.post('/api/memory/clear', async (ctx) => {
      const b = validated(validateClear, await readPlainObject(ctx, true));
      const cleared = b.expired ? await d.store.deleteExpired(d.now()) : await d.store.clear({ apiKeyId: b.apiKeyId, sessionId: b.sessionId, type: b.type, scope: b.scope });
      ok(ctx, { success: true, cleared });
    }),
  );
  m(r.get('/api/memory/:id', async (ctx) => ok(ctx, memoryView(await find(ctx)))));
  m(
    r.put('/api/memory/:id', async (ctx) => {
      const prev = await find(ctx);
      const b = validated(validatePatch, await readPlainObject(ctx));
      if (b.apiKeyId) checkKey(b.apiKeyId);
      const apiKeyId = b.apiKeyId === null ? undefined : (b.apiKeyId ?? prev.apiKeyId);
      const sessionId = b.sessionId === null ? undefined : (b.sessionId ?? prev.sessionId);
      const scopeChanges = b.scope !== undefined || b.apiKeyId !== undefined || b.sessionId !== undefined;
      const next: MemoryRecord = {
        id: prev.id,
        key: b.key ?? prev.key,
        content: b.content ?? prev.content,
        type: b.type ?? prev.type,
        scope: scopeChanges ? settleScope(b.scope, apiKeyId, sessionId) : prev.scope,
        ...(sessionId !== undefined ? { sessionId } : {}),
        ...(apiKeyId !== undefined ? { apiKeyId } : {}),
        metadata: b.metadata ?? prev.metadata,
        createdAt: prev.createdAt,
        updatedAt: d.now(),
      };
      const exp = b.expiresAt === undefined ? prev.expiresAt : parseExpiry(b.expiresAt);
      if (exp !== undefined) next.expiresAt = exp;
      await d.store.save(next);
      ok(ctx, memoryView(next));
    }),
  );
  m(
    r.delete('/api/memory/:id', async (ctx) => {
      const x = await find(ctx);
      await d.store.delete(x.id);
      ok(ctx, { success: true, id: x.id, deleted: true });
    }),
  );
}
