/**
 * /api/providers*: provider connections (list, create, get, update, delete, test, models, validate,
 * bulk key import, heterogeneous import with per-row results). Providers from gateway.yaml are listed
 * but read-only here (409: edit the file).
 */
import { upstreamOptions } from '../../completion.js';
import { badRequest, conflict, HttpError, notFound } from '../../../http/errors.js';
import { readBody, mediaType, parseJsonBody, PARSE_IN_PIECES_BYTES } from '../../../http/body.js';
import type { RequestContext } from '../../../http/context.js';
import type { Router } from '../../../http/router.js';
import { textOf } from '../../canonical.js';
import { keylessAccount } from '../../routing/policy.js';
import { callUpstream, isUpstreamError, listUpstreamModels, modelCapabilities } from '../../providers/index.js';
import { toConnection, type ProviderRuntime } from '../../catalog.js';
import type { GatewayServices } from '../../services.js';
import { publicSpec, type ProviderAccount, type ProviderConfig } from '../../types.js';
import { camelizeKeys, MANAGEMENT_BODY_LIMIT, ok, providerView, readObject } from '../common.js';
import { accountStates, breakerView } from '../../resilience/views.js';
import { csvObjects } from './csv.js';
import { domainHttpError } from '../errors.js';
import { newAccountId, providerFromCreate, providerFromUpdate } from './provider-input.js';

export interface ConnectionTest {
  ok: boolean;
  latencyMs: number;
  method: 'models' | 'chat';
  status?: number;
  error?: string;
  models?: number;
  sample?: string;
}

/** Try a provider: list its models, or send a one-token chat to `model` when given. */
export async function testConnection(svc: GatewayServices, p: ProviderConfig, model?: string, account?: ProviderAccount): Promise<ConnectionTest> {
  const conn = toConnection(p, svc.state.catalog.settings);
  const acc = account ?? p.accounts.find((a) => a.enabled) ?? keylessAccount(p.id);
  const t0 = svc.clock.now();
  const signal = AbortSignal.timeout(30_000);
  try {
    if (model) {
      const r = await callUpstream(
        conn,
        { id: acc.id, apiKey: acc.apiKey },
        { model, messages: [{ role: 'user', content: [{ type: 'text', text: 'ping' }] }], maxTokens: 1, stream: false },
        upstreamOptions(svc, p.id, acc.id, signal),
      );
      const sample = r.stream ? '' : textOf(r.response.content).slice(0, 80);
      if (r.stream) r.cancel();
      return { ok: true, latencyMs: svc.clock.now() - t0, method: 'chat', sample };
    }
    const models = await listUpstreamModels(conn, { id: acc.id, apiKey: acc.apiKey }, upstreamOptions(svc, p.id, acc.id, signal));
    return { ok: true, latencyMs: svc.clock.now() - t0, method: 'models', models: models.length };
  } catch (e) {
    return {
      ok: false,
      latencyMs: svc.clock.now() - t0,
      method: model ? 'chat' : 'models',
      // The error's message, not the upstream's raw text (a page that is not JSON is not echoed).
      ...(isUpstreamError(e) ? { status: e.status, error: e.message } : { error: (e as Error).message }),
    };
  }
}

function apiProvider(svc: GatewayServices, id: string): ProviderRuntime {
  const rt = svc.state.catalog.providers.get(id);
  if (!rt) throw notFound(`provider ${id} not found`);
  if (rt.config.source === 'file') throw conflict(`provider ${id} is defined in gateway.yaml; edit the file and reload`);
  return rt;
}

