/**
 * Combos and model-combo mappings:
 *   GET/POST /api/combos, GET/PUT/PATCH/DELETE /api/combos/{id or name}, GET /api/combos/metrics
 *   GET/POST /api/model-combo-mappings, GET/PUT/PATCH/DELETE /api/model-combo-mappings/{id}
 */
import { randomBytes } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { badRequest, conflict, notFound } from '../../../http/errors.js';
import type { RequestContext } from '../../../http/context.js';
import type { Router } from '../../../http/router.js';
import { compile } from '../../../http/schema.js';
import { RoutingMetrics } from '../../routing/metrics.js';
import { stripNoThinking } from '../../routing/resolve.js';
import type { GatewayServices } from '../../services.js';
import { STRATEGIES, type ComboConfig, type ComboMapping, type ComboTarget, type Strategy } from '../../types.js';
import { checkComboName, checkModelRef } from '../../validate.js';
import { parseComboOptions } from '../../routing/combo-options.js';
import { asBadRequest, comboView, mappingView, ok, readObject, validated } from '../common.js';

const Target = Type.Union([
  Type.String({ minLength: 1 }),
  Type.Object({ model: Type.String({ minLength: 1 }), weight: Type.Optional(Type.Number({ minimum: 0 })) }, { additionalProperties: false }),
]);
const ComboFields = {
  name: Type.String({ minLength: 1 }),
  strategy: Type.String(),
  targets: Type.Array(Target, { minItems: 1, maxItems: 100 }),
  // OmniRoute spells targets "models"; accepted as a synonym.
  models: Type.Array(Target, { minItems: 1, maxItems: 100 }),
  enabled: Type.Boolean(),
  description: Type.String({ maxLength: 1000 }),
  maxAttempts: Type.Integer({ minimum: 1, maximum: 50 }),
  // The rules and sla-aware strategies' options (checked by parseComboOptions).
  rules: Type.Union([Type.Array(Type.Unknown(), { maxItems: 100 }), Type.Null()]),
  sla: Type.Unknown(),
};
const validateComboCreate = compile(Type.Partial(Type.Object(ComboFields, { additionalProperties: false })));

const validateMapping = compile(
  Type.Partial(
    Type.Object(
      {
        pattern: Type.String({ minLength: 1, maxLength: 512 }),
        comboId: Type.String({ minLength: 1 }),
        combo: Type.String({ minLength: 1 }),
        priority: Type.Integer(),
        enabled: Type.Boolean(),
        description: Type.String({ maxLength: 1000 }),
      },
      { additionalProperties: false },
    ),
  ),
);

const newId = (prefix: string) => `${prefix}_${randomBytes(9).toString('base64url')}`;

function strategyOf(v: unknown): Strategy {
  if (v === undefined) return 'priority';
  if (typeof v !== 'string') throw badRequest('strategy must be a string');
  const s = v === 'fallback' || v === 'fill-first' ? 'priority' : v === 'usage' ? 'least-used' : v === 'latency-p95' ? 'latency' : v;
  if (!(STRATEGIES as readonly string[]).includes(s)) throw badRequest(`unknown strategy ${JSON.stringify(v)} (want one of ${STRATEGIES.join(', ')})`);
  return s as Strategy;
}

