/**
 * The response cache: a memory LRU (bounded by `memoryMaxSize` entries and `memoryMaxBytes`) in front
 * of the `response_cache` table. The set of signatures the table holds is mirrored in memory, so a
 * lookup that misses never touches SQLite; a table hit is read once and promoted to memory. New
 * entries and hit counts are written in one transaction every `flushMs`, off the request path (losing
 * the last few on kill -9 only costs a future miss).
 */
import type { Logger } from 'pino';
import type { Clock } from '../../http/clock.js';
import type { Store } from '../../store/index.js';
import type { StoredAnswer } from './answer.js';
import type { SharedCacheTier } from './redis-response-cache.js';
import type { CacheSettings } from './settings.js';
import type { SchemaStep } from '../schema.js';

/** The response cache: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const RESPONSE_CACHE_SCHEMA: SchemaStep[] = [
  {
    // Exact-signature response cache (the memory LRU is in front of it).
    version: 2,
    up: `
-- Exact-signature response cache (the memory LRU is in front of it).
CREATE TABLE response_cache (
  signature TEXT PRIMARY KEY,
  namespace TEXT NOT NULL,
  model TEXT NOT NULL,
  answer TEXT NOT NULL,
  size INTEGER NOT NULL,
  tokens_in INTEGER NOT NULL DEFAULT 0,
  tokens_out INTEGER NOT NULL DEFAULT 0,
  hit_count INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX response_cache_expires ON response_cache(expires_at);
`,
  },
];

interface MemEntry {
  signature: string;
  namespace: string;
  model: string;
  answer: StoredAnswer;
  /** JSON of the answer (what the table stores). */
  json: string;
  size: number;
  createdAt: number;
  expiresAt: number;
  hits: number;
}

export interface CacheEntryView {
  signature: string;
  namespace: string;
  model: string;
  provider: string;
  size: number;
  tokensIn: number;
  tokensOut: number;
  hits: number;
  createdAt: string;
  expiresAt: string;
  inMemory: boolean;
}

export interface CacheFilter {
  model?: string;
  signature?: string;
  namespace?: string;
  /** Entries created before this time (ms since the epoch). */
  olderThan?: number;
}

interface Row {
  signature: string;
  namespace: string;
  model: string;
  answer: string;
  size: number;
  tokens_in: number;
  tokens_out: number;
  hit_count: number;
  created_at: number;
  expires_at: number;
}

export class ResponseCache {
  private readonly mem = new Map<string, MemEntry>();
  private memBytes = 0;
  /** Signatures in the table → expiry. */
  private readonly index = new Map<string, number>();
  private readonly pendingWrites = new Map<string, MemEntry>();
  private readonly pendingHits = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  hits = 0;
  misses = 0;
  private metricsDirty = false;
  /** With storage.redis: the tier every gateway shares (redis-response-cache.ts). */
  private shared?: SharedCacheTier;

  useShared(tier: SharedCacheTier): void {
    this.shared = tier;
  }

  private sharedDeletion: Promise<void> = Promise.resolve();

  /** Resolves when the shared tier's part of the last delete is done (management routes wait for it). */
  sharedDeleted(): Promise<void> {
    return this.sharedDeletion;
  }

  get sharedTier(): boolean {
    return this.shared !== undefined;
  }

  constructor(
    private readonly store: Store,
    private readonly settings: () => CacheSettings,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly saveMetrics: (m: { hits: number; misses: number }) => void,
    private readonly flushMs = 250,
  ) {}

  /** Load the table's signatures and the saved counters (once, at start). */
  restore(metrics: { hits?: number; misses?: number } | undefined): void {
    const now = this.clock.now();
    this.store.prepare('DELETE FROM response_cache WHERE expires_at <= ?').run(now);
    const rows = this.store.prepare('SELECT signature, expires_at FROM response_cache').all() as { signature: string; expires_at: number }[];
    for (const r of rows) this.index.set(r.signature, r.expires_at);
    this.hits = metrics?.hits ?? 0;
    this.misses = metrics?.misses ?? 0;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.flush(), this.flushMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.flush();
  }