export function createProvider(svc: GatewayServices, raw: unknown, upsert: boolean): { provider: ProviderConfig; created: boolean } {
  const now = svc.clock.now();
  const p = providerFromCreate(raw, now);
  const existing = svc.state.catalog.providers.get(p.id);
  if (existing?.config.source === 'file') throw conflict(`provider ${p.id} is defined in gateway.yaml`);
  if (existing || svc.state.db.providerExists(p.id)) {
    if (!upsert) throw conflict(`provider ${p.id} already exists`);
    const prev = existing?.config ?? p;
    const { provider } = providerFromUpdate({ ...prev, source: 'api' }, raw, now);
    svc.state.db.transaction(() => {
      svc.state.db.saveProvider(provider);
      if ((raw as { models?: unknown }).models !== undefined) svc.state.db.replaceModels(provider.id, provider.models, now);
    });
    return { provider, created: false };
  }
  svc.state.db.transaction(() => {
    svc.state.db.saveProvider(p);
    svc.state.db.replaceModels(p.id, p.models, now);
  });
  return { provider: p, created: true };
}

/** Rows of an import body: JSON `{providers: [...]}`, a JSON array, `{csv: "..."}` or a text/csv body. */
async function importRows(ctx: RequestContext): Promise<{ rows: unknown[]; upsert: boolean }> {
  const type = mediaType(ctx);
  const buf = await readBody(ctx, MANAGEMENT_BODY_LIMIT);
  const upsertQuery = /^(1|true)$/i.test(ctx.query.get('upsert') ?? '');
  if (type === 'text/csv' || type === 'application/csv') return { rows: csvRows(buf.toString('utf8')), upsert: upsertQuery };
  if (type !== '' && type !== 'application/json' && !type.endsWith('+json')) {
    throw new HttpError(415, `unsupported media type "${type}"; send application/json or text/csv`);
  }
  if (buf.length <= PARSE_IN_PIECES_BYTES && !buf.toString('utf8').trim()) throw badRequest('request body is empty');
  const body = await parseJsonBody(buf);
  if (Array.isArray(body)) return { rows: body, upsert: upsertQuery };
  if (body === null || typeof body !== 'object') throw badRequest('import body must be an array, {providers: [...]} or {csv: "..."}');
  const o = body as Record<string, unknown>;
  const upsert = upsertQuery || o.upsert === true;
  if (typeof o.csv === 'string') return { rows: csvRows(o.csv), upsert };
  if (Array.isArray(o.providers)) return { rows: o.providers, upsert };
  throw badRequest('import body must be an array, {providers: [...]} or {csv: "..."}');
}

/** CSV columns: id, kind, base_url, api_key (or api_keys separated by ';'), name, models (';' separated), enabled, priority. */
function csvRows(text: string): unknown[] {
  let objs: Record<string, string>[];
  try {
    objs = csvObjects(text);
  } catch (e) {
    throw badRequest(`invalid CSV: ${(e as Error).message}`);
  }
  return objs.map((o) => {
    const row: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) {
      const key = k.toLowerCase().replace(/[\s-]+/g, '_');
      if (key === 'models' || key === 'api_keys') row[key] = v.split(/[;|]/).map((s) => s.trim()).filter(Boolean);
      else if (key === 'enabled') row[key] = !/^(0|false|no|off)$/i.test(v);
      else if (key === 'priority' || key === 'timeout_ms') row[key] = /^-?\d+$/.test(v) ? Number(v) : v;
      else row[key] = v;
    }
    return row;
  });
}

/**
 * A provider as the API shows it, each account with its connection cool-down (`rateLimitedUntil`,
 * null when usable; backoff level; last error): the seed reads cool-downs from the connection.
 */
function withAccountStates(svc: GatewayServices, rt: ProviderRuntime, now: number): Record<string, unknown> {
  const view = providerView(rt.config);
  const states = new Map(accountStates(svc, rt, now).map((a) => [a.accountId, a]));
  const accounts = (view.accounts as Record<string, unknown>[]).map((a) => {
    const st = states.get(a.id as string);
    return st ? { ...a, available: st.available, rateLimitedUntil: st.rateLimitedUntil, backoffLevel: st.backoffLevel, ...(st.reason ? { lastError: st.lastError, lastStatus: st.lastStatus } : {}) } : a;
  });
  return { ...view, accounts };
}

