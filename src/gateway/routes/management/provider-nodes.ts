/**
 * Provider catalog extras:
 *   GET  /api/v1/provider-plugin-manifest   the provider kinds this gateway speaks, as a JSON-safe manifest
 *                                           (no secrets, no environment, no executors, no request headers,
 *                                           no account data; public, like an agent card)
 *   GET/POST /api/provider-nodes            self-hosted provider endpoints (a provider whose base URL is its
 *                                           own, not the kind's public default): list, add
 *   GET/DELETE /api/provider-nodes/{id}; POST …/{id}/test; GET …/{id}/models (what the node itself lists)
 * A node is an ordinary provider: routing, fallback and usage treat it as one.
 */
import { badRequest, HttpError, notFound } from '../../../http/errors.js';
import type { Router } from '../../../http/router.js';
import { isUpstreamError, providerAdapter, providerKinds, PROVIDER_KINDS, parseProviderKind, listUpstreamModels } from '../../providers/index.js';
import type { ProviderRuntime } from '../../catalog.js';
import { keylessAccount } from '../../routing/policy.js';
import { upstreamOptions } from '../../completion.js';
import type { GatewayServices } from '../../services.js';
import { ok, providerView, readObject } from '../common.js';
import { createProvider, testConnection } from './providers.js';

/** The operations a kind serves, asked of its adapter (the same checks routing makes). */
function operations(kind: (typeof PROVIDER_KINDS)[number]): Record<string, boolean> {
  const a = providerAdapter(kind);
  const json = (path: string, body: Record<string, unknown> = {}) => a.jsonOperation !== undefined && a.refuses?.(path, body) === undefined;
  return {
    chat: true,
    embeddings: true,
    images: json('/images/generations'),
    rerank: json('/rerank'),
    moderations: json('/moderations'),
    videos: json('/videos/generations'),
    music: json('/music/generations'),
    speech: a.streamOperation !== undefined && a.refuses?.('/audio/speech', { response_format: 'wav' }) === undefined,
    transcriptions: a.formOperation !== undefined && a.refuses?.('/audio/transcriptions', {}) === undefined,
    models: true,
  };
}

const AUTH: Record<string, { type: string; header?: string; scheme?: string }> = {
  bearer: { type: 'api-key', header: 'authorization', scheme: 'Bearer' },
  'x-api-key': { type: 'api-key', header: 'x-api-key' },
  'x-goog-api-key': { type: 'api-key', header: 'x-goog-api-key' },
  none: { type: 'none' },
};

export function providerManifest(version: string, now: number): Record<string, unknown> {
  return {
    schemaVersion: 1,
    generatedAt: new Date(now).toISOString(),
    gateway: { name: 'ctl', version },
    plugins: providerKinds().map((k) => ({
      id: k.kind,
      kind: k.kind,
      label: k.label,
      aliases: ALIASES[k.kind],
      defaultBaseUrl: k.defaultBaseUrl,
      auth: AUTH[k.authHeader] ?? { type: k.authHeader },
      breakerProfile: k.authHeader === 'none' ? 'local' : 'apikey',
      operations: operations(k.kind),
      // What a connection of this kind is configured with; `secret` fields never appear in any answer.
      configFields: [
        { name: 'id', type: 'string', required: true },
        { name: 'baseUrl', type: 'url', required: false, default: k.defaultBaseUrl },
        ...(k.authHeader === 'none' ? [] : [{ name: 'apiKey', type: 'string', required: false, secret: true }]),
        { name: 'models', type: 'array', required: false },
        { name: 'timeoutMs', type: 'integer', required: false },
      ],
    })),
  };
}

const ALIASES: Record<string, string[]> = Object.fromEntries(
  PROVIDER_KINDS.map((k) => [k, ['openai', 'openai-compatible', 'openai-compat', 'anthropic', 'claude', 'anthropic-compatible', 'gemini', 'google', 'ollama'].filter((n) => parseProviderKind(n) === k)]),
);

/** A provider with a base URL of its own (not the kind's public default). */
function isNode(rt: ProviderRuntime): boolean {
  const base = rt.config.baseUrl?.replace(/\/+$/, '');
  return !!base && base !== providerAdapter(rt.conn.kind).defaultBaseUrl.replace(/\/+$/, '');
}

export function providerNodeRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');
  r.get('/api/v1/provider-plugin-manifest', (ctx) => ok(ctx, providerManifest(svc.version, svc.clock.now()))).tag('auth', 'public');

  const node = (id: string): ProviderRuntime => {
    const rt = svc.state.catalog.providers.get(id);
    if (!rt || !isNode(rt)) throw notFound(`provider node ${id} not found`);
    return rt;
  };
  const view = (rt: ProviderRuntime) => ({ ...providerView(rt.config), node: true, operations: operations(rt.conn.kind) });

  m(r.get('/api/provider-nodes', (ctx) => ok(ctx, { nodes: svc.state.catalog.ordered.filter(isNode).map(view) })));
  m(
    r.post('/api/provider-nodes', async (ctx) => {
      const body = await readObject(ctx);
      if (typeof body.baseUrl !== 'string' || !/^https?:\/\/[^/]/.test(body.baseUrl)) throw badRequest('baseUrl is required: the node\'s http(s) address (e.g. http://10.0.0.5:8000/v1)');
      const kind = typeof body.kind === 'string' ? parseProviderKind(body.kind) : undefined;
      if (kind && body.baseUrl.replace(/\/+$/, '') === providerAdapter(kind).defaultBaseUrl.replace(/\/+$/, '')) {
        throw badRequest(`baseUrl is ${kind}'s public default: add it as a provider (/api/providers), not a node`);
      }
      const { provider } = createProvider(svc, body, false);
      await svc.state.commit({ providers: [provider.id] });
      ok(ctx, view(svc.state.catalog.providers.get(provider.id)!), 201);
    }),
  );
  m(r.get('/api/provider-nodes/:id', (ctx) => ok(ctx, view(node(ctx.params.id!)))));
  m(
    r.delete('/api/provider-nodes/:id', async (ctx) => {
      const rt = node(ctx.params.id!);
      if (rt.config.source === 'file') throw badRequest(`provider ${rt.config.id} is defined in gateway.yaml; edit the file and reload`);
      svc.state.db.deleteProvider(rt.config.id);
      await svc.state.commit({ providers: [rt.config.id] });
      ok(ctx, { id: rt.config.id, deleted: true });
    }),
  );
  m(
    r.post('/api/provider-nodes/:id/test', async (ctx) => {
      const rt = node(ctx.params.id!);
      const body = await readObject(ctx, true);
      const result = await testConnection(svc, rt.config, typeof body.model === 'string' && body.model ? body.model : undefined);
      ok(ctx, { node: rt.config.id, ...result });
    }),
  );
  m(
    r.get('/api/provider-nodes/:id/models', async (ctx) => {
      const rt = node(ctx.params.id!);
      const acc = rt.config.accounts.find((a) => a.enabled) ?? keylessAccount(rt.config.id);
      let models;
      try {
        models = await listUpstreamModels(rt.conn, { id: acc.id, apiKey: acc.apiKey }, upstreamOptions(svc, rt.config.id, acc.id, AbortSignal.timeout(30_000)));
      } catch (e) {
        // The node failed, not the caller: a 502 saying how (its message never carries the node's page).
        if (isUpstreamError(e)) throw new HttpError(502, `provider node ${rt.config.id}: ${e.message}`, { code: 'upstream_error' });
        throw e;
      }
      ok(ctx, { node: rt.config.id, models });
    }),
  );
}
