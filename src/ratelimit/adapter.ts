import type { AdapterName } from './config.js';

/** What one hit did to a counter. */
export interface HitResult {
  /** The counter after this hit (every hit counts, blocked ones too). */
  count: number;
  /** Milliseconds until the window ends (≤ 0 when the store could not tell). */
  ttlMs: number;
}

/**
 * A counter store: a fixed window per key, anchored at the key's first hit. `hit` throws when the
 * store cannot be reached or locked; the guard then applies the adapter's store-error policy.
 * The file adapter answers synchronously (no promise on the hot path); Redis asynchronously.
 */
export interface CounterStore {
  readonly name: AdapterName;
  /** What a store failure does to the hit: `block` (the seed's file adapter) or `allow`. */
  readonly onStoreError: 'block' | 'allow';
  /** Key prefix (`<prefix>:`) every key of this store starts with. */
  readonly prefix: string;
  hit(key: string, windowMs: number): HitResult | Promise<HitResult>;
  /** Delete these exact keys; resolves to how many live counters were removed. */
  deleteKeys(keys: readonly string[]): Promise<number>;
  /** Delete every key starting with `prefix` whose remainder passes `accept`; resolves to the count removed. */
  deleteByPrefix(prefix: string, accept: (rest: string) => boolean): Promise<number>;
  close(): Promise<void>;
}
