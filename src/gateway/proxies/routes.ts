/**
 * Outbound proxies (management auth; no per-id sub-routes, ids go in the query):
 *   GET    /api/v1/management/proxies               list; `id` one; `where_used=1` adds the assignment graph
 *   POST   /api/v1/management/proxies               add (url, or type/host/port; username, password)
 *   PATCH  /api/v1/management/proxies?id=           change
 *   DELETE /api/v1/management/proxies?id=[&force=1] delete (409 while assigned unless force)
 *   GET    /api/v1/management/proxies/assignments   filters proxy_id, scope, scope_id; resolve_connection_id
 *   PUT    /api/v1/management/proxies/assignments   set or clear one assignment; clears the dispatcher cache
 *   PUT    /api/v1/management/proxies/bulk-assign   one proxy (or none) for many scope ids
 *   GET    /api/v1/management/proxies/health        probe history (`hours`, 24)
 *   GET/PUT /api/settings/proxy, POST /api/settings/proxy/test   the global proxy
 */
import { Type, type Static } from '@sinclair/typebox';
import type { RequestContext } from '../../http/context.js';
import { badRequest } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import { parseProxyUrl, proxyUrlOf, type ProxySpec } from '../../egress/proxy.js';
import { flagQuery, intQuery, ok, readPlainObject, validated } from '../routes/common.js';
import type { GatewayServices } from '../services.js';
import { firstProviderUrl, probeProxy } from './probe.js';
import { SCOPES, proxyView, specOf, type Assignment, type AssignmentScope, type ProxyRecord, type ProxyType } from './registry.js';

const TYPES = ['http', 'https', 'socks5', 'socks5h'] as const;
const nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const proxyFields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  type: Type.Union(TYPES.map((t) => Type.Literal(t))),
  host: Type.String({ minLength: 1, maxLength: 253 }),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  username: nullable(Type.String({ maxLength: 256 })),
  password: nullable(Type.String({ maxLength: 1024 })),
  enabled: Type.Boolean(),
};
const ProxyBody = Type.Object(
  {
    name: Type.Optional(proxyFields.name),
    url: Type.Optional(proxyFields.url),
    type: Type.Optional(proxyFields.type),
    host: Type.Optional(proxyFields.host),
    port: Type.Optional(proxyFields.port),
    username: Type.Optional(proxyFields.username),
    password: Type.Optional(proxyFields.password),
    enabled: Type.Optional(proxyFields.enabled),
  },
  { additionalProperties: false },
);
const validateProxy = compile(ProxyBody);
const id = Type.String({ minLength: 1, maxLength: 256 });
const scope = Type.Union(SCOPES.map((s) => Type.Literal(s)));
const validateAssign = compile(
  Type.Object({ scope, scope_id: Type.Optional(id), scopeId: Type.Optional(id), proxy_id: Type.Optional(Type.Union([id, Type.Null()])), proxyId: Type.Optional(Type.Union([id, Type.Null()])) }, { additionalProperties: false }),
);
const ids = Type.Array(id, { minItems: 1, maxItems: 10_000 });
const validateBulk = compile(
  Type.Object({ scope, scope_ids: Type.Optional(ids), scopeIds: Type.Optional(ids), proxy_id: Type.Optional(Type.Union([id, Type.Null()])), proxyId: Type.Optional(Type.Union([id, Type.Null()])) }, { additionalProperties: false }),
);
const validateSettings = compile(
  Type.Object({ url: Type.Optional(Type.Union([proxyFields.url, Type.Null()])), proxyId: Type.Optional(Type.Union([id, Type.Null()])), enabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
);
const validateTest = compile(Type.Object({ url: Type.Optional(proxyFields.url), proxyId: Type.Optional(id), target: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })) }, { additionalProperties: false }));

/** The global proxy PUT /api/settings/proxy makes from a URL. */
const SETTINGS_PROXY_ID = 'prx_global';

const iso = (ms: number) => new Date(ms).toISOString();