export function providerRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');

  m(
    r.get('/api/providers', (ctx) => {
      const c = svc.state.catalog;
      const now = svc.clock.now();
      ok(ctx, { providers: c.ordered.map((p) => withAccountStates(svc, p, now)), shadowed: c.shadowed });
    }),
  );

  m(
    r.post('/api/providers', async (ctx) => {
      const body = await readObject(ctx);
      const { provider } = createProvider(svc, body, false);
      await svc.state.commit({ providers: [provider.id] });
      ok(ctx, providerView(svc.state.catalog.providers.get(provider.id)?.config ?? provider), 201);
    }),
  );

  m(
    r.post('/api/providers/validate', async (ctx) => {
      const body = await readObject(ctx);
      const test = body.test !== false;
      delete body.test;
      const model = typeof body.model === 'string' ? body.model : undefined;
      delete body.model;
      if (body.id === undefined) body.id = 'validate';
      const p = providerFromCreate(body, svc.clock.now());
      const result = test ? await testConnection(svc, p, model) : undefined;
      ok(ctx, { valid: result ? result.ok : true, provider: providerView(p), ...(result ? { test: result } : {}) });
    }),
  );

  m(
    r.post('/api/providers/bulk', async (ctx) => {
      const body = await readObject(ctx);
      const id = body.provider ?? body.providerId ?? body.id;
      if (typeof id !== 'string' || !id) throw badRequest('provider is required');
      const rt = apiProvider(svc, id);
      let keys: unknown[];
      if (typeof body.apiKeys === 'string' || typeof body.keys === 'string') keys = String(body.apiKeys ?? body.keys).split(/\r?\n|,/);
      else if (Array.isArray(body.apiKeys)) keys = body.apiKeys;
      else if (Array.isArray(body.keys)) keys = body.keys;
      else throw badRequest('apiKeys must be an array of keys or a newline-separated string');
      if (keys.length > 1000) throw badRequest('at most 1000 keys per request');
      const prefix = typeof body.namePrefix === 'string' && body.namePrefix ? body.namePrefix : 'key';
      const known = new Set(rt.config.accounts.map((a) => a.apiKey));
      const results: Record<string, unknown>[] = [];
      const added: ProviderAccount[] = [];
      const base = rt.config.accounts.length;
      keys.forEach((k, index) => {
        const key = typeof k === 'string' ? k.trim() : '';
        if (typeof k !== 'string') return results.push({ index, status: 'invalid', error: 'not a string' });
        if (!key) return results.push({ index, status: 'skipped', error: 'empty' });
        if (known.has(key)) return results.push({ index, status: 'duplicate' });
        known.add(key);
        const acc: ProviderAccount = { id: newAccountId(), name: `${prefix}-${base + added.length + 1}`, apiKey: key, enabled: true, priority: base + added.length };
        added.push(acc);
        results.push({ index, status: 'added', accountId: acc.id, name: acc.name });
      });
      if (added.length > 0) {
        svc.state.db.addAccounts(id, added, svc.clock.now());
        await svc.state.commit({ providers: [id] });
      }
      ok(ctx, {
        provider: id,
        added: added.length,
        duplicates: results.filter((x) => x.status === 'duplicate').length,
        failed: results.filter((x) => x.status === 'invalid').length,
        results,
      });
    }),
  );

  m(
    r.post('/api/providers/import', async (ctx) => {
      const { rows, upsert } = await importRows(ctx);
      if (rows.length > 1000) throw badRequest('at most 1000 providers per import');
      const results: Record<string, unknown>[] = [];
      let created = 0;
      let updated = 0;
      const written: string[] = [];
      for (const [i, raw] of rows.entries()) {
        const id = raw && typeof raw === 'object' ? (raw as Record<string, unknown>).id : undefined;
        try {
          const r2 = createProvider(svc, camelizeKeys(raw), upsert);
          if (r2.created) created++;
          else updated++;
          written.push(r2.provider.id);
          results.push({ row: i, id: r2.provider.id, status: r2.created ? 'created' : 'updated' });
        } catch (e) {
          const status = domainHttpError(e)?.status ?? (e instanceof HttpError ? e.status : 500);
          results.push({ row: i, ...(typeof id === 'string' ? { id } : {}), status: 'error', code: status, error: (e as Error).message });
        }
      }
      if (written.length > 0) await svc.state.commit({ providers: written });
      ok(ctx, { total: rows.length, created, updated, failed: rows.length - created - updated, results });
    }),
  );

  m(
    r.get('/api/providers/:id', (ctx) => {
      const rt = svc.state.catalog.providers.get(ctx.params.id!);
      if (!rt) throw notFound(`provider ${ctx.params.id} not found`);
      const now = svc.clock.now();
      ok(ctx, { ...withAccountStates(svc, rt, now), breaker: breakerView(svc, rt.config.id, now) });
    }),
  );

  const update = async (ctx: RequestContext) => {
    const rt = apiProvider(svc, ctx.params.id!);
    const body = await readObject(ctx);
    const now = svc.clock.now();
    const { provider, models } = providerFromUpdate(rt.config, body, now);
    svc.state.db.transaction(() => {
      svc.state.db.saveProvider(provider);
      if (models) svc.state.db.replaceModels(provider.id, models, now);
    });
    await svc.state.commit({ providers: [provider.id] });
    // Seed: a connection's cool-down is cleared by updating the connection.
    svc.policy.cooldowns.clear(provider.id);
    svc.resilienceState.flush();
    ok(ctx, providerView(svc.state.catalog.providers.get(provider.id)!.config));
  };
  m(r.put('/api/providers/:id', update));
  m(r.patch('/api/providers/:id', update));

  m(
    r.delete('/api/providers/:id', async (ctx) => {
      apiProvider(svc, ctx.params.id!);
      svc.state.db.deleteProvider(ctx.params.id!);
      await svc.state.commit({ providers: [ctx.params.id!] });
      ok(ctx, { id: ctx.params.id, deleted: true });
    }),
  );

  m(
    r.post('/api/providers/:id/test', async (ctx) => {
      const rt = svc.state.catalog.providers.get(ctx.params.id!);
      if (!rt) throw notFound(`provider ${ctx.params.id} not found`);
      const body = await readObject(ctx, true);
      const model = typeof body.model === 'string' && body.model ? body.model : undefined;
      let account: ProviderAccount | undefined;
      if (body.account !== undefined) {
        account = rt.config.accounts.find((a) => a.id === body.account || a.name === body.account);
        if (!account) throw badRequest(`account ${String(body.account)} not found on provider ${rt.config.id}`);
      }
      const result = await testConnection(svc, rt.config, model, account);
      ok(ctx, { provider: rt.config.id, ...result });
    }),
  );

  m(
    r.get('/api/providers/:id/models', async (ctx) => {
      const rt = svc.state.catalog.providers.get(ctx.params.id!);
      if (!rt) throw notFound(`provider ${ctx.params.id} not found`);
      const declared = rt.config.models.map((spec) => ({ ...publicSpec(spec), capabilities: modelCapabilities(rt.conn, spec.id) }));
      const wantUpstream = !/^(0|false|no)$/i.test(ctx.query.get('upstream') ?? '');
      let upstream: unknown[] | null = null;
      let upstreamError: string | undefined;
      if (wantUpstream) {
        const acc = rt.config.accounts.find((a) => a.enabled) ?? keylessAccount(rt.config.id);
        try {
          upstream = await listUpstreamModels(rt.conn, { id: acc.id, apiKey: acc.apiKey }, upstreamOptions(svc, rt.config.id, acc.id, AbortSignal.timeout(30_000)));
        } catch (e) {
          upstreamError = isUpstreamError(e) ? `${e.status} ${e.message}` : (e as Error).message;
        }
      }
      ok(ctx, { provider: rt.config.id, models: declared, upstream, ...(upstreamError ? { upstreamError } : {}) });
    }),
  );
}
