/**
 * DIR/gateway.yaml: declarative providers, aliases, combos, model-combo mappings, keys, pricing and
 * routing settings. Loaded at start and on reload (SIGHUP); a bad file throws and the previous
 * configuration stays. Records from the file are read-only through the management API.
 */
import { DEFAULT_SEARCH, parseSearch, type SearchConfig } from './search/config.js';
import { DEFAULT_MEMORY, parseMemory, type MemoryConfig } from './memory/config.js';
import { DEFAULT_SKILLS, parseSkills, type SkillsConfig } from './skills/config.js';
import { parseWsBridge, type WsBridgeConfig } from './agents/ws-bridge/config.js';
import { DEFAULT_GUARDRAILS, parseGuardrails, type GuardrailConfig } from './guardrails/config.js';
import { validateCompressionPatch } from './compression/settings.js';
import { validateGeneralPatch } from './ops/settings.js';
import { DEFAULT_WEB_FETCH, parseWebFetch, type WebFetchConfig } from './webfetch/config.js';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { Type, type Static } from '@sinclair/typebox';
import { compile, describeErrors, type Validator } from '../http/schema.js';
import { camelizeKeys } from './case.js';
import { validateCachePatch } from './cache/settings.js';
import { validateConcurrencyPatch } from './resilience/concurrency.js';
import { checkResilience, DEFAULT_RESILIENCE, validateResiliencePatch, type ResilienceSettings } from './resilience/settings.js';
import { deepMerge, type Plain } from './runtime-settings.js';
import type { EmbeddingModality } from './canonical.js';
import { parseProviderKind, PROVIDER_KINDS, providerAdapter } from './providers/index.js';
import { parseComboOptions } from './routing/combo-options.js';
import {
  DEFAULT_ROUTING,
  KEY_SCOPES,
  MODEL_TYPES,
  STRATEGIES,
  type ApiKeyRecord,
  type ComboConfig,
  type ComboMapping,
  type KeyScope,
  type ModelSpec,
  type PriceEntry,
  type ProviderAccount,
  type ProviderConfig,
  type RoutingSettings,
  type Strategy,
} from './types.js';
import { checkComboName, checkModelRef, checkProviderId, normalizeBaseUrl, keyPrefix } from './validate.js';

const Str = Type.String({ minLength: 1 });
const Modalities = Type.Array(Type.Union(['text', 'image', 'audio', 'video', 'document'].map((m) => Type.Literal(m))));

const ModelObj = Type.Object(
  {
    id: Str,
    type: Type.Optional(Type.Union(MODEL_TYPES.map((t) => Type.Literal(t)))),
    name: Type.Optional(Type.String()),
    thinking: Type.Optional(Type.Boolean()),
    thinking_disable: Type.Optional(Type.Boolean()),
    no_thinking_alias: Type.Optional(Type.Boolean()),
    modalities: Type.Optional(Modalities),
    embedding_modalities: Type.Optional(Modalities),
    context_length: Type.Optional(Type.Integer({ minimum: 1 })),
    max_output_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    hidden: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const AccountObj = Type.Object(
  {
    name: Type.Optional(Type.String()),
    api_key: Type.Optional(Type.String()),
    api_key_env: Type.Optional(Str),
    enabled: Type.Optional(Type.Boolean()),
    priority: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);

const ProviderObj = Type.Object(
  {
    id: Str,
    kind: Str,
    name: Type.Optional(Type.String()),
    base_url: Type.Optional(Str),
    api_key: Type.Optional(Type.String()),
    api_key_env: Type.Optional(Str),
    api_keys: Type.Optional(Type.Array(Type.String())),
    accounts: Type.Optional(Type.Array(AccountObj)),
    enabled: Type.Optional(Type.Boolean()),
    priority: Type.Optional(Type.Integer()),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 1 })),
    models: Type.Optional(Type.Array(Type.Union([Str, ModelObj]))),
  },
  { additionalProperties: false },
);

const TargetObj = Type.Object({ model: Str, weight: Type.Optional(Type.Number({ minimum: 0 })) }, { additionalProperties: false });

