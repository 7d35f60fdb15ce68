/**
 * Sync and cloud:
 *   GET  /api/sync/cloud           sync status: the remote, last push and pull, last error (management)
 *   POST /api/sync/cloud           {action: push | pull}: write the configuration to the remote, or merge it from there
 *   POST /api/sync/initialize      the first push ({force: true} when the remote already has one)
 *   POST /api/cloud/auth           a Bearer key checked; the connections (keys masked) and aliases it can see
 *   POST /api/cloud/credentials/update   {provider, accountId?, apiKey} (a management key or the socket)
 *   POST /api/cloud/model/resolve  {model}: what it routes to, for the calling key
 *   GET  /api/cloud/models/alias   the aliases
 * The sync routes answer 503 while ctl.yaml `gateway.sync` is not set.
 */
import { Type } from '@sinclair/typebox';
import type { RequestContext } from '../../http/context.js';
import { HttpError, conflict, notFound } from '../../http/errors.js';
import type { Router } from '../../http/router.js';
import { compile } from '../../http/schema.js';
import type { Principal } from '../auth.js';
import { resolveFor } from '../completion.js';
import { ok, readPlainObject, validated } from '../routes/common.js';
import type { GatewayServices } from '../services.js';
import { maskSecret } from '../validate.js';
import { checkDocument, exportConfig, importConfig } from './document.js';
import { describeRemote, remoteCall, type SyncConfig } from './remote.js';

const validateSync = compile(Type.Object({ action: Type.Union([Type.Literal('push'), Type.Literal('pull')]) }, { additionalProperties: false }));
const validateInit = compile(Type.Object({ force: Type.Optional(Type.Boolean()) }, { additionalProperties: false }));
const validateCreds = compile(Type.Object({ provider: Type.String({ minLength: 1 }), accountId: Type.Optional(Type.String({ minLength: 1 })), apiKey: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }));
const validateResolve = compile(Type.Object({ model: Type.String({ minLength: 1, maxLength: 512 }) }, { additionalProperties: false }));

const ALL_SCOPES = ['inference', 'management', 'mcp', 'admin', 'keys'] as const;


interface SyncState {
  lastPush?: string;
  lastPull?: string;
  lastError?: string;
  etag?: string;
}

