/**
 * Models, aliases, the catalog and pricing:
 *   GET/POST/PATCH/DELETE /api/provider-models   custom models (add, update, hide/show, delete)
 *   GET/POST/DELETE /api/models/alias            aliases (`fast` → `local/m1` or a combo)
 *   GET /api/models/catalog                      models by provider and type, with capabilities
 *   GET/PUT/POST/DELETE /api/pricing             USD per 1M input, output and cached tokens
 */
import { Type } from '@sinclair/typebox';
import { badRequest, conflict, notFound } from '../../../http/errors.js';
import type { RequestContext } from '../../../http/context.js';
import type { Router } from '../../../http/router.js';
import { compile } from '../../../http/schema.js';
import { modelCapabilities } from '../../providers/index.js';
import type { GatewayServices } from '../../services.js';
import { MEDIA_PRICE_FIELDS, publicSpec, type ModelSpec } from '../../types.js';
import { checkComboName, checkModelRef } from '../../validate.js';
import { asBadRequest, camelCase, comboView, ok, priceView, readObject, validated } from '../common.js';
import { modelFromInput, validateModelInput } from './provider-input.js';

// Management bodies arrive camelised (`per_image` → `perImage`); the media prices are stored under their snake_case names.
const validatePrice = compile(
  Type.Object(
    {
      model: Type.String({ minLength: 1, maxLength: 512 }),
      input: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()])),
      output: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()])),
      cached: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()])),
      perImage: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Record(Type.String(), Type.Number({ minimum: 0 })), Type.Null()])),
      perSecond: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()])),
      perCharacter: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()])),
      perSearchUnit: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()])),
      perRequest: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Null()])),
    },
    { additionalProperties: false },
  ),
);

function param(ctx: RequestContext, body: Record<string, unknown>, name: string): string {
  const v = ctx.query.get(name) ?? body[name];
  if (typeof v !== 'string' || !v) throw badRequest(`${name} is required`);
  return v;
}