  get memorySize(): number {
    return this.mem.size;
  }

  get dbSize(): number {
    return this.index.size;
  }

  get hitRate(): number {
    const total = this.hits + this.misses;
    return total === 0 ? 0 : this.hits / total;
  }

  /**
   * `lookup`, then the shared tier on a miss here (an answer another gateway cached); a hit there is
   * kept in memory and counted as a hit.
   */
  async lookupAcross(signature: string): Promise<StoredAnswer | undefined> {
    const local = this.lookup(signature);
    if (local || !this.shared || !this.settings().enabled) return local;
    const e = await this.shared.get(signature);
    if (!e || e.expiresAt <= this.clock.now()) return undefined;
    const json = JSON.stringify(e.answer);
    const m: MemEntry = { signature, namespace: e.namespace, model: e.model, answer: e.answer, json, size: Buffer.byteLength(json), createdAt: e.createdAt, expiresAt: e.expiresAt, hits: 0 };
    this.addMem(m);
    this.misses--;
    return this.hit(m);
  }

  /** The cached answer for a signature (counted as a hit or a miss). */
  lookup(signature: string): StoredAnswer | undefined {
    const now = this.clock.now();
    const m = this.mem.get(signature);
    if (m) {
      if (m.expiresAt > now) {
        this.mem.delete(signature); // LRU: most recently used last
        this.mem.set(signature, m);
        return this.hit(m);
      }
      this.dropMem(signature);
    }
    // Evicted from memory before the batched write reached the table.
    const pending = this.pendingWrites.get(signature);
    if (pending && pending.expiresAt > now) {
      this.addMem(pending);
      return this.hit(pending);
    }
    const exp = this.index.get(signature);
    if (exp !== undefined) {
      if (exp > now) {
        const e = this.readRow(signature);
        if (e) {
          this.addMem(e);
          return this.hit(e);
        }
      }
      this.index.delete(signature);
    }
    this.misses++;
    this.metricsDirty = true;
    return undefined;
  }

  private hit(e: MemEntry): StoredAnswer {
    e.hits++;
    this.hits++;
    this.metricsDirty = true;
    if (this.index.has(e.signature) || this.pendingWrites.has(e.signature)) this.pendingHits.set(e.signature, (this.pendingHits.get(e.signature) ?? 0) + 1);
    return e.answer;
  }

  private readRow(signature: string): MemEntry | undefined {
    try {
      const r = this.store.prepare('SELECT * FROM response_cache WHERE signature = ?').get(signature) as Row | undefined;
      if (!r) return undefined;
      return {
        signature,
        namespace: r.namespace,
        model: r.model,
        answer: JSON.parse(r.answer) as StoredAnswer,
        json: r.answer,
        size: r.size,
        createdAt: r.created_at,
        expiresAt: r.expires_at,
        hits: r.hit_count,
      };
    } catch (e) {
      this.log.warn({ err: e }, 'gateway: reading a cache entry failed');
      return undefined;
    }
  }

  /** Keep an answer; refused (false) when caching is off or the answer is larger than `maxEntryBytes`. */
  put(signature: string, namespace: string, model: string, answer: StoredAnswer): boolean {
    const s = this.settings();
    if (!s.enabled) return false;
    const json = JSON.stringify(answer);
    const size = Buffer.byteLength(json);
    if (size > s.maxEntryBytes) return false;
    const now = this.clock.now();
    const e: MemEntry = { signature, namespace, model, answer, json, size, createdAt: now, expiresAt: now + s.ttlMs, hits: 0 };
    if (this.mem.has(signature)) this.dropMem(signature);
    this.addMem(e);
    if (s.dbMaxEntries > 0) {
      this.pendingWrites.set(signature, e);
      this.pendingHits.delete(signature);
    }
    this.shared?.set(signature, { namespace, model, createdAt: now, expiresAt: e.expiresAt, answer });
    return true;
  }