const ComboObj = Type.Object(
  {
    name: Str,
    strategy: Type.Optional(Type.String()),
    targets: Type.Array(Type.Union([Str, TargetObj]), { minItems: 1 }),
    enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(Type.String()),
    max_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    rules: Type.Optional(Type.Array(Type.Unknown())),
    sla: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

const MappingObj = Type.Object(
  {
    pattern: Str,
    combo: Str,
    priority: Type.Optional(Type.Integer()),
    enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const KeyObj = Type.Object(
  {
    name: Str,
    key: Type.Optional(Type.String({ minLength: 8 })),
    key_env: Type.Optional(Str),
    key_sha256: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$' })),
    models: Type.Optional(Type.Array(Str)),
    scopes: Type.Optional(Type.Array(Type.Union(KEY_SCOPES.map((s) => Type.Literal(s))))),
    enabled: Type.Optional(Type.Boolean()),
    rpm: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
  },
  { additionalProperties: false },
);

const PriceObj = Type.Object(
  {
    input: Type.Optional(Type.Number({ minimum: 0 })),
    output: Type.Optional(Type.Number({ minimum: 0 })),
    cached: Type.Optional(Type.Number({ minimum: 0 })),
    per_image: Type.Optional(Type.Union([Type.Number({ minimum: 0 }), Type.Record(Type.String(), Type.Number({ minimum: 0 }))])),
    per_second: Type.Optional(Type.Number({ minimum: 0 })),
    per_character: Type.Optional(Type.Number({ minimum: 0 })),
    per_search_unit: Type.Optional(Type.Number({ minimum: 0 })),
    per_request: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
);

const SettingsObj = Type.Object(
  {
    max_attempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
    retry_wait_max_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
    stream_readiness_timeout_ms: Type.Optional(Type.Integer({ minimum: 1 })),
    rate_limit_cooldown_ms: Type.Optional(Type.Integer({ minimum: 0 })),
    // General settings (issues 18, 21): the file layer of /api/settings, checked by its schema.
    require_login: Type.Optional(Type.Boolean()),
    mcp_enabled: Type.Optional(Type.Boolean()),
    a2a_enabled: Type.Optional(Type.Boolean()),
    system_prompt: Type.Optional(Type.Unknown()),
    thinking_budget: Type.Optional(Type.Unknown()),
    ip_filter: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

const FileSchema = Type.Object(
  {
    providers: Type.Optional(Type.Array(ProviderObj)),
    aliases: Type.Optional(Type.Record(Type.String(), Str)),
    combos: Type.Optional(Type.Array(ComboObj)),
    mappings: Type.Optional(Type.Array(MappingObj)),
    keys: Type.Optional(Type.Array(KeyObj)),
    pricing: Type.Optional(Type.Record(Type.String(), PriceObj)),
    settings: Type.Optional(SettingsObj),
    // Runtime settings sections (issue 6); checked against the API's schemas below.
    resilience: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    cache: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    concurrency: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    // Compression (issue 19): the same fields as /api/settings/compression, in snake_case.
    compression: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    // Web fetch providers (issue 17): checked by webfetch/config.ts.
    web_fetch: Type.Optional(Type.Unknown()),
    // Web search providers, cache and policies (issue 17): checked by search/config.ts.
    search: Type.Optional(Type.Unknown()),
    // Memory injection (issue 20): checked by memory/config.ts.
    memory: Type.Optional(Type.Unknown()),
    // Skills' sandbox limits, registry and marketplace (issue 20): checked by skills/config.ts.
    skills: Type.Optional(Type.Unknown()),
    // The responses-over-WebSocket bridge's provider (issue 18): checked by agents/ws-bridge/config.ts.
    responses_websocket: Type.Optional(Type.Unknown()),
    // Guardrails (issue 19): checked by guardrails/config.ts.
    guardrails: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

/** Keys of these maps are ids, not field names: they are not camelised. */
const DATA_MAPS = new Set(['headers', 'providerProfiles', 'perProvider']);

const SECTIONS: Record<'resilience' | 'cache' | 'concurrency' | 'compression', Validator<unknown>> = {
  resilience: validateResiliencePatch,
  cache: validateCachePatch,
  concurrency: validateConcurrencyPatch,
  compression: validateCompressionPatch,
};

type FileShape = Static<typeof FileSchema>;
const validateFile = compile(FileSchema);

/** What gateway.yaml declares, in the catalog's record shapes (all `source: 'file'`). */
export interface GatewayFileConfig {
  providers: ProviderConfig[];
  aliases: Map<string, string>;
  combos: ComboConfig[];
  mappings: ComboMapping[];
  keys: ApiKeyRecord[];
  pricing: PriceEntry[];
  settings: RoutingSettings;
  /** Runtime settings sections, camelCased and schema-checked (applied under the API overrides). */
  sections: { resilience?: Record<string, unknown>; cache?: Record<string, unknown>; concurrency?: Record<string, unknown>; general?: Record<string, unknown>; compression?: Record<string, unknown> };
  /** `web_fetch:` (hosted providers with a key, and the built-in fetcher's limits). */
  webFetch: WebFetchConfig;
  /** `search:` (providers, cache lifetime, per-key policies). */
  search: SearchConfig;
  /** `memory:` (whether and how much stored memory is added to chat requests). */
  memory: MemoryConfig;
  /** `skills:` (sandbox limits, registry and marketplace). */
  skills: SkillsConfig;
  /** `responses_websocket:` (the bridge's provider). */
  responsesWebsocket: WsBridgeConfig;
  /** `guardrails:` (the built-ins with their settings, in priority order). */
  guardrails: GuardrailConfig[];
}

export function emptyFileConfig(): GatewayFileConfig {
  return { providers: [], aliases: new Map(), combos: [], mappings: [], keys: [], pricing: [], settings: { ...DEFAULT_ROUTING }, sections: {}, webFetch: DEFAULT_WEB_FETCH, search: DEFAULT_SEARCH, memory: DEFAULT_MEMORY, skills: DEFAULT_SKILLS, responsesWebsocket: {}, guardrails: DEFAULT_GUARDRAILS };
}

export class ConfigFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigFileError';
  }
}

/** Read and check gateway.yaml; a missing file is an empty configuration. */
export function loadConfigFile(path: string, env: NodeJS.ProcessEnv, now: number): GatewayFileConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return emptyFileConfig();
    throw new ConfigFileError(`${path}: ${(e as Error).message}`);
  }
  return parseConfigText(text, env, now, path);
}

export function parseConfigText(text: string, env: NodeJS.ProcessEnv, now: number, name = 'gateway.yaml'): GatewayFileConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new ConfigFileError(`${name}: invalid YAML: ${(e as Error).message}`);
  }
  if (doc === null || doc === undefined) return emptyFileConfig();
  if (!validateFile(doc)) throw new ConfigFileError(`${name}: ${describeErrors(validateFile.errors, 'gateway.yaml')}`);
  try {
    return convert(doc, env, now);
  } catch (e) {
    throw new ConfigFileError(`${name}: ${(e as Error).message}`);
  }
}

function fromEnv(env: NodeJS.ProcessEnv, name: string, what: string): string {
  const v = env[name];
  if (v === undefined || v === '') throw new Error(`${what}: environment variable ${name} is not set`);
  return v;
}

export function modelFromYaml(m: string | Static<typeof ModelObj>): ModelSpec {
  if (typeof m === 'string') return { id: m, type: 'chat' };
  const spec: ModelSpec = { id: m.id, type: m.type ?? 'chat' };
  if (m.type !== undefined) spec.typeDeclared = true;
  if (m.name !== undefined) spec.name = m.name;
  if (m.thinking !== undefined) spec.thinking = m.thinking;
  if (m.thinking_disable !== undefined) spec.thinkingDisable = m.thinking_disable;
  if (m.no_thinking_alias !== undefined) spec.noThinkingAlias = m.no_thinking_alias;
  if (m.modalities !== undefined) spec.modalities = m.modalities as EmbeddingModality[];
  if (m.embedding_modalities !== undefined) spec.embeddingModalities = m.embedding_modalities as EmbeddingModality[];
  if (m.context_length !== undefined) spec.contextLength = m.context_length;
  if (m.max_output_tokens !== undefined) spec.maxOutputTokens = m.max_output_tokens;
  if (m.hidden !== undefined) spec.hidden = m.hidden;
  return spec;
}

function convert(doc: FileShape, env: NodeJS.ProcessEnv, now: number): GatewayFileConfig {
  const out = emptyFileConfig();
  const seenProviders = new Set<string>();
  for (const [i, p] of (doc.providers ?? []).entries()) {
    const where = `providers[${i}] (${p.id})`;
    checkProviderId(p.id, where);
    if (seenProviders.has(p.id)) throw new Error(`${where}: duplicate provider id`);
    seenProviders.add(p.id);
    const kind = parseProviderKind(p.kind);
    if (!kind) throw new Error(`${where}: unknown kind ${JSON.stringify(p.kind)} (want one of ${PROVIDER_KINDS.join(', ')})`);
    const accounts: ProviderAccount[] = [];
    const add = (apiKey: string, name?: string, enabled = true, priority?: number) =>
      accounts.push({ id: `${p.id}#${accounts.length}`, name: name ?? `account-${accounts.length + 1}`, apiKey, enabled, priority: priority ?? accounts.length });
    if (p.api_key !== undefined) add(p.api_key);
    // A disabled provider may name a variable that is not set yet.
    const secret = (name: string) => (p.enabled === false ? (env[name] ?? '') : fromEnv(env, name, where));
    if (p.api_key_env !== undefined) add(secret(p.api_key_env));
    for (const k of p.api_keys ?? []) add(k);
    for (const a of p.accounts ?? []) {
      if (a.api_key !== undefined && a.api_key_env !== undefined) throw new Error(`${where}: an account has both api_key and api_key_env`);
      add(a.api_key_env !== undefined ? secret(a.api_key_env) : (a.api_key ?? ''), a.name, a.enabled ?? true, a.priority);
    }
    const models: ModelSpec[] = [];
    const seenModels = new Set<string>();
    for (const m of p.models ?? []) {
      const spec = modelFromYaml(m);
      if (seenModels.has(spec.id)) throw new Error(`${where}: duplicate model ${spec.id}`);
      seenModels.add(spec.id);
      models.push(spec);
    }
    out.providers.push({
      id: p.id,
      kind,
      name: p.name ?? p.id,
      baseUrl: normalizeBaseUrl(p.base_url ?? providerAdapter(kind).defaultBaseUrl, where),
      enabled: p.enabled ?? true,
      priority: p.priority ?? 0,
      headers: p.headers ?? {},
      ...(p.timeout_ms !== undefined ? { timeoutMs: p.timeout_ms } : {}),
      accounts,
      models,
      source: 'file',
      createdAt: now,
      updatedAt: now,
    });
  }

  for (const [alias, target] of Object.entries(doc.aliases ?? {})) {
    checkComboName(alias, `aliases.${alias}`);
    checkModelRef(target, `aliases.${alias}`);
    out.aliases.set(alias, target);
  }

  const comboNames = new Set<string>();
  for (const [i, c] of (doc.combos ?? []).entries()) {
    const where = `combos[${i}] (${c.name})`;
    checkComboName(c.name, where);
    if (comboNames.has(c.name)) throw new Error(`${where}: duplicate combo name`);
    comboNames.add(c.name);
    const strategy = (c.strategy ?? 'priority') as Strategy;
    if (!STRATEGIES.includes(strategy)) throw new Error(`${where}: unknown strategy ${c.strategy} (want one of ${STRATEGIES.join(', ')})`);
    const targets = c.targets.map((t) => {
      const target = typeof t === 'string' ? { model: t } : { model: t.model, ...(t.weight !== undefined ? { weight: t.weight } : {}) };
      checkModelRef(target.model, where);
      return target;
    });
    out.combos.push({
      id: `file:${c.name}`,
      name: c.name,
      strategy,
      targets,
      ...parseComboOptions(c, targets.map((t) => t.model), where),
      enabled: c.enabled ?? true,
      ...(c.description !== undefined ? { description: c.description } : {}),
      ...(c.max_attempts !== undefined ? { maxAttempts: c.max_attempts } : {}),
      source: 'file',
      createdAt: now,
      updatedAt: now,
    });
  }

  for (const [i, m] of (doc.mappings ?? []).entries()) {
    const combo = out.combos.find((c) => c.name === m.combo || c.id === m.combo);
    out.mappings.push({
      id: `file:mapping-${i}`,
      pattern: m.pattern,
      // A mapping may name a combo created through the API: resolved by name at lookup time.
      comboId: combo?.id ?? m.combo,
      priority: m.priority ?? 0,
      enabled: m.enabled ?? true,
      ...(m.description !== undefined ? { description: m.description } : {}),
      source: 'file',
      createdAt: now,
      updatedAt: now,
    });
  }

  const keyNames = new Set<string>();
  for (const [i, k] of (doc.keys ?? []).entries()) {
    const where = `keys[${i}] (${k.name})`;
    if (keyNames.has(k.name)) throw new Error(`${where}: duplicate key name`);
    keyNames.add(k.name);
    const given = [k.key, k.key_env, k.key_sha256].filter((v) => v !== undefined).length;
    if (given !== 1) throw new Error(`${where}: set exactly one of key, key_env, key_sha256`);
    const raw = k.key ?? (k.key_env !== undefined ? fromEnv(env, k.key_env, where) : undefined);
    out.keys.push({
      id: `file:${k.name}`,
      name: k.name,
      hash: raw !== undefined ? sha256Hex(raw) : k.key_sha256!.toLowerCase(),
      prefix: raw !== undefined ? keyPrefix(raw) : '',
      models: k.models ?? ['*'],
      scopes: (k.scopes ?? ['inference']) as KeyScope[],
      enabled: k.enabled ?? true,
      ...(k.rpm !== undefined ? { rpm: k.rpm } : {}),
      createdAt: now,
      source: 'file',
    });
  }

  for (const [model, price] of Object.entries(doc.pricing ?? {})) {
    out.pricing.push({ model, ...price, source: 'file' });
  }

  const s = doc.settings ?? {};
  out.settings = {
    maxAttempts: s.max_attempts ?? DEFAULT_ROUTING.maxAttempts,
    retryWaitMaxMs: s.retry_wait_max_ms ?? DEFAULT_ROUTING.retryWaitMaxMs,
    streamReadinessTimeoutMs: s.stream_readiness_timeout_ms ?? DEFAULT_ROUTING.streamReadinessTimeoutMs,
    rateLimitCooldownMs: s.rate_limit_cooldown_ms ?? DEFAULT_ROUTING.rateLimitCooldownMs,
  };
  const general = camelizeKeys(
    Object.fromEntries(Object.entries(s).filter(([k]) => ['require_login', 'mcp_enabled', 'a2a_enabled', 'system_prompt', 'thinking_budget', 'ip_filter'].includes(k))),
  ) as Record<string, unknown>;
  if (Object.keys(general).length > 0) {
    if (!validateGeneralPatch(general)) throw new Error(describeErrors(validateGeneralPatch.errors, 'settings'));
    out.sections.general = general;
  }
  for (const name of ['resilience', 'cache', 'concurrency', 'compression'] as const) {
    const raw = doc[name];
    if (raw === undefined) continue;
    const section = camelizeKeys(raw, DATA_MAPS) as Record<string, unknown>;
    const validate = SECTIONS[name];
    if (!validate(section)) throw new Error(describeErrors(validate.errors, name));
    if (name === 'resilience') checkResilience(deepMerge(DEFAULT_RESILIENCE as unknown as Plain, section) as unknown as ResilienceSettings);
    out.sections[name] = section;
  }
  out.webFetch = parseWebFetch(doc.web_fetch, env);
  out.search = parseSearch(doc.search, env);
  out.memory = parseMemory(doc.memory);
  out.skills = parseSkills(doc.skills, env);
  out.responsesWebsocket = parseWsBridge(doc.responses_websocket);
  out.guardrails = parseGuardrails(doc.guardrails);
  return out;
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
