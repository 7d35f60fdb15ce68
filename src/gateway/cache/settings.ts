/**
 * Response cache settings (`GET|PATCH /api/cache`, gateway.yaml `cache:`).
 * `mode: deterministic` (default) caches only requests with temperature 0 or a seed; `all` caches
 * every request (for test fixtures and replay setups where a sampled answer may be reused).
 */
import { Type } from '@sinclair/typebox';
import { compile } from '../../http/schema.js';

export interface CacheSettings {
  enabled: boolean;
  mode: 'deterministic' | 'all';
  /** Entries kept in the memory LRU (the seed's `memoryMaxSize`). */
  memoryMaxSize: number;
  /** Bytes of answers kept in memory. */
  memoryMaxBytes: number;
  ttlMs: number;
  /** Answers larger than this (JSON bytes) are not cached. */
  maxEntryBytes: number;
  /** Entries kept in SQLite behind the memory LRU (0: memory only). */
  dbMaxEntries: number;
}

export const DEFAULT_CACHE: CacheSettings = {
  enabled: true,
  mode: 'deterministic',
  memoryMaxSize: 500,
  memoryMaxBytes: 32 << 20,
  ttlMs: 3_600_000,
  maxEntryBytes: 1 << 20,
  dbMaxEntries: 20_000,
};

export const CachePatchSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    mode: Type.Optional(Type.Union([Type.Literal('deterministic'), Type.Literal('all')])),
    memoryMaxSize: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    memoryMaxBytes: Type.Optional(Type.Integer({ minimum: 0, maximum: 4 * 1024 ** 3 })),
    ttlMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 365 * 24 * 3_600_000 })),
    maxEntryBytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 << 20 })),
    dbMaxEntries: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000 })),
  },
  { additionalProperties: false },
);
export const validateCachePatch = compile(CachePatchSchema);