  private addMem(e: MemEntry): void {
    const s = this.settings();
    if (s.memoryMaxSize <= 0 || e.size > s.memoryMaxBytes) return;
    this.mem.set(e.signature, e);
    this.memBytes += e.size;
    this.evict(s);
  }

  private evict(s: CacheSettings): void {
    while (this.mem.size > 0 && (this.mem.size > s.memoryMaxSize || this.memBytes > s.memoryMaxBytes)) {
      this.dropMem(this.mem.keys().next().value as string);
    }
  }

  private dropMem(signature: string): void {
    const e = this.mem.get(signature);
    if (!e) return;
    this.mem.delete(signature);
    this.memBytes -= e.size;
  }

  /** Apply new settings (a smaller memory bound evicts at once). */
  reconfigure(): void {
    this.evict(this.settings());
  }

  /** Write pending entries and hit counts; trim the table to `dbMaxEntries`. */
  flush(): void {
    if (this.pendingWrites.size === 0 && this.pendingHits.size === 0 && !this.metricsDirty) return;
    const writes = [...this.pendingWrites.values()];
    const hits = [...this.pendingHits];
    this.pendingWrites.clear();
    this.pendingHits.clear();
    const s = this.settings();
    const now = this.clock.now();
    try {
      const ins = this.store.prepare(
        `INSERT INTO response_cache (signature, namespace, model, answer, size, tokens_in, tokens_out, hit_count, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(signature) DO UPDATE SET answer=excluded.answer, size=excluded.size, tokens_in=excluded.tokens_in,
           tokens_out=excluded.tokens_out, hit_count=excluded.hit_count, created_at=excluded.created_at, expires_at=excluded.expires_at`,
      );
      const hit = this.store.prepare('UPDATE response_cache SET hit_count = hit_count + ? WHERE signature = ?');
      this.store.transaction(() => {
        for (const e of writes) {
          const u = e.answer.response.usage;
          ins.run(e.signature, e.namespace, e.model, e.json, e.size, u.inputTokens, u.outputTokens, e.hits, e.createdAt, e.expiresAt);
          this.index.set(e.signature, e.expiresAt);
        }
        for (const [sig, n] of hits) hit.run(n, sig);
        this.store.prepare('DELETE FROM response_cache WHERE expires_at <= ?').run(now);
        const over = this.index.size - s.dbMaxEntries;
        if (over > 0) {
          const old = this.store.prepare('SELECT signature FROM response_cache ORDER BY created_at LIMIT ?').all(over) as { signature: string }[];
          const del = this.store.prepare('DELETE FROM response_cache WHERE signature = ?');
          for (const r of old) {
            del.run(r.signature);
            this.index.delete(r.signature);
          }
        }
      });
      for (const [sig, exp] of this.index) if (exp <= now) this.index.delete(sig);
      if (this.metricsDirty) {
        this.metricsDirty = false;
        this.saveMetrics({ hits: this.hits, misses: this.misses });
      }
    } catch (e) {
      this.log.warn({ err: e, entries: writes.length }, 'gateway: writing the response cache failed (entries stay in memory)');
    }
  }