export function comboRoutes(r: Router, svc: GatewayServices): void {
  const m = (route: ReturnType<Router['get']>) => route.tag('auth', 'management');

  /** Targets must name something that exists now: `<provider>/<model>` of a known provider or an alias. */
  const checkTargets = (raw: unknown[], selfName: string): ComboTarget[] => {
    const c = svc.state.catalog;
    return raw.map((t, i) => {
      const target: ComboTarget = typeof t === 'string' ? { model: t } : (t as ComboTarget);
      asBadRequest(() => checkModelRef(target.model, `targets[${i}]`));
      const model = stripNoThinking(target.model).model;
      if (model === selfName || c.combos.has(model)) throw badRequest(`targets[${i}]: ${target.model} is a combo; combos cannot contain combos`);
      const slash = model.indexOf('/');
      const known = c.aliases.has(model) || (slash > 0 && c.providers.has(model.slice(0, slash))) || c.bareModels.has(model);
      if (!known) throw badRequest(`targets[${i}]: ${target.model} is neither <provider>/<model> of a known provider nor an alias`);
      return target;
    });
  };

  const findCombo = (idOrName: string): ComboConfig => {
    const c = svc.state.catalog.combo(idOrName);
    if (!c) throw notFound(`combo ${idOrName} not found`);
    return c;
  };

  m(r.get('/api/combos', (ctx) => ok(ctx, { combos: [...svc.state.catalog.combos.values()].map(comboView) })));

  m(
    r.post('/api/combos', async (ctx) => {
      const body = validated(validateComboCreate, await readObject(ctx));
      if (body.name === undefined) throw badRequest('name is required');
      asBadRequest(() => checkComboName(body.name!, 'name'));
      const c = svc.state.catalog;
      if (c.combos.has(body.name)) throw conflict(`combo ${body.name} already exists`);
      if (c.aliases.has(body.name)) throw conflict(`${body.name} is an alias`);
      const targets = body.targets ?? body.models;
      if (!targets) throw badRequest('targets is required');
      const now = svc.clock.now();
      const combo: ComboConfig = {
        id: newId('cmb'),
        name: body.name,
        strategy: strategyOf(body.strategy),
        targets: checkTargets(targets, body.name),
        enabled: body.enabled ?? true,
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.maxAttempts !== undefined ? { maxAttempts: body.maxAttempts } : {}),
        source: 'api',
        createdAt: now,
        updatedAt: now,
      };
      Object.assign(combo, asBadRequest(() => parseComboOptions(body, combo.targets.map((t) => t.model), 'combo')));
      svc.state.db.saveCombo(combo);
      await svc.state.commit({ combos: true });
      ok(ctx, comboView(combo), 201);
    }),
  );

  m(
    r.get('/api/combos/metrics', (ctx) => {
      const want = ctx.query.get('combo');
      const names = new Set([...svc.state.catalog.combos.keys(), ...svc.metrics.comboNames()]);
      const combos: Record<string, unknown>[] = [];
      for (const name of names) {
        if (want && name !== want) continue;
        const combo = svc.state.catalog.combos.get(name);
        const seen = new Map(svc.metrics.comboTargets(name));
        const refOf = (model: string) => {
          const bare = stripNoThinking(model).model;
          return svc.state.catalog.aliases.get(bare)?.model ?? bare;
        };
        const refs = new Set([...(combo?.targets.map((t) => refOf(t.model)) ?? []), ...seen.keys()]);
        let requests = 0;
        let successes = 0;
        const targets = [...refs].map((ref) => {
          const s = seen.get(ref);
          requests += s?.requests ?? 0;
          successes += s?.successes ?? 0;
          return { model: ref, ...RoutingMetrics.view(s) };
        });
        combos.push({
          name,
          ...(combo ? { id: combo.id, strategy: combo.strategy, enabled: combo.enabled } : { deleted: true }),
          requests,
          successes,
          failures: requests - successes,
          successRate: requests > 0 ? Number((successes / requests).toFixed(4)) : null,
          targets,
        });
      }
      ok(ctx, { combos });
    }),
  );

  m(r.get('/api/combos/:id', (ctx) => ok(ctx, comboView(findCombo(ctx.params.id!)))));

  const updateCombo = async (ctx: RequestContext) => {
    const prev = findCombo(ctx.params.id!);
    if (prev.source === 'file') throw conflict(`combo ${prev.name} is defined in gateway.yaml; edit the file and reload`);
    const body = validated(validateComboCreate, await readObject(ctx));
    const c = svc.state.catalog;
    const name = body.name ?? prev.name;
    if (name !== prev.name) {
      asBadRequest(() => checkComboName(name, 'name'));
      if (c.combos.has(name)) throw conflict(`combo ${name} already exists`);
      if (c.aliases.has(name)) throw conflict(`${name} is an alias`);
    }
    const targets = body.targets ?? body.models;
    const next: ComboConfig = {
      ...prev,
      name,
      strategy: body.strategy !== undefined ? strategyOf(body.strategy) : prev.strategy,
      targets: targets ? checkTargets(targets, name) : prev.targets,
      enabled: body.enabled ?? prev.enabled,
      updatedAt: svc.clock.now(),
    };
    if (body.description !== undefined) next.description = body.description;
    if (body.maxAttempts !== undefined) next.maxAttempts = body.maxAttempts;
    // rules and sla: replaced when given (null removes), and checked against the targets either way.
    const raw = body as { rules?: unknown; sla?: unknown };
    const opts = asBadRequest(() =>
      parseComboOptions({ ...(raw.rules !== undefined ? (raw.rules === null ? {} : { rules: raw.rules }) : prev.rules ? { rules: prev.rules } : {}), ...(raw.sla !== undefined ? (raw.sla === null ? {} : { sla: raw.sla }) : prev.sla ? { sla: prev.sla } : {}) }, next.targets.map((t) => t.model), 'combo'),
    );
    delete next.rules;
    delete next.sla;
    Object.assign(next, opts);
    svc.state.db.saveCombo(next);
    await svc.state.commit({ combos: true });
    ok(ctx, comboView(next));
  };
  m(r.put('/api/combos/:id', updateCombo));
  m(r.patch('/api/combos/:id', updateCombo));

  m(
    r.delete('/api/combos/:id', async (ctx) => {
      const prev = findCombo(ctx.params.id!);
      if (prev.source === 'file') throw conflict(`combo ${prev.name} is defined in gateway.yaml`);
      svc.state.db.deleteCombo(prev.id);
      // The combo's mappings go with it (store.deleteCombo).
      await svc.state.commit({ combos: true, mappings: true });
      ok(ctx, { id: prev.id, name: prev.name, deleted: true });
    }),
  );

  // ----- model-combo mappings ----------------------------------------------------------------
  const comboIdOf = (v: string): string => {
    const combo = svc.state.catalog.combo(v);
    if (!combo) throw badRequest(`combo ${v} not found`);
    return combo.id;
  };
  const mappingName = (mp: ComboMapping) => svc.state.catalog.mappingCombo(mp)?.name;
  const findMapping = (id: string): ComboMapping => {
    const mp = svc.state.catalog.mappings.find((x) => x.mapping.id === id)?.mapping;
    if (!mp) throw notFound(`mapping ${id} not found`);
    return mp;
  };

  m(
    r.get('/api/model-combo-mappings', (ctx) =>
      ok(ctx, { mappings: svc.state.catalog.mappings.map((x) => mappingView(x.mapping, mappingName(x.mapping))) }),
    ),
  );

  m(
    r.post('/api/model-combo-mappings', async (ctx) => {
      const body = validated(validateMapping, await readObject(ctx));
      if (!body.pattern) throw badRequest('pattern is required');
      const ref = body.comboId ?? body.combo;
      if (!ref) throw badRequest('comboId is required');
      const now = svc.clock.now();
      const mp: ComboMapping = {
        id: newId('map'),
        pattern: body.pattern,
        comboId: comboIdOf(ref),
        priority: body.priority ?? 0,
        enabled: body.enabled ?? true,
        ...(body.description !== undefined ? { description: body.description } : {}),
        source: 'api',
        createdAt: now,
        updatedAt: now,
      };
      svc.state.db.saveMapping(mp);
      await svc.state.commit({ mappings: true });
      ok(ctx, mappingView(mp, mappingName(mp)), 201);
    }),
  );

  m(r.get('/api/model-combo-mappings/:id', (ctx) => {
    const mp = findMapping(ctx.params.id!);
    ok(ctx, mappingView(mp, mappingName(mp)));
  }));

  const updateMapping = async (ctx: RequestContext) => {
    const prev = findMapping(ctx.params.id!);
    if (prev.source === 'file') throw conflict(`mapping ${prev.id} is defined in gateway.yaml`);
    const body = validated(validateMapping, await readObject(ctx));
    const ref = body.comboId ?? body.combo;
    const next: ComboMapping = {
      ...prev,
      pattern: body.pattern ?? prev.pattern,
      comboId: ref ? comboIdOf(ref) : prev.comboId,
      priority: body.priority ?? prev.priority,
      enabled: body.enabled ?? prev.enabled,
      updatedAt: svc.clock.now(),
    };
    if (body.description !== undefined) next.description = body.description;
    svc.state.db.saveMapping(next);
    await svc.state.commit({ mappings: true });
    ok(ctx, mappingView(next, mappingName(next)));
  };
  m(r.put('/api/model-combo-mappings/:id', updateMapping));
  m(r.patch('/api/model-combo-mappings/:id', updateMapping));

  m(
    r.delete('/api/model-combo-mappings/:id', async (ctx) => {
      const prev = findMapping(ctx.params.id!);
      if (prev.source === 'file') throw conflict(`mapping ${prev.id} is defined in gateway.yaml`);
      svc.state.db.deleteMapping(prev.id);
      await svc.state.commit({ mappings: true });
      ok(ctx, { id: prev.id, deleted: true });
    }),
  );
}