export function modelRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');

  // ----- /api/provider-models ----------------------------------------------------------------
  m(
    r.get('/api/provider-models', (ctx) => {
      const want = ctx.query.get('provider');
      const custom = new Set(svc.state.db.listModels().map((x) => `${x.provider}\u0000${x.spec.id}`));
      const models: Record<string, unknown>[] = [];
      for (const p of svc.state.catalog.ordered) {
        if (want && p.config.id !== want) continue;
        for (const spec of p.config.models) {
          models.push({
            provider: p.config.id,
            ...publicSpec(spec),
            ref: `${p.config.id}/${spec.id}`,
            custom: custom.has(`${p.config.id}\u0000${spec.id}`),
            source: p.config.source,
          });
        }
      }
      if (want && !svc.state.catalog.providers.has(want)) throw notFound(`provider ${want} not found`);
      ok(ctx, { models });
    }),
  );

  const saveModel = async (ctx: RequestContext, partial: boolean) => {
    const body = await readObject(ctx);
    const provider = param(ctx, body, 'provider');
    const rt = svc.state.catalog.providers.get(provider);
    if (!rt) throw notFound(`provider ${provider} not found`);
    const { provider: _p, model: modelField, ...rest } = body;
    const id = typeof rest.id === 'string' ? rest.id : modelField;
    if (typeof id !== 'string' || !id) throw badRequest('model (the model id) is required');
    let spec: ModelSpec;
    if (partial) {
      const prev = rt.models.get(id);
      if (!prev) throw notFound(`model ${provider}/${id} not found`);
      spec = modelFromInput(validated(validateModelInput, { ...prev, ...rest, id }));
    } else {
      spec = modelFromInput(validated(validateModelInput, { ...rest, id }));
    }
    const now = svc.clock.now();
    const existed = rt.models.has(id);
    svc.state.db.saveModel(provider, spec, now);
    await svc.state.commit({ providers: [provider] });
    ok(ctx, { provider, ...publicSpec(spec), ref: `${provider}/${spec.id}` }, partial || existed ? 200 : 201);
  };
  m(r.post('/api/provider-models', (ctx) => saveModel(ctx, false)));
  m(r.patch('/api/provider-models', (ctx) => saveModel(ctx, true)));
  m(r.put('/api/provider-models', (ctx) => saveModel(ctx, false)));

  m(
    r.delete('/api/provider-models', async (ctx) => {
      const body = ctx.url.search ? {} : await readObject(ctx, true);
      const provider = param(ctx, body, 'provider');
      const model = param(ctx, body, 'model');
      const rt = svc.state.catalog.providers.get(provider);
      if (!rt) throw notFound(`provider ${provider} not found`);
      if (!svc.state.db.deleteModel(provider, model)) {
        if (rt.models.has(model)) throw conflict(`model ${provider}/${model} is declared in gateway.yaml; hide it with PATCH {hidden: true} instead`);
        throw notFound(`model ${provider}/${model} not found`);
      }
      await svc.state.commit({ providers: [provider] });
      ok(ctx, { provider, model, deleted: true });
    }),
  );

  // ----- /api/models/alias -------------------------------------------------------------------
  const aliasList = () => {
    const entries = [...svc.state.catalog.aliases.values()];
    return { aliases: Object.fromEntries(entries.map((a) => [a.alias, a.model])), items: entries };
  };
  m(r.get('/api/models/alias', (ctx) => ok(ctx, aliasList())));

  m(
    r.post('/api/models/alias', async (ctx) => {
      const body = await readObject(ctx);
      const alias = body.alias;
      const model = body.model ?? body.target;
      if (typeof alias !== 'string' || typeof model !== 'string') throw badRequest('alias and model are required strings');
      asBadRequest(() => checkComboName(alias, 'alias'));
      asBadRequest(() => checkModelRef(model, 'model'));
      const existing = svc.state.catalog.aliases.get(alias);
      if (existing?.source === 'file') throw conflict(`alias ${alias} is defined in gateway.yaml`);
      if (svc.state.catalog.combos.has(alias)) throw conflict(`${alias} is a combo name`);
      if (alias === model) throw badRequest('an alias cannot point at itself');
      svc.state.db.saveAlias(alias, model, svc.clock.now());
      await svc.state.commit({ aliases: true });
      ok(ctx, { alias, model, ...aliasList() }, existing ? 200 : 201);
    }),
  );

  const deleteAlias = async (ctx: RequestContext) => {
    const alias = ctx.params.alias ?? ctx.query.get('alias') ?? (await readObject(ctx, true)).alias;
    if (typeof alias !== 'string' || !alias) throw badRequest('alias is required');
    const existing = svc.state.catalog.aliases.get(alias);
    if (existing?.source === 'file') throw conflict(`alias ${alias} is defined in gateway.yaml`);
    if (!svc.state.db.deleteAlias(alias)) throw notFound(`alias ${alias} not found`);
    await svc.state.commit({ aliases: true });
    ok(ctx, { alias, deleted: true });
  };
  m(r.delete('/api/models/alias', deleteAlias));
  m(r.delete('/api/models/alias/:alias', deleteAlias));

  // ----- /api/models/catalog -----------------------------------------------------------------
  m(
    r.get('/api/models/catalog', (ctx) => {
      const c = svc.state.catalog;
      const typeFilter = ctx.query.get('type');
      const providers = c.ordered.map((p) => {
        const byType: Record<string, unknown[]> = { chat: [], embedding: [], image: [] };
        for (const spec of p.config.models) {
          if (typeFilter && spec.type !== typeFilter) continue;
          const price = c.pricing.lookup(p.config.id, spec.id);
          (byType[spec.type] ??= []).push({
            id: `${p.config.id}/${spec.id}`,
            model: spec.id,
            ...(spec.name ? { name: spec.name } : {}),
            ...(spec.hidden ? { hidden: true } : {}),
            capabilities: modelCapabilities(p.conn, spec.id),
            ...(price ? { pricing: { input: price.input ?? null, output: price.output ?? null, cached: price.cached ?? null } } : {}),
          });
        }
        return { id: p.config.id, kind: p.config.kind, name: p.config.name, enabled: p.config.enabled, models: byType };
      });
      ok(ctx, {
        providers,
        combos: [...c.combos.values()].map(comboView),
        aliases: Object.fromEntries([...c.aliases.values()].map((a) => [a.alias, a.model])),
      });
    }),
  );

  // ----- /api/pricing ------------------------------------------------------------------------
  m(
    r.get('/api/pricing', (ctx) => {
      const want = ctx.query.get('model');
      const list = svc.state.catalog.pricing.list().filter((p) => !want || p.model === want);
      ok(ctx, { currency: 'USD', unit: 'per 1M tokens', pricing: list.map(priceView) });
    }),
  );

  const savePrices = async (ctx: RequestContext) => {
    const body = await readObject(ctx);
    // Either one entry {model, input, output, cached} or a map {"<model>": {input, ...}, ...}.
    const entries = typeof body.model === 'string' ? [body] : Object.entries(body).map(([model, v]) => ({ ...(v as object), model }));
    if (entries.length === 0) throw badRequest('no prices given');
    if (entries.length > 5000) throw badRequest('at most 5000 prices per request');
    const now = svc.clock.now();
    const checked = entries.map((e) => validated(validatePrice, e, `body/${(e as { model?: string }).model ?? ''}`));
    svc.state.db.transaction(() => {
      for (const e of checked) {
        svc.state.db.savePrice(
          {
            model: e.model,
            ...(e.input != null ? { input: e.input } : {}),
            ...(e.output != null ? { output: e.output } : {}),
            ...(e.cached != null ? { cached: e.cached } : {}),
            ...Object.fromEntries(MEDIA_PRICE_FIELDS.filter((k) => e[camelCase(k) as keyof typeof e] != null).map((k) => [k, e[camelCase(k) as keyof typeof e]])),
            source: 'api',
          },
          now,
        );
      }
    });
    await svc.state.commit({ pricing: true });
    ok(ctx, { pricing: checked.map((e) => priceView(svc.state.catalog.pricing.get(e.model)!)) });
  };
  m(r.put('/api/pricing', savePrices));
  m(r.post('/api/pricing', savePrices));
  m(r.patch('/api/pricing', savePrices));

  m(
    r.delete('/api/pricing', async (ctx) => {
      const body = ctx.url.search ? {} : await readObject(ctx, true);
      const model = param(ctx, body, 'model');
      if (!svc.state.db.deletePrice(model)) throw notFound(`no price override for ${model}`);
      await svc.state.commit({ pricing: true });
      ok(ctx, { model, deleted: true });
    }),
  );
}