  /** Entries matching a filter, newest first (memory and table). */
  list(filter: CacheFilter, limit: number, offset: number): { total: number; entries: CacheEntryView[] } {
    this.flush();
    const { where, args } = sqlFilter(filter);
    const total = (this.store.prepare(`SELECT COUNT(*) AS n FROM response_cache ${where}`).get(...args) as { n: number }).n;
    const rows = this.store
      .prepare(`SELECT signature, namespace, model, answer, size, tokens_in, tokens_out, hit_count, created_at, expires_at FROM response_cache ${where} ORDER BY created_at DESC LIMIT ? OFFSET ?`)
      .all(...args, limit, offset) as Row[];
    const entries = rows.map((r) => {
      let provider = '';
      try {
        provider = (JSON.parse(r.answer) as StoredAnswer).provider;
      } catch {
        /* shown without provider */
      }
      const m = this.mem.get(r.signature);
      return {
        signature: r.signature,
        namespace: r.namespace,
        model: r.model,
        provider,
        size: r.size,
        tokensIn: r.tokens_in,
        tokensOut: r.tokens_out,
        hits: m ? m.hits : r.hit_count,
        createdAt: new Date(r.created_at).toISOString(),
        expiresAt: new Date(r.expires_at).toISOString(),
        inMemory: m !== undefined,
      };
    });
    // Memory-only entries (dbMaxEntries 0) are listed too.
    if (this.settings().dbMaxEntries === 0) {
      const memOnly = [...this.mem.values()].filter((e) => matches(e, filter)).reverse();
      return {
        total: memOnly.length,
        entries: memOnly.slice(offset, offset + limit).map((e) => ({
          signature: e.signature,
          namespace: e.namespace,
          model: e.model,
          provider: e.answer.provider,
          size: e.size,
          tokensIn: e.answer.response.usage.inputTokens,
          tokensOut: e.answer.response.usage.outputTokens,
          hits: e.hits,
          createdAt: new Date(e.createdAt).toISOString(),
          expiresAt: new Date(e.expiresAt).toISOString(),
          inMemory: true,
        })),
      };
    }
    return { total, entries };
  }

  /** Delete matching entries from memory and the table; returns how many distinct entries went. */
  delete(filter: CacheFilter): number {
    this.flush();
    const gone = new Set<string>();
    for (const e of [...this.mem.values()]) {
      if (matches(e, filter)) {
        this.dropMem(e.signature);
        gone.add(e.signature);
      }
    }
    const { where, args } = sqlFilter(filter);
    const sigs = this.store.prepare(`SELECT signature FROM response_cache ${where}`).all(...args) as { signature: string }[];
    this.store.prepare(`DELETE FROM response_cache ${where}`).run(...args);
    for (const r of sigs) {
      this.index.delete(r.signature);
      gone.add(r.signature);
    }
    // The shared tier is scanned in the background (its entries also expire with their time to live).
    if (this.shared) {
      const { signature, ...rest } = filter;
      const tier = this.shared;
      this.sharedDeletion = (
        signature !== undefined
          ? tier.deleteOne(signature)
          : Object.values(rest).every((v) => v === undefined)
            ? tier.delete()
            : tier.delete((e) => matches({ signature: '', namespace: e.namespace, model: e.model, answer: e.answer, json: '', size: 0, createdAt: e.createdAt, expiresAt: e.expiresAt, hits: 0 }, rest))
      ).then(() => undefined);
    }
    return gone.size;
  }

  /** Drop every entry and reset the hit/miss counters. */
  clear(): number {
    const n = this.delete({});
    this.hits = 0;
    this.misses = 0;
    this.metricsDirty = false;
    this.saveMetrics({ hits: 0, misses: 0 });
    return n;
  }
}

function matches(e: MemEntry, f: CacheFilter): boolean {
  if (f.signature !== undefined && e.signature !== f.signature) return false;
  if (f.model !== undefined && e.model !== f.model && e.answer.ref !== f.model) return false;
  if (f.namespace !== undefined && e.namespace !== f.namespace) return false;
  if (f.olderThan !== undefined && e.createdAt >= f.olderThan) return false;
  return true;
}

function sqlFilter(f: CacheFilter): { where: string; args: unknown[] } {
  const clauses: string[] = [];
  const args: unknown[] = [];
  if (f.signature !== undefined) clauses.push('signature = ?'), args.push(f.signature);
  if (f.model !== undefined) clauses.push("(model = ? OR json_extract(answer, '$.ref') = ?)"), args.push(f.model, f.model);
  if (f.namespace !== undefined) clauses.push('namespace = ?'), args.push(f.namespace);
  if (f.olderThan !== undefined) clauses.push('created_at < ?'), args.push(f.olderThan);
  return { where: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', args };
}
