/**
 * Model resolution: what a client's model id means.
 *
 * Order: the `…gateway-no-thinking/` prefix is stripped (reasoning off), then the id is looked up as
 *  1. a combo name,
 *  2. an alias (which names a `<provider>/<model>` or a combo),
 *  3. a model-combo mapping pattern (highest priority first),
 *  4. `<provider>/<model>`, split at the first '/' (the model part may contain more slashes),
 *  5. a bare model id declared by exactly one or more enabled providers (the highest-priority one wins).
 * Anything else is 404 model_not_found.
 */
import { GatewayError } from '../errors.js';
import type { Catalog, ProviderRuntime } from '../catalog.js';
import type { ComboConfig, ModelSpec, Strategy } from '../types.js';

export const NO_THINKING_MARK = 'gateway-no-thinking/';

export interface ResolvedTarget {
  /** `<provider>/<model>` */
  ref: string;
  provider: ProviderRuntime;
  /** Upstream model id. */
  modelId: string;
  spec?: ModelSpec;
  weight: number;
}

/** A combo target that could not be resolved (reported as a skipped attempt). */
export interface UnresolvedTarget {
  ref: string;
  reason: string;
}

export interface Resolution {
  requested: string;
  /** `single` for a direct model, else the combo strategy. */
  strategy: Strategy | 'single';
  combo?: ComboConfig;
  targets: ResolvedTarget[];
  unresolved: UnresolvedTarget[];
  /** Reasoning suppressed (no-thinking variant selected). */
  noThinking: boolean;
  /** How the id was understood, for logs: combo, alias, mapping, direct, bare. */
  via: 'combo' | 'alias' | 'mapping' | 'direct' | 'bare';
}

const BAD_ID = /[\u0000-\u001f\u007f]/;

export function notFoundModel(model: string, why?: string): GatewayError {
  return new GatewayError('not-found', `model ${JSON.stringify(model)} not found${why ? `: ${why}` : ''}`, { code: 'model_not_found' });
}

/** Split the no-thinking prefix: `claude-gateway-no-thinking/anthropic/claude-x` → `anthropic/claude-x`. */
export function stripNoThinking(model: string): { model: string; noThinking: boolean } {
  const i = model.indexOf(NO_THINKING_MARK);
  if (i < 0) return { model, noThinking: false };
  const prefix = model.slice(0, i);
  // The prefix is `<family>-` (or empty): no slash may come before the mark.
  if (prefix.includes('/') || (prefix !== '' && !prefix.endsWith('-'))) return { model, noThinking: false };
  return { model: model.slice(i + NO_THINKING_MARK.length), noThinking: true };
}

/** `<provider>/<model>` against the catalog, or undefined when the provider part is unknown. */
function direct(catalog: Catalog, ref: string): ResolvedTarget | undefined {
  const slash = ref.indexOf('/');
  if (slash <= 0 || slash === ref.length - 1) return undefined;
  const provider = catalog.providers.get(ref.slice(0, slash));
  if (!provider) return undefined;
  const modelId = ref.slice(slash + 1);
  const spec = provider.models.get(modelId);
  const t: ResolvedTarget = { ref, provider, modelId, weight: 1 };
  if (spec) t.spec = spec;
  return t;
}

function bare(catalog: Catalog, model: string): ResolvedTarget | undefined {
  const providers = catalog.bareModels.get(model);
  if (!providers || providers.length === 0) return undefined;
  return direct(catalog, `${providers[0]}/${model}`);
}

/** A combo target (`<provider>/<model>`, alias or bare model; never another combo). */
function comboTarget(catalog: Catalog, model: string): ResolvedTarget | UnresolvedTarget {
  const stripped = stripNoThinking(model).model;
  const alias = catalog.aliases.get(stripped);
  const ref = alias ? alias.model : stripped;
  if (catalog.combos.has(ref)) return { ref: model, reason: 'combos cannot contain combos' };
  const t = direct(catalog, ref) ?? bare(catalog, ref);
  if (!t) return { ref: model, reason: 'unknown provider or model' };
  return t;
}

function fromCombo(catalog: Catalog, requested: string, combo: ComboConfig, noThinking: boolean, via: Resolution['via']): Resolution {
  if (!combo.enabled) throw new GatewayError('not-configured', `combo ${combo.name} is disabled`, { code: 'combo_disabled' });
  const targets: ResolvedTarget[] = [];
  const unresolved: UnresolvedTarget[] = [];
  for (const t of combo.targets) {
    const r = comboTarget(catalog, t.model);
    if ('reason' in r) unresolved.push(r);
    else targets.push({ ...r, weight: t.weight ?? 1 });
  }
  if (targets.length === 0) {
    throw notFoundModel(requested, `combo ${combo.name} has no usable target (${unresolved.map((u) => `${u.ref}: ${u.reason}`).join('; ') || 'empty'})`);
  }
  return { requested, strategy: combo.strategy, combo, targets, unresolved, noThinking, via };
}

export function resolveModel(catalog: Catalog, requested: string): Resolution {
  if (typeof requested !== 'string' || requested.length === 0) throw new GatewayError('invalid', 'model is required', { code: 'invalid_request' });
  if (requested.length > 512 || BAD_ID.test(requested) || requested.includes('..')) {
    throw new GatewayError('invalid', 'model id is malformed', { code: 'invalid_request' });
  }
  const { model, noThinking } = stripNoThinking(requested);

  const combo = catalog.combos.get(model);
  if (combo) return fromCombo(catalog, requested, combo, noThinking, 'combo');

  const alias = catalog.aliases.get(model);
  if (alias) {
    const target = stripNoThinking(alias.model);
    const viaCombo = catalog.combos.get(target.model);
    if (viaCombo) return fromCombo(catalog, requested, viaCombo, noThinking || target.noThinking, 'alias');
    const t = direct(catalog, target.model) ?? bare(catalog, target.model);
    if (!t) throw notFoundModel(requested, `alias ${model} points at ${alias.model}, which does not exist`);
    return single(requested, t, noThinking || target.noThinking, 'alias');
  }

  for (const m of catalog.mappings) {
    if (!m.mapping.enabled || !m.matches(model)) continue;
    const c = catalog.mappingCombo(m.mapping);
    if (c) return fromCombo(catalog, requested, c, noThinking, 'mapping');
  }

  const d = direct(catalog, model);
  if (d) return single(requested, d, noThinking, 'direct');
  const b = bare(catalog, model);
  if (b) return single(requested, b, noThinking, 'bare');
  if (model.includes('/')) throw notFoundModel(requested, `no provider ${JSON.stringify(model.slice(0, model.indexOf('/')))}`);
  throw notFoundModel(requested);
}

function single(requested: string, t: ResolvedTarget, noThinking: boolean, via: Resolution['via']): Resolution {
  if (!t.provider.config.enabled) {
    throw new GatewayError('not-configured', `provider ${t.provider.config.id} is disabled`, { code: 'provider_disabled' });
  }
  return { requested, strategy: 'single', targets: [t], unresolved: [], noThinking, via };
}