/** A URL or its parts, checked; a 400 names what is wrong. */
function specFrom(b: Static<typeof ProxyBody>, prev?: ProxyRecord): ProxySpec {
  if (b.url !== undefined) {
    if (b.type !== undefined || b.host !== undefined || b.port !== undefined) throw badRequest('give url, or type/host/port, not both');
    try {
      return parseProxyUrl(b.url);
    } catch (e) {
      throw badRequest((e as Error).message);
    }
  }
  const type = b.type ?? prev?.type ?? 'http';
  const host = b.host ?? prev?.host;
  if (!host) throw badRequest('url or host is required');
  const port = b.port ?? prev?.port ?? (type === 'http' ? 80 : type === 'https' ? 443 : 1080);
  return { protocol: `${type}:` as ProxySpec['protocol'], host: host.replace(/^\[(.*)\]$/, '$1'), port };
}

export function proxyRoutes(r: Router, svc: GatewayServices): void {
  const reg = svc.proxies;
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const now = () => svc.clock.now();

  /** Who a scope id is: a provider's id or a provider account's id (400 when neither exists). */
  const scopeName = (s: AssignmentScope, scopeId: string): string | null => {
    if (s === 'global') return null;
    for (const p of svc.state.catalog.providers.values()) {
      if (s === 'provider' && p.config.id === scopeId) return p.config.id;
      const a = s === 'connection' ? p.config.accounts.find((x) => x.id === scopeId) : undefined;
      if (a) return `${p.config.id}/${a.name}`;
    }
    throw badRequest(`scope ${s}: no ${s === 'provider' ? 'provider' : 'provider account (connection)'} ${JSON.stringify(scopeId)}`);
  };
  const assignmentView = (a: Assignment) => {
    let name: string | null = null;
    try {
      name = scopeName(a.scope, a.scopeId);
    } catch {
      name = null; // the provider or account is gone; the assignment stays until changed
    }
    return { scope: a.scope, scopeId: a.scope === 'global' ? null : a.scopeId, name, proxyId: a.proxyId, createdAt: iso(a.createdAt) };
  };
  const withUse = (p: ProxyRecord) => ({ ...proxyView(p), whereUsed: reg.assignments({ proxyId: p.id }).map(assignmentView) });
  const idOf = (ctx: RequestContext): string => {
    const v = ctx.query.get('id') ?? (ctx.state.body as { id?: unknown } | undefined)?.id;
    if (typeof v !== 'string' || v === '') throw badRequest('id is required (query parameter)');
    return v;
  };

  m(
    r.get('/api/v1/management/proxies', (ctx) => {
      const whereUsed = flagQuery(ctx, 'where_used');
      const one = ctx.query.get('id');
      if (one) {
        const p = reg.mustGet(one);
        return ok(ctx, { proxy: whereUsed ? withUse(p) : proxyView(p) });
      }
      const list = reg.list();
      ok(ctx, { proxies: list.map((p) => (whereUsed ? withUse(p) : proxyView(p))), total: list.length });
    }),
  );
  m(
    r.post('/api/v1/management/proxies', async (ctx) => {
      const b = validated(validateProxy, await readPlainObject(ctx));
      const spec = specFrom(b);
      const t = now();
      const p: ProxyRecord = {
        id: reg.newId(),
        name: b.name ?? `${spec.host}:${spec.port}`,
        type: spec.protocol.slice(0, -1) as ProxyType,
        host: spec.host,
        port: spec.port,
        enabled: b.enabled ?? true,
        createdAt: t,
        updatedAt: t,
      };
      const username = b.username !== undefined ? b.username : spec.username;
      const password = b.password !== undefined ? b.password : spec.password;
      if (username) p.username = username;
      if (password) p.password = password;
      reg.save(p);
      ok(ctx, proxyView(p), 201);
    }),
  );
  m(
    r.patch('/api/v1/management/proxies', async (ctx) => {
      const body = await readPlainObject(ctx);
      const prev = reg.mustGet(idOf(ctx));
      const { id: _id, ...rest } = body;
      const b = validated(validateProxy, rest);
      const spec = b.url !== undefined || b.host !== undefined || b.type !== undefined || b.port !== undefined ? specFrom(b, prev) : undefined;
      const next: ProxyRecord = { ...prev, name: b.name ?? prev.name, enabled: b.enabled ?? prev.enabled, updatedAt: now() };
      if (spec) Object.assign(next, { type: spec.protocol.slice(0, -1) as ProxyType, host: spec.host, port: spec.port });
      const username = b.username !== undefined ? b.username : (spec?.username ?? prev.username);
      const password = b.password !== undefined ? b.password : (spec?.password ?? prev.password);
      delete next.username;
      delete next.password;
      if (username) next.username = username;
      if (password) next.password = password;
      reg.save(next);
      ok(ctx, proxyView(next));
    }),
  );
  m(
    r.delete('/api/v1/management/proxies', (ctx) => {
      const pid = idOf(ctx);
      const { detached } = reg.delete(pid, flagQuery(ctx, 'force'));
      ok(ctx, { id: pid, deleted: true, detached });
    }),
  );

  m(
    r.get('/api/v1/management/proxies/assignments', (ctx) => {
      const conn = ctx.query.get('resolve_connection_id');
      if (conn) {
        const name = scopeName('connection', conn)!;
        const provider = name.slice(0, name.indexOf('/'));
        const hit = reg.resolve(provider, conn);
        return ok(ctx, { connectionId: conn, provider, proxy: hit ? proxyView(hit.proxy) : null, scope: hit?.scope ?? null, scopeId: hit && hit.scope !== 'global' ? hit.scopeId : null });
      }
      const s = ctx.query.get('scope');
      if (s !== null && !SCOPES.includes(s as AssignmentScope)) throw badRequest(`scope must be one of ${SCOPES.join(', ')}`);
      const filter = {
        ...(ctx.query.get('proxy_id') ? { proxyId: ctx.query.get('proxy_id')! } : {}),
        ...(s ? { scope: s as AssignmentScope } : {}),
        ...(ctx.query.get('scope_id') ? { scopeId: ctx.query.get('scope_id')! } : {}),
      };
      ok(ctx, { assignments: reg.assignments(filter).map(assignmentView) });
    }),
  );
  m(
    r.put('/api/v1/management/proxies/assignments', async (ctx) => {
      const b = validated(validateAssign, await readPlainObject(ctx));
      const scopeId = b.scope_id ?? b.scopeId ?? '';
      if (b.scope !== 'global') {
        if (!scopeId) throw badRequest(`scope ${b.scope} needs scope_id`);
        scopeName(b.scope, scopeId);
      }
      const proxyId = b.proxy_id !== undefined ? b.proxy_id : (b.proxyId ?? null);
      const changed = reg.assign(b.scope, [scopeId], proxyId);
      reg.clearDispatchers();
      ok(ctx, { changed, assignments: reg.assignments({ scope: b.scope, scopeId: b.scope === 'global' ? '' : scopeId }).map(assignmentView) });
    }),
  );
  m(
    r.put('/api/v1/management/proxies/bulk-assign', async (ctx) => {
      const b = validated(validateBulk, await readPlainObject(ctx));
      const scopeIds = b.scope === 'global' ? [''] : (b.scope_ids ?? b.scopeIds);
      if (!scopeIds) throw badRequest(`scope ${b.scope} needs scope_ids`);
      if (b.scope !== 'global') for (const sid of scopeIds) scopeName(b.scope, sid);
      const proxyId = b.proxy_id !== undefined ? b.proxy_id : (b.proxyId ?? null);
      const changed = reg.assign(b.scope, scopeIds, proxyId);
      reg.clearDispatchers();
      ok(ctx, { changed, scope: b.scope, proxyId, scopeIds: b.scope === 'global' ? [] : scopeIds });
    }),
  );
  m(
    r.get('/api/v1/management/proxies/health', (ctx) => {
      const hours = intQuery(ctx, 'hours', 24, 1, 24 * 7);
      const probes = reg.probes(now() - hours * 3_600_000);
      const proxies = reg.list().map((p) => {
        const mine = probes.filter((x) => x.proxyId === p.id);
        const okCount = mine.filter((x) => x.ok).length;
        const latencies = mine.filter((x) => x.ok && x.latencyMs !== null).map((x) => x.latencyMs!);
        const last = mine[0];
        return {
          id: p.id,
          name: p.name,
          enabled: p.enabled,
          probes: mine.length,
          ok: okCount,
          failed: mine.length - okCount,
          successRate: mine.length ? Number((okCount / mine.length).toFixed(4)) : null,
          avgLatencyMs: latencies.length ? Math.round(latencies.reduce((a, b) => a + b, 0) / latencies.length) : null,
          lastProbeAt: last ? iso(last.ts) : null,
          lastOk: last ? last.ok : null,
          lastError: mine.find((x) => !x.ok)?.error ?? null,
          history: mine.slice(0, 100).map((x) => ({ at: iso(x.ts), ok: x.ok, latencyMs: x.latencyMs, target: x.target, error: x.error })),
        };
      });
      ok(ctx, { hours, proxies });
    }),
  );

  const globalView = () => {
    const a = reg.assignments({ scope: 'global' })[0];
    const p = a ? reg.get(a.proxyId) : undefined;
    return { enabled: p?.enabled ?? false, proxy: p ? proxyView(p) : null };
  };
  m(r.get('/api/settings/proxy', (ctx) => ok(ctx, globalView())));
  m(
    r.put('/api/settings/proxy', async (ctx) => {
      const b = validated(validateSettings, await readPlainObject(ctx));
      if (b.url !== undefined && b.proxyId !== undefined) throw badRequest('give url or proxyId, not both');
      if (b.url === null || b.proxyId === null || (b.enabled === false && b.url === undefined && b.proxyId === undefined)) {
        reg.assign('global', [], null);
      } else if (typeof b.url === 'string') {
        const spec = specFrom({ url: b.url });
        const prev = reg.get(SETTINGS_PROXY_ID);
        const t = now();
        const p: ProxyRecord = { id: SETTINGS_PROXY_ID, name: 'global', type: spec.protocol.slice(0, -1) as ProxyType, host: spec.host, port: spec.port, enabled: b.enabled ?? true, createdAt: prev?.createdAt ?? t, updatedAt: t };
        if (spec.username) p.username = spec.username;
        if (spec.password) p.password = spec.password;
        reg.save(p);
        reg.assign('global', [], p.id);
      } else if (typeof b.proxyId === 'string') {
        reg.assign('global', [], b.proxyId);
      } else if (b.enabled === true) {
        if (!reg.assignments({ scope: 'global' })[0]) throw badRequest('no global proxy to enable: give url or proxyId');
      }
      if (b.enabled !== undefined) {
        const a = reg.assignments({ scope: 'global' })[0];
        const p = a ? reg.get(a.proxyId) : undefined;
        if (p && p.enabled !== b.enabled) reg.save({ ...p, enabled: b.enabled, updatedAt: now() });
      }
      reg.clearDispatchers();
      ok(ctx, globalView());
    }),
  );
  m(
    r.post('/api/settings/proxy/test', async (ctx) => {
      const b = validated(validateTest, await readPlainObject(ctx));
      let p: ProxyRecord | undefined;
      let saved = true;
      if (b.url !== undefined) {
        const spec = specFrom({ url: b.url });
        const t = now();
        p = { id: 'prx_test', name: 'test', type: spec.protocol.slice(0, -1) as ProxyType, host: spec.host, port: spec.port, enabled: true, createdAt: t, updatedAt: t };
        if (spec.username) p.username = spec.username;
        if (spec.password) p.password = spec.password;
        saved = false;
      } else if (b.proxyId !== undefined) {
        p = reg.mustGet(b.proxyId);
      } else {
        const a = reg.assignments({ scope: 'global' })[0];
        p = a ? reg.get(a.proxyId) : undefined;
        if (!p) throw badRequest('no global proxy is set: give url or proxyId');
      }
      let target = b.target;
      if (target !== undefined) {
        try {
          const u = new URL(target);
          if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
        } catch {
          throw badRequest(`target must be an http(s) URL: ${JSON.stringify(target)}`);
        }
      }
      target ??= firstProviderUrl(svc.state.catalog);
      const res = await probeProxy(reg, svc.egress, p, target, now, 10_000, saved);
      // A proxy tried but not saved keeps no dispatcher.
      if (!saved) void svc.egress.forgetProxy(proxyUrlOf(specOf(p)));
      ok(ctx, { proxy: proxyView(p), ...res });
    }),
  );
}
