/** SQL of persistent memory: rows in `memories`, ranked search through the `memories_fts` FTS5 index. */
import type { Store } from '../../store/index.js';
import type { SchemaStep } from '../schema.js';

/** Persistent memory: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const MEMORY_SCHEMA: SchemaStep[] = [
  {
    // Persistent memory with an FTS5 index over key and content (kept in step by triggers).
    version: 6,
    up: `
CREATE TABLE memories (
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  key TEXT NOT NULL DEFAULT '',
  content TEXT NOT NULL,
  type TEXT NOT NULL,
  scope TEXT NOT NULL,
  session_id TEXT,
  api_key_id TEXT,
  metadata TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER
);
CREATE INDEX memories_key ON memories(api_key_id, created_at);
CREATE INDEX memories_session ON memories(session_id) WHERE session_id IS NOT NULL;
CREATE INDEX memories_expiry ON memories(expires_at) WHERE expires_at IS NOT NULL;
CREATE VIRTUAL TABLE memories_fts USING fts5(key, content, content='memories', content_rowid='rowid');
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, key, content) VALUES (new.rowid, new.key, new.content);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, key, content) VALUES ('delete', old.rowid, old.key, old.content);
END;
CREATE TRIGGER memories_au AFTER UPDATE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, key, content) VALUES ('delete', old.rowid, old.key, old.content);
  INSERT INTO memories_fts(rowid, key, content) VALUES (new.rowid, new.key, new.content);
END;
`,
  },
];

export const MEMORY_TYPES = ['FACTUAL', 'EPISODIC', 'SEMANTIC', 'PROCEDURAL'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

/** Who a memory is for: every caller, one API key, or one session. */
export const MEMORY_SCOPES = ['global', 'apiKey', 'session'] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

export interface MemoryRecord {
  id: string;
  key: string;
  content: string;
  type: MemoryType;
  scope: MemoryScope;
  sessionId?: string;
  apiKeyId?: string;
  metadata: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
  expiresAt?: number;
}

export interface MemoryFilter {
  apiKeyId?: string;
  type?: MemoryType;
  sessionId?: string;
  scope?: MemoryScope;
  /** Full-text query (FTS5 over key and content). */
  q?: string;
  /** Hide memories whose expiresAt has passed. */
  now?: number;
}

/** Who is asking, for injection: memories of every scope that reach this caller. */
export interface MemoryCaller {
  apiKeyId?: string;
  sessionId?: string;
}

/** A `memories` row (SQLite or the shared `gw_memories`) as a record. */
export const memoryRow = (r: Record<string, unknown>): MemoryRecord => ({
  id: r.id as string,
  key: r.key as string,
  content: r.content as string,
  type: r.type as MemoryType,
  scope: r.scope as MemoryScope,
  ...(r.session_id !== null ? { sessionId: r.session_id as string } : {}),
  ...(r.api_key_id !== null ? { apiKeyId: r.api_key_id as string } : {}),
  metadata: JSON.parse(r.metadata as string) as Record<string, unknown>,
  createdAt: r.created_at as number,
  updatedAt: r.updated_at as number,
  ...(r.expires_at !== null ? { expiresAt: r.expires_at as number } : {}),
});

/** Common English words that say nothing about which memory is relevant. */
const STOPWORDS = new Set(
  ('a an and are as at be been but by can could did do does for from had has have he her him his how i if in into is it its me my no not of on or our she so ' +
    'than that the their them then there these they this to too us was we were what when where which who why will with would you your yes about all also any just should shall may might must').split(' '),
);

/** The words of a user's text that say which memory is relevant: letters, digits and _ only, lowercased, common words left out. */
export function memoryWords(text: string, maxTerms = 32): string[] {
  const words = new Set<string>();
  for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}_]{2,}/gu)) {
    if (STOPWORDS.has(m[0])) continue;
    words.add(m[0]);
    if (words.size >= maxTerms) break;
  }
  return [...words];
}

/**
 * A user's words as an FTS5 query: each word quoted (so no FTS5 syntax reaches the parser), any of
 * them may match. Undefined when no word is left.
 */
export function ftsQuery(text: string, maxTerms = 32): string | undefined {
  const words = memoryWords(text, maxTerms);
  if (words.length === 0) return undefined;
  return words.map((w) => `"${w}"`).join(' OR ');
}

