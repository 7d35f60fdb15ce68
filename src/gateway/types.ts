/**
 * Records of the gateway's configuration (providers, models, aliases, combos, keys, pricing),
 * as the store and gateway.yaml produce them and the in-memory catalog merges them.
 */
import type { ProviderKind } from './canonical.js';
import type { ModelSpec as ProviderModelSpec } from './providers/types.js';

/** Where a record comes from: the management API (database) or the declarative gateway.yaml. */
export type Source = 'api' | 'file';

export type ModelType = 'chat' | 'embedding' | 'image' | 'speech' | 'transcription' | 'rerank' | 'moderation' | 'video' | 'music';
export const MODEL_TYPES: readonly ModelType[] = ['chat', 'embedding', 'image', 'speech', 'transcription', 'rerank', 'moderation', 'video', 'music'];

/**
 * One model a provider offers, with what is known about it (the provider layer's spec plus listing
 * fields). Unset capability = guessed by the provider kind from the model id.
 */
export interface ModelSpec extends ProviderModelSpec {
  /** Upstream model id (may contain '/'). */
  id: string;
  type: ModelType;
  /** Whether the operator wrote the type (unset: 'chat' by default, and plain embeddings still go through). */
  typeDeclared?: boolean;
  name?: string;
  /** Hidden models stay callable but are not listed. */
  hidden?: boolean;
}

/** A model spec as the management API shows it (without the bookkeeping of what was declared). */
export function publicSpec(spec: ModelSpec): Omit<ModelSpec, 'typeDeclared'> {
  const { typeDeclared: _declared, ...rest } = spec;
  return rest;
}

export interface ProviderAccount {
  id: string;
  name: string;
  apiKey: string;
  enabled: boolean;
  priority: number;
}

export interface ProviderConfig {
  id: string;
  kind: ProviderKind;
  name: string;
  baseUrl: string;
  enabled: boolean;
  priority: number;
  /** Extra static headers sent upstream. */
  headers: Record<string, string>;
  /** Upstream timeout in ms (headers and idle), when set. */
  timeoutMs?: number;
  accounts: ProviderAccount[];
  models: ModelSpec[];
  source: Source;
  createdAt: number;
  updatedAt: number;
}

export const STRATEGIES = ['priority', 'weighted', 'round-robin', 'random', 'least-used', 'cost-optimized', 'latency', 'rules', 'sla-aware', 'lkgp'] as const;
export type Strategy = (typeof STRATEGIES)[number];

export interface ComboTarget {
  /** A `<provider>/<model>` id or an alias (never another combo). */
  model: string;
  /** Weighted strategy share (default 1). */
  weight?: number;
}

export interface ComboConfig {
  id: string;
  name: string;
  strategy: Strategy;
  targets: ComboTarget[];
  enabled: boolean;
  description?: string;
  /** Upper bound on upstream attempts for one request through this combo. */
  maxAttempts?: number;
  /** The `rules` strategy's rules (routing/combo-options.ts). */
  rules?: import('./routing/combo-options.js').ComboRule[];
  /** The `sla-aware` strategy's limits. */
  sla?: import('./routing/combo-options.js').ComboSla;
  source: Source;
  createdAt: number;
  updatedAt: number;
}

/** Routes every requested model id matching `pattern` (glob: `*`, `?`) to a combo. */
export interface ComboMapping {
  id: string;
  pattern: string;
  comboId: string;
  priority: number;
  enabled: boolean;
  description?: string;
  source: Source;
  createdAt: number;
  updatedAt: number;
}

export const KEY_SCOPES = ['inference', 'management', 'mcp', 'admin', 'keys'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** sha256 hex of the raw key. The raw key is never stored. */
  hash: string;
  /** First characters of the raw key, for recognising it in lists. */
  prefix: string;
  /** Allowed model ids or globs (`*`, `local/*`). */
  models: string[];
  scopes: KeyScope[];
  enabled: boolean;
  expiresAt?: number;
  revokedAt?: number;
  createdAt: number;
  lastUsedAt?: number;
  /** A registered key pinned to one provider account: its calls use that account only. */
  accountId?: string;
  /** Requests per minute the key may make (limits/rpm.ts); none when absent. */
  rpm?: number;
  source: Source;
}

/** USD per 1M tokens. */
/**
 * Prices of media (USD): per image (one price, or by `size`, `size/quality` and `default`), per
 * second of audio in, per character of speech, per search unit (a rerank query over up to 100
 * documents), per request (video, music).
 */
export interface MediaPrice {
  per_image?: number | Record<string, number>;
  per_second?: number;
  per_character?: number;
  per_search_unit?: number;
  per_request?: number;
}

export const MEDIA_PRICE_FIELDS = ['per_image', 'per_second', 'per_character', 'per_search_unit', 'per_request'] as const;

export interface Price extends MediaPrice {
  input?: number;
  output?: number;
  cached?: number;
}

export interface PriceEntry extends Price {
  /** `<provider>/<model>` or a bare model id (matches any provider). */
  model: string;
  source: Source | 'default';
}

/** Tunables of the routing engine (gateway.yaml `settings`). */
export interface RoutingSettings {
  /** Upper bound on upstream attempts per request (all targets, accounts and retries). */
  maxAttempts: number;
  /** A Retry-After up to this long is waited out and the same target retried once; longer ones fall back. */
  retryWaitMaxMs: number;
  /** How long a stream may take to produce its first useful event before the attempt counts as failed. */
  streamReadinessTimeoutMs: number;
  /** Default cool-down of a target after a 429 without Retry-After (ms). */
  rateLimitCooldownMs: number;
}

export const DEFAULT_ROUTING: RoutingSettings = {
  maxAttempts: 10,
  retryWaitMaxMs: 2000,
  streamReadinessTimeoutMs: 60_000,
  rateLimitCooldownMs: 5000,
};