export function syncRoutes(r: Router, svc: GatewayServices, cfg: SyncConfig | undefined): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  const pub = (route: ReturnType<Router['get']>) => route.tag('auth', 'public');
  const now = () => svc.clock.now();
  const state = (): SyncState => JSON.parse(svc.state.db.getSetting('sync.state') ?? '{}') as SyncState;
  const setState = (s: SyncState) => svc.state.db.setSetting('sync.state', JSON.stringify(s));
  const configured = (): SyncConfig => {
    if (!cfg) throw new HttpError(503, 'sync is not configured: set ctl.yaml gateway.sync (url, or s3) and restart', { code: 'sync_not_configured' });
    return cfg;
  };
  const failed = (e: unknown): never => {
    const msg = (e as Error).message;
    setState({ ...state(), lastError: msg });
    throw new HttpError(502, `sync: ${msg}`, { code: 'sync_failed' });
  };
  const push = async (c: SyncConfig) => {
    const doc = exportConfig(svc.state, c.includeSecrets, now());
    const res = await remoteCall(svc.egress, c.remote, 'PUT', JSON.stringify(doc)).catch(failed);
    const s: SyncState = { ...state(), lastPush: doc.exportedAt, ...(res.etag ? { etag: res.etag } : {}) };
    delete s.lastError;
    setState(s);
    return { pushedAt: doc.exportedAt, secrets: doc.secrets, counts: { providers: doc.providers.length, combos: doc.combos.length, aliases: Object.keys(doc.aliases).length, mappings: doc.mappings.length, prices: doc.pricing.length } };
  };

  m(r.get('/api/sync/cloud', (ctx) => ok(ctx, { configured: cfg !== undefined, remote: cfg ? describeRemote(cfg.remote) : null, includeSecrets: cfg?.includeSecrets ?? false, ...state() })));
  m(
    r.post('/api/sync/cloud', async (ctx) => {
      const c = configured();
      const b = validated(validateSync, await readPlainObject(ctx));
      if (b.action === 'push') return ok(ctx, { pushed: true, remote: describeRemote(c.remote), ...(await push(c)) });
      const res = await remoteCall(svc.egress, c.remote, 'GET').catch(failed);
      if (res.status === 404) throw new HttpError(404, `${describeRemote(c.remote)} has no configuration yet (POST /api/sync/initialize)`, { code: 'sync_empty' });
      let doc;
      try {
        doc = checkDocument(JSON.parse(res.text));
      } catch (e) {
        return failed(new Error(`the remote document is not a gateway configuration: ${(e as Error).message}`));
      }
      const changed = await importConfig(svc.state, doc, now());
      const s: SyncState = { ...state(), lastPull: new Date(now()).toISOString() };
      delete s.lastError;
      setState(s);
      ok(ctx, { pulled: true, remote: describeRemote(c.remote), exportedAt: doc.exportedAt, ...changed });
    }),
  );
  m(
    r.post('/api/sync/initialize', async (ctx) => {
      const c = configured();
      const b = validated(validateInit, await readPlainObject(ctx, true));
      if (!b.force) {
        const res = await remoteCall(svc.egress, c.remote, 'GET').catch(failed);
        if (res.status !== 404 && res.text.trim()) throw conflict(`${describeRemote(c.remote)} already has a configuration: pull it (POST /api/sync/cloud {action: pull}) or initialize with {force: true}`);
      }
      ok(ctx, { initialized: true, remote: describeRemote(c.remote), ...(await push(c)) }, 201);
    }),
  );

  // ---- cloud: a Bearer key's view of this gateway ----
  const keyed = (ctx: RequestContext): Principal => svc.auth.scoped(ctx, ALL_SCOPES, 'The cloud API');
  pub(
    r.post('/api/cloud/auth', (ctx) => {
      const p = keyed(ctx);
      const connections = [];
      for (const rt of svc.state.catalog.providers.values()) {
        for (const a of rt.config.accounts) connections.push({ id: a.id, provider: rt.config.id, providerName: rt.config.name, kind: rt.config.kind, name: a.name, enabled: a.enabled && rt.config.enabled, apiKey: a.apiKey ? maskSecret(a.apiKey) : null });
      }
      ok(ctx, {
        valid: true,
        key: p.key ? { id: p.key.id, name: p.key.name, scopes: p.key.scopes, models: p.key.models } : null,
        connections,
        aliases: Object.fromEntries([...svc.state.catalog.aliases.values()].map((a) => [a.alias, a.model])),
      });
    }),
  );
  pub(
    r.post('/api/cloud/credentials/update', async (ctx) => {
      svc.auth.scoped(ctx, ['management'], 'Updating credentials');
      const b = validated(validateCreds, await readPlainObject(ctx));
      const rt = svc.state.catalog.providers.get(b.provider);
      if (!rt) throw notFound(`provider ${b.provider} not found`);
      if (rt.config.source === 'file') throw conflict(`provider ${b.provider} is defined in gateway.yaml; edit the file and reload`);
      const account = b.accountId ? rt.config.accounts.find((a) => a.id === b.accountId || a.name === b.accountId) : rt.config.accounts[0];
      if (!account) throw notFound(b.accountId ? `account ${b.accountId} not found on provider ${b.provider}` : `provider ${b.provider} has no account`);
      const accounts = rt.config.accounts.map((a) => (a.id === account.id ? { ...a, apiKey: b.apiKey } : a));
      svc.state.db.saveProvider({ ...rt.config, accounts, updatedAt: now() });
      await svc.state.commit({ providers: [b.provider] });
      ok(ctx, { updated: true, provider: b.provider, accountId: account.id, apiKey: maskSecret(b.apiKey) });
    }),
  );
  pub(
    r.post('/api/cloud/model/resolve', async (ctx) => {
      const p = keyed(ctx);
      const b = validated(validateResolve, await readPlainObject(ctx));
      const res = resolveFor(svc, b.model, p);
      ok(ctx, {
        model: b.model,
        via: res.via,
        strategy: res.strategy,
        combo: res.combo?.name ?? null,
        targets: res.targets.map((t) => ({ ref: t.ref, provider: t.provider.config.id, model: t.modelId })),
        unresolved: res.unresolved,
      });
    }),
  );
  pub(
    r.get('/api/cloud/models/alias', (ctx) => {
      keyed(ctx);
      ok(ctx, { aliases: Object.fromEntries([...svc.state.catalog.aliases.values()].map((a) => [a.alias, a.model])) });
    }),
  );
}