function where(f: MemoryFilter, alias = 'm'): { sql: string; args: unknown[] } {
  const parts: string[] = [];
  const args: unknown[] = [];
  if (f.apiKeyId !== undefined) (parts.push(`${alias}.api_key_id = ?`), args.push(f.apiKeyId));
  if (f.type !== undefined) (parts.push(`${alias}.type = ?`), args.push(f.type));
  if (f.sessionId !== undefined) (parts.push(`${alias}.session_id = ?`), args.push(f.sessionId));
  if (f.scope !== undefined) (parts.push(`${alias}.scope = ?`), args.push(f.scope));
  if (f.now !== undefined) (parts.push(`(${alias}.expires_at IS NULL OR ${alias}.expires_at > ?)`), args.push(f.now));
  return { sql: parts.length ? parts.join(' AND ') : '1', args };
}

/** A memory's owner as one string: its api key and session (either may be absent). */
function ownerOf(apiKeyId: string | undefined, sessionId: string | undefined): string {
  return `${apiKeyId === undefined ? '-' : `k${apiKeyId}`}\u0000${sessionId === undefined ? '-' : `s${sessionId}`}`;
}
const NO_OWNER = ownerOf(undefined, undefined);

export class MemoryStore {
  /** Whether any memory exists: chat requests skip the lookup while there is none. */
  private anyCached: boolean | undefined;
  /** The (api key, session) pairs memories are stored under (`ownerOf`), once read. */
  private owners: Set<string> | undefined;

  constructor(readonly store: Store) {}

  any(): boolean {
    this.anyCached ??= this.store.prepare('SELECT 1 FROM memories LIMIT 1').get() !== undefined;
    return this.anyCached;
  }

  /**
   * Whether a stored memory may reach this caller (an unkeyed one, one of its key, one of its
   * session): false when every memory belongs to other keys or sessions, and the chat path skips the
   * lookup. Answered from the owners read once (then kept up to date by save; a delete reads them again).
   */
  reaches(c: MemoryCaller): boolean {
    const o = (this.owners ??= new Set(
      (this.store.prepare('SELECT DISTINCT api_key_id AS k, session_id AS s FROM memories').all() as { k: string | null; s: string | null }[]).map((r) => ownerOf(r.k ?? undefined, r.s ?? undefined)),
    ));
    if (o.size === 0) return false;
    if (o.has(NO_OWNER)) return true;
    const k = c.apiKeyId;
    const s = c.sessionId;
    if (k !== undefined && o.has(ownerOf(k, undefined))) return true;
    if (s === undefined) return false;
    return o.has(ownerOf(undefined, s)) || (k !== undefined && o.has(ownerOf(k, s)));
  }

