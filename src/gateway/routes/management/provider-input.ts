/**
 * Provider bodies of the management API (create, update, validate, import): schema, then conversion
 * into a ProviderConfig. Bodies are camelCase (snake_case accepted, see camelizeKeys).
 */
import { randomBytes } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';
import { badRequest } from '../../../http/errors.js';
import { compile } from '../../../http/schema.js';
import type { EmbeddingModality } from '../../canonical.js';
import { parseProviderKind, PROVIDER_KINDS, providerAdapter } from '../../providers/index.js';
import { MODEL_TYPES, type ModelSpec, type ProviderAccount, type ProviderConfig } from '../../types.js';
import { checkProviderId, normalizeBaseUrl } from '../../validate.js';
import { asBadRequest, validated } from '../common.js';

const Str = Type.String({ minLength: 1 });
const Modalities = Type.Array(Type.Union(['text', 'image', 'audio', 'video', 'document'].map((m) => Type.Literal(m))));

export const ModelInput = Type.Object(
  {
    id: Str,
    type: Type.Optional(Type.Union(MODEL_TYPES.map((t) => Type.Literal(t)))),
    name: Type.Optional(Type.String()),
    thinking: Type.Optional(Type.Boolean()),
    thinkingDisable: Type.Optional(Type.Boolean()),
    noThinkingAlias: Type.Optional(Type.Boolean()),
    modalities: Type.Optional(Modalities),
    embeddingModalities: Type.Optional(Modalities),
    contextLength: Type.Optional(Type.Integer({ minimum: 1 })),
    maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1 })),
    hidden: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const AccountInput = Type.Object(
  {
    id: Type.Optional(Str),
    name: Type.Optional(Type.String()),
    apiKey: Type.Optional(Type.String()),
    enabled: Type.Optional(Type.Boolean()),
    priority: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);

const ProviderFields = {
  kind: Str,
  name: Type.Optional(Type.String({ maxLength: 200 })),
  baseUrl: Type.Optional(Type.String()),
  apiKey: Type.Optional(Type.String()),
  apiKeys: Type.Optional(Type.Array(Type.String(), { maxItems: 1000 })),
  accounts: Type.Optional(Type.Array(AccountInput, { maxItems: 1000 })),
  enabled: Type.Optional(Type.Boolean()),
  priority: Type.Optional(Type.Integer()),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
  models: Type.Optional(Type.Array(Type.Union([Str, ModelInput]), { maxItems: 5000 })),
};

export const ProviderCreate = Type.Object({ id: Str, ...ProviderFields }, { additionalProperties: false });
export const ProviderUpdate = Type.Partial(Type.Object({ id: Str, ...ProviderFields }, { additionalProperties: false }));
export type ProviderCreateBody = Static<typeof ProviderCreate>;
export type ProviderUpdateBody = Static<typeof ProviderUpdate>;

const validateCreate = compile(ProviderCreate);
const validateUpdate = compile(ProviderUpdate);
export const validateModelInput = compile(ModelInput);

export function newAccountId(): string {
  return `acc_${randomBytes(9).toString('base64url')}`;
}

export function modelFromInput(m: string | Static<typeof ModelInput>): ModelSpec {
  if (typeof m === 'string') return { id: m, type: 'chat' };
  const spec: ModelSpec = { ...m, type: m.type ?? 'chat' } as ModelSpec;
  if (m.type !== undefined) spec.typeDeclared = true;
  if (m.modalities) spec.modalities = m.modalities as EmbeddingModality[];
  if (m.embeddingModalities) spec.embeddingModalities = m.embeddingModalities as EmbeddingModality[];
  return spec;
}

function kindOf(name: string) {
  const kind = parseProviderKind(name);
  if (!kind) throw badRequest(`unknown provider kind ${JSON.stringify(name)} (want one of ${PROVIDER_KINDS.join(', ')})`, { code: 'invalid_request' });
  return kind;
}

function modelsOf(list: ProviderCreateBody['models']): ModelSpec[] {
  const out = new Map<string, ModelSpec>();
  for (const m of list ?? []) {
    const spec = modelFromInput(m);
    if (out.has(spec.id)) throw badRequest(`duplicate model ${spec.id}`, { code: 'invalid_request' });
    out.set(spec.id, spec);
  }
  return [...out.values()];
}

/** Accounts from `apiKey` / `apiKeys` / `accounts`; `previous` keeps secrets of accounts named by id. */
function accountsOf(body: ProviderUpdateBody, previous: ProviderAccount[] = []): ProviderAccount[] | undefined {
  if (body.apiKey === undefined && body.apiKeys === undefined && body.accounts === undefined) return undefined;
  const out: ProviderAccount[] = [];
  const add = (apiKey: string, name?: string, enabled = true, priority?: number, id?: string) =>
    out.push({ id: id ?? newAccountId(), name: name || `account-${out.length + 1}`, apiKey, enabled, priority: priority ?? out.length });
  if (body.apiKey !== undefined) add(body.apiKey, previous[0]?.name, true, undefined, previous[0]?.id);
  for (const k of body.apiKeys ?? []) add(k);
  for (const a of body.accounts ?? []) {
    const prev = a.id !== undefined ? previous.find((p) => p.id === a.id) : undefined;
    if (a.id !== undefined && !prev) throw badRequest(`account ${a.id} does not exist`, { code: 'invalid_request' });
    if (a.apiKey === undefined && !prev) throw badRequest('a new account needs apiKey', { code: 'invalid_request' });
    add(a.apiKey ?? prev!.apiKey, a.name ?? prev?.name, a.enabled ?? prev?.enabled ?? true, a.priority ?? prev?.priority, prev?.id);
  }
  return out;
}

/** A new provider from a create body. */
export function providerFromCreate(raw: unknown, now: number): ProviderConfig {
  const body = validated(validateCreate, raw);
  asBadRequest(() => checkProviderId(body.id));
  const kind = kindOf(body.kind);
  const baseUrl = asBadRequest(() => normalizeBaseUrl(body.baseUrl || providerAdapter(kind).defaultBaseUrl));
  return {
    id: body.id,
    kind,
    name: body.name || body.id,
    baseUrl,
    enabled: body.enabled ?? true,
    priority: body.priority ?? 0,
    headers: body.headers ?? {},
    ...(body.timeoutMs !== undefined ? { timeoutMs: body.timeoutMs } : {}),
    accounts: accountsOf(body) ?? [],
    models: modelsOf(body.models),
    source: 'api',
    createdAt: now,
    updatedAt: now,
  };
}

/** `prev` with an update body applied; `models` is undefined when the body leaves them alone. */
export function providerFromUpdate(prev: ProviderConfig, raw: unknown, now: number): { provider: ProviderConfig; models?: ModelSpec[] } {
  const body = validated(validateUpdate, raw);
  if (body.id !== undefined && body.id !== prev.id) throw badRequest('the provider id cannot be changed', { code: 'invalid_request' });
  const kind = body.kind !== undefined ? kindOf(body.kind) : prev.kind;
  const provider: ProviderConfig = {
    ...prev,
    kind,
    name: body.name ?? prev.name,
    baseUrl: body.baseUrl !== undefined ? asBadRequest(() => normalizeBaseUrl(body.baseUrl || providerAdapter(kind).defaultBaseUrl)) : prev.baseUrl,
    enabled: body.enabled ?? prev.enabled,
    priority: body.priority ?? prev.priority,
    headers: body.headers ?? prev.headers,
    accounts: accountsOf(body, prev.accounts) ?? prev.accounts,
    updatedAt: now,
  };
  if (body.timeoutMs !== undefined) provider.timeoutMs = body.timeoutMs;
  const models = body.models !== undefined ? modelsOf(body.models) : undefined;
  if (models) provider.models = models;
  return { provider, ...(models ? { models } : {}) };
}
