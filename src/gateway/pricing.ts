/**
 * Prices in USD per 1M tokens and the cost of one request. Resolution order: operator overrides
 * (API), gateway.yaml, built-in defaults. Lookup: exact `<provider>/<model>`, then the bare model id,
 * then the longest built-in default that prefixes the model id (dated variants). No match = free.
 *
 * Token conventions follow canonical.ts: inputTokens include cached reads (charged at the cached
 * price, never twice) and outputTokens include reasoning (never added on top).
 */
import type { Usage } from './canonical.js';
import type { Price, PriceEntry } from './types.js';

/** List prices of well-known models (USD / 1M tokens) at the time of writing; override per deployment. */
export const DEFAULT_PRICES: Readonly<Record<string, Price>> = {
  'gpt-4o': { input: 2.5, output: 10, cached: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cached: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cached: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cached: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cached: 0.025 },
  'o3-mini': { input: 1.1, output: 4.4, cached: 0.55 },
  'o4-mini': { input: 1.1, output: 4.4, cached: 0.275 },
  'text-embedding-3-small': { input: 0.02 },
  'text-embedding-3-large': { input: 0.13 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cached: 0.08 },
  'claude-3-5-sonnet': { input: 3, output: 15, cached: 0.3 },
  'claude-3-7-sonnet': { input: 3, output: 15, cached: 0.3 },
  'claude-sonnet-4': { input: 3, output: 15, cached: 0.3 },
  'claude-opus-4': { input: 15, output: 75, cached: 1.5 },
  'gemini-2.0-flash': { input: 0.1, output: 0.4, cached: 0.025 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5, cached: 0.075 },
  'gemini-2.5-pro': { input: 1.25, output: 10, cached: 0.31 },
};

export class PriceTable {
  private readonly entries = new Map<string, PriceEntry>();
  private readonly defaultsByLength: string[];

  /** `layers` from lowest to highest precedence (later wins per model id). */
  constructor(layers: readonly (readonly PriceEntry[])[], defaults: Readonly<Record<string, Price>> = DEFAULT_PRICES) {
    for (const [model, p] of Object.entries(defaults)) this.entries.set(model, { model, ...p, source: 'default' });
    for (const layer of layers) for (const e of layer) this.entries.set(e.model, e);
    this.defaultsByLength = Object.keys(defaults).sort((a, b) => b.length - a.length);
  }

  /** Every entry, by model id. */
  list(): PriceEntry[] {
    return [...this.entries.values()].sort((a, b) => a.model.localeCompare(b.model));
  }

  get(model: string): PriceEntry | undefined {
    return this.entries.get(model);
  }

  /** Lookups memoised per `<provider>/<model>` (the table never changes: a new catalog builds a new one). */
  private readonly memo = new Map<string, PriceEntry | null>();

  /** The price that applies to `modelId` on `provider`, if any. */
  lookup(provider: string, modelId: string): PriceEntry | undefined {
    const key = `${provider}/${modelId}`;
    const hit = this.memo.get(key);
    if (hit !== undefined) return hit ?? undefined;
    const found = this.find(provider, modelId);
    if (this.memo.size < 10_000) this.memo.set(key, found ?? null);
    return found;
  }

  private find(provider: string, modelId: string): PriceEntry | undefined {
    const exact = this.entries.get(`${provider}/${modelId}`) ?? this.entries.get(modelId);
    if (exact) return exact;
    const tail = modelId.includes('/') ? modelId.slice(modelId.lastIndexOf('/') + 1) : modelId;
    if (tail !== modelId) {
      const t = this.entries.get(tail);
      if (t) return t;
    }
    for (const d of this.defaultsByLength) {
      if (tail.startsWith(d) && (tail.length === d.length || /[-@:.]/.test(tail[d.length]!))) return this.entries.get(d);
    }
    return undefined;
  }
}

/** USD for one request's usage at `price` (0 when unpriced). */
export function costOf(usage: Usage, price: Price | undefined): number {
  if (!price) return 0;
  const input = price.input ?? 0;
  const cachedPrice = price.cached ?? input;
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const cost = (usage.inputTokens - cached) * input + cached * cachedPrice + usage.outputTokens * (price.output ?? 0);
  return cost / 1_000_000;
}

/** What a media answer is charged for (each priced by the model's media prices, if any). */
export interface MediaUsage {
  images?: { count: number; size?: string; quality?: string };
  seconds?: number;
  characters?: number;
  searchUnits?: number;
  requests?: number;
}

/** The price of one image: by `size/quality`, then `size`, then `default`; a single number for all. */
function imagePrice(p: Price, size?: string, quality?: string): number {
  const pi = p.per_image;
  if (pi === undefined) return 0;
  if (typeof pi === 'number') return pi;
  return (size && quality ? pi[`${size}/${quality}`] : undefined) ?? (size ? pi[size] : undefined) ?? pi.default ?? 0;
}

/** USD for media usage at `price` (unpriced media costs 0: fail-open). */
export function mediaCostOf(m: MediaUsage, price: Price | undefined): number {
  if (!price) return 0;
  let cost = 0;
  if (m.images) cost += m.images.count * imagePrice(price, m.images.size, m.images.quality);
  if (m.seconds) cost += m.seconds * (price.per_second ?? 0);
  if (m.characters) cost += m.characters * (price.per_character ?? 0);
  if (m.searchUnits) cost += m.searchUnits * (price.per_search_unit ?? 0);
  if (m.requests) cost += m.requests * (price.per_request ?? 0);
  return cost;
}

/** The header form: fixed 10 decimals. */
export function formatCost(usd: number): string {
  return (Number.isFinite(usd) && usd > 0 ? usd : 0).toFixed(10);
}