  get(id: string): MemoryRecord | undefined {
    const r = this.store.prepare('SELECT * FROM memories WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    return r ? memoryRow(r) : undefined;
  }

  save(m: MemoryRecord): void {
    this.store
      .prepare(
        `INSERT INTO memories (id, key, content, type, scope, session_id, api_key_id, metadata, created_at, updated_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET key = excluded.key, content = excluded.content, type = excluded.type, scope = excluded.scope,
           session_id = excluded.session_id, api_key_id = excluded.api_key_id, metadata = excluded.metadata,
           updated_at = excluded.updated_at, expires_at = excluded.expires_at`,
      )
      .run(m.id, m.key, m.content, m.type, m.scope, m.sessionId ?? null, m.apiKeyId ?? null, JSON.stringify(m.metadata), m.createdAt, m.updatedAt, m.expiresAt ?? null);
    this.anyCached = true;
    this.owners?.add(ownerOf(m.apiKeyId, m.sessionId));
  }

  delete(id: string): boolean {
    this.anyCached = undefined;
    this.owners = undefined;
    return this.store.prepare('DELETE FROM memories WHERE id = ?').run(id).changes > 0;
  }

  /** One page, newest first (or best match first with `q`), and how many match in all. */
  list(f: MemoryFilter, offset: number, limit: number): { rows: MemoryRecord[]; total: number } {
    const w = where(f);
    const q = f.q !== undefined ? ftsQuery(f.q) : undefined;
    if (f.q !== undefined && q === undefined) return { rows: [], total: 0 };
    if (q !== undefined) {
      const from = `FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid WHERE memories_fts MATCH ? AND ${w.sql}`;
      const total = (this.store.prepare(`SELECT count(*) AS n ${from}`).get(q, ...w.args) as { n: number }).n;
      const rows = this.store.prepare(`SELECT m.*, bm25(memories_fts) AS score ${from} ORDER BY score, m.created_at DESC LIMIT ? OFFSET ?`).all(q, ...w.args, limit, offset) as Record<string, unknown>[];
      return { rows: rows.map(memoryRow), total };
    }
    const total = (this.store.prepare(`SELECT count(*) AS n FROM memories m WHERE ${w.sql}`).get(...w.args) as { n: number }).n;
    const rows = this.store.prepare(`SELECT * FROM memories m WHERE ${w.sql} ORDER BY m.created_at DESC, m.id LIMIT ? OFFSET ?`).all(...w.args, limit, offset) as Record<string, unknown>[];
    return { rows: rows.map(memoryRow), total };
  }

  /** Ranked full-text matches with their BM25 score (lower is better, as SQLite gives it). */
  search(q: string, f: MemoryFilter, limit: number): { memory: MemoryRecord; score: number }[] {
    const fq = ftsQuery(q);
    if (fq === undefined) return [];
    const w = where(f);
    const rows = this.store
      .prepare(`SELECT m.*, bm25(memories_fts) AS score FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid WHERE memories_fts MATCH ? AND ${w.sql} ORDER BY score LIMIT ?`)
      .all(fq, ...w.args, limit) as Record<string, unknown>[];
    return rows.map((r) => ({ memory: memoryRow(r), score: r.score as number }));
  }

  /**
   * Memories that reach a caller, unexpired: global ones, the caller's key's, and the caller's
   * session's. With words, ranked by BM25 and limited to matches; the current session's memories
   * come first whether or not they match.
   */
  forCaller(c: MemoryCaller, words: string | undefined, now: number, limit: number): MemoryRecord[] {
    const reach = `(m.expires_at IS NULL OR m.expires_at > ?) AND (m.api_key_id IS NULL OR m.api_key_id = ?) AND (m.session_id IS NULL OR m.session_id = ?)`;
    const args = [now, c.apiKeyId ?? null, c.sessionId ?? null];
    const out: MemoryRecord[] = [];
    const seen = new Set<string>();
    if (c.sessionId !== undefined) {
      const rows = this.store.prepare(`SELECT * FROM memories m WHERE m.session_id = ? AND ${reach} ORDER BY m.created_at DESC LIMIT ?`).all(c.sessionId, ...args, limit) as Record<string, unknown>[];
      for (const r of rows) (out.push(memoryRow(r)), seen.add(r.id as string));
    }
    const fq = words !== undefined ? ftsQuery(words) : undefined;
    if (fq !== undefined && out.length < limit) {
      const rows = this.store
        .prepare(`SELECT m.* FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid WHERE memories_fts MATCH ? AND ${reach} ORDER BY bm25(memories_fts) LIMIT ?`)
        .all(fq, ...args, limit) as Record<string, unknown>[];
      for (const r of rows) if (!seen.has(r.id as string) && out.length < limit) (out.push(memoryRow(r)), seen.add(r.id as string));
    }
    return out;
  }

  /** Delete what a filter selects (everything without one); how many went. */
  clear(f: MemoryFilter): number {
    const w = where(f);
    this.anyCached = undefined;
    this.owners = undefined;
    return this.store.prepare(`DELETE FROM memories AS m WHERE ${w.sql}`).run(...w.args).changes;
  }

  deleteExpired(now: number): number {
    this.anyCached = undefined;
    this.owners = undefined;
    return this.store.prepare('DELETE FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?').run(now).changes;
  }

  stats(now: number): { total: number; expired: number; byType: Record<string, number>; byScope: Record<string, number>; apiKeys: number; sessions: number; bytes: number } {
    const t = this.store
      .prepare(
        `SELECT count(*) AS total, sum(CASE WHEN expires_at IS NOT NULL AND expires_at <= ? THEN 1 ELSE 0 END) AS expired,
                count(DISTINCT api_key_id) AS keys, count(DISTINCT session_id) AS sessions, coalesce(sum(length(content) + length(key)), 0) AS bytes FROM memories`,
      )
      .get(now) as { total: number; expired: number | null; keys: number; sessions: number; bytes: number };
    const byType: Record<string, number> = Object.fromEntries(MEMORY_TYPES.map((x) => [x, 0]));
    for (const r of this.store.prepare('SELECT type, count(*) AS n FROM memories GROUP BY type').all() as { type: string; n: number }[]) byType[r.type] = r.n;
    const byScope: Record<string, number> = Object.fromEntries(MEMORY_SCOPES.map((x) => [x, 0]));
    for (const r of this.store.prepare('SELECT scope, count(*) AS n FROM memories GROUP BY scope').all() as { scope: string; n: number }[]) byScope[r.scope] = r.n;
    return { total: t.total, expired: t.expired ?? 0, byType, byScope, apiKeys: t.keys, sessions: t.sessions, bytes: t.bytes };
  }

  /** FTS5 index consistency (for /api/memory/health). */
  integrity(): string | undefined {
    try {
      this.store.prepare(`INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)`).run();
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  }
}
