/**
 * SQL of the gateway's persistent memory (/api/memory, injection into chat requests), on either
 * database (store/sql.ts). Ranked full-text search is each database's own: in the daemon's SQLite
 * file the `memories_fts` FTS5 index (BM25); in the PostgreSQL database several gateways share, a
 * `simple` tsvector of key and content (GIN-indexed), ranked by ts_rank, its scores given FTS5's
 * sign (lower is better). The same words match either way: any of the user's words, common English
 * words left out.
 *
 * `any()` answers from memory for the chat path: a save sets it; a delete makes it look again (at
 * once in SQLite, in the background in PostgreSQL, saying true meanwhile). In the shared database a
 * notification from another gateway's change (channel `ctl_gw_memory`) makes it look again too.
 */
import type { Logger } from 'pino';
import type { SharedPostgres } from '../../store/postgres.js';
import { SqliteSql, type Sql } from '../../store/sql.js';
import type { SchemaStep } from '../schema.js';

/** Persistent memory in the shared database (`gw_memories`, with its tsvector). */
export const MEMORY_MIGRATION = `
  CREATE TABLE gw_memories (
    id TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    content TEXT NOT NULL,
    type TEXT NOT NULL,
    scope TEXT NOT NULL,
    session_id TEXT,
    api_key_id TEXT,
    metadata TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    expires_at BIGINT,
    search tsvector GENERATED ALWAYS AS (to_tsvector('simple', key || ' ' || content)) STORED
  );
  CREATE INDEX gw_memories_key ON gw_memories(api_key_id, created_at);
  CREATE INDEX gw_memories_session ON gw_memories(session_id) WHERE session_id IS NOT NULL;
  CREATE INDEX gw_memories_expiry ON gw_memories(expires_at) WHERE expires_at IS NOT NULL;
  CREATE INDEX gw_memories_search ON gw_memories USING GIN (search);
`;

/** Persistent memory: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
/** Persistent memory: this capability's share of the gateway's PostgreSQL migrations (placed by version in gateway/schema.ts). */
export const MEMORY_PG_SCHEMA: SchemaStep[] = [{ version: 3, up: MEMORY_MIGRATION }];

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
  return { sql: parts.length ? parts.join(' AND ') : 'TRUE', args };
}

const COLUMNS = 'm.id, m.key, m.content, m.type, m.scope, m.session_id, m.api_key_id, m.metadata, m.created_at, m.updated_at, m.expires_at';
const CHANNEL = 'ctl_gw_memory';

/** A full-text match in either database: `from` binds the words (one `?`, before any other), `cond` selects, `score` ranks (lower is better). */
interface TextMatch {
  words: string;
  from: string;
  cond: string;
  score: string;
}

function textMatch(dialect: Sql['dialect'], text: string): TextMatch | undefined {
  if (dialect === 'postgres') {
    const words = memoryWords(text);
    if (words.length === 0) return undefined;
    // memoryWords keeps letters, digits and _ only: `a | b` is a valid tsquery.
    return { words: words.join(' | '), from: "memories m, to_tsquery('simple', ?) query", cond: 'm.search @@ query', score: '-ts_rank(m.search, query)' };
  }
  const words = ftsQuery(text);
  if (words === undefined) return undefined;
  return { words, from: 'memories_fts JOIN memories m ON m.rowid = memories_fts.rowid', cond: 'memories_fts MATCH ?', score: 'bm25(memories_fts)' };
}

/** A memory's owner as one string: its api key and session (either may be absent). */
function ownerOf(apiKeyId: string | null | undefined, sessionId: string | null | undefined): string {
  return `${apiKeyId == null ? '-' : `k${apiKeyId}`}\u0000${sessionId == null ? '-' : `s${sessionId}`}`;
}
const NO_OWNER = ownerOf(undefined, undefined);
const OWNERS = 'SELECT DISTINCT api_key_id AS k, session_id AS s FROM memories';
const ownerSet = (rows: { k: string | null; s: string | null }[]) => new Set(rows.map((r) => ownerOf(r.k, r.s)));

type MemoryStats = { total: number; expired: number; byType: Record<string, number>; byScope: Record<string, number>; apiKeys: number; sessions: number; bytes: number };

export class MemoryStore {
  /** Whether any memory exists (undefined: not known; then a lookup finds out). */
  private anyKnown: boolean | undefined;
  /** The (api key, session) pairs memories are stored under (`ownerOf`), once read (undefined: not known). */
  private owners: Set<string> | undefined;
  /** Tells the other gateways of a change (the shared database; nobody to tell otherwise). */
  private announce: () => Promise<void> = async () => {};
  private log?: Logger;

  constructor(private readonly sql: Sql) {}

  /** In the shared database: changes announced to the other gateways, and theirs followed. */
  static async shared(sql: Sql, db: SharedPostgres, daemonId: string, log: Logger): Promise<MemoryStore> {
    const s = new MemoryStore(sql);
    s.log = log;
    s.announce = () => db.notify(CHANNEL, daemonId).catch(() => undefined);
    await db.subscribe(
      CHANNEL,
      (from) => {
        if (from !== daemonId) s.forget();
      },
      () => s.forget(),
    );
    await s.refreshAny();
    return s;
  }

  /** Whether any memory may exist (false only when none does): chat requests skip the lookup otherwise. */
  any(): boolean {
    if (this.anyKnown !== undefined) return this.anyKnown;
    // SQLite answers at once; the shared database later (true meanwhile, the lookup finds out).
    if (this.sql instanceof SqliteSql) return (this.anyKnown = this.sql.getNow('SELECT 1 FROM memories LIMIT 1', []) !== undefined);
    void this.refreshAny();
    return true;
  }

  /**
   * Whether a stored memory may reach this caller (an unkeyed one, one of its key, one of its
   * session): false when every memory belongs to other keys or sessions, and the chat path skips
   * the lookup. Answered from the owners read once (kept up to date by save; a delete reads them
   * again); the shared database answers later (true meanwhile, the lookup finds out).
   */
  reaches(c: MemoryCaller): boolean {
    let o = this.owners;
    if (o === undefined) {
      if (!(this.sql instanceof SqliteSql)) {
        void this.refreshOwners();
        return true;
      }
      o = this.owners = ownerSet(this.sql.allNow(OWNERS, []));
    }
    if (o.size === 0) return false;
    if (o.has(NO_OWNER)) return true;
    const k = c.apiKeyId;
    const s = c.sessionId;
    if (k !== undefined && o.has(ownerOf(k, undefined))) return true;
    if (s === undefined) return false;
    return o.has(ownerOf(undefined, s)) || (k !== undefined && o.has(ownerOf(k, s)));
  }

  private async refreshOwners(): Promise<void> {
    try {
      this.owners = ownerSet(await this.sql.all(OWNERS));
    } catch (e) {
      this.log?.debug({ err: e }, 'gateway: could not read the owners of shared memories');
    }
  }

  /** What is known of the stored memories is stale (a delete here, a change elsewhere). */
  private forget(): void {
    this.anyKnown = undefined;
    this.owners = undefined;
  }

  private async refreshAny(): Promise<void> {
    try {
      this.anyKnown = (await this.sql.get('SELECT 1 FROM memories LIMIT 1')) !== undefined;
    } catch (e) {
      this.log?.debug({ err: e }, 'gateway: could not check for shared memories');
    }
  }

  async get(id: string): Promise<MemoryRecord | undefined> {
    const r = await this.sql.get<Record<string, unknown>>(`SELECT ${COLUMNS} FROM memories m WHERE m.id = ?`, id);
    return r ? memoryRow(r) : undefined;
  }

  async save(m: MemoryRecord): Promise<void> {
    await this.sql.run(
      `INSERT INTO memories (id, key, content, type, scope, session_id, api_key_id, metadata, created_at, updated_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET key = excluded.key, content = excluded.content, type = excluded.type, scope = excluded.scope,
         session_id = excluded.session_id, api_key_id = excluded.api_key_id, metadata = excluded.metadata,
         updated_at = excluded.updated_at, expires_at = excluded.expires_at`,
      m.id,
      m.key,
      m.content,
      m.type,
      m.scope,
      m.sessionId ?? null,
      m.apiKeyId ?? null,
      JSON.stringify(m.metadata),
      m.createdAt,
      m.updatedAt,
      m.expiresAt ?? null,
    );
    this.anyKnown = true;
    this.owners?.add(ownerOf(m.apiKeyId, m.sessionId));
    await this.announce();
  }

  async delete(id: string): Promise<boolean> {
    const gone = (await this.sql.run('DELETE FROM memories WHERE id = ?', id)) > 0;
    this.forget();
    await this.announce();
    return gone;
  }

  /** One page, newest first (or best match first with `q`), and how many match in all. */
  async list(f: MemoryFilter, offset: number, limit: number): Promise<{ rows: MemoryRecord[]; total: number }> {
    const w = where(f);
    if (f.q !== undefined) {
      const t = textMatch(this.sql.dialect, f.q);
      if (t === undefined) return { rows: [], total: 0 };
      const from = `FROM ${t.from} WHERE ${t.cond} AND ${w.sql}`;
      const total = (await this.sql.get<{ n: number }>(`SELECT count(*) AS n ${from}`, t.words, ...w.args))!.n;
      const rows = await this.sql.all<Record<string, unknown>>(`SELECT ${COLUMNS}, ${t.score} AS score ${from} ORDER BY score, m.created_at DESC LIMIT ? OFFSET ?`, t.words, ...w.args, limit, offset);
      return { rows: rows.map(memoryRow), total };
    }
    const total = (await this.sql.get<{ n: number }>(`SELECT count(*) AS n FROM memories m WHERE ${w.sql}`, ...w.args))!.n;
    const rows = await this.sql.all<Record<string, unknown>>(`SELECT ${COLUMNS} FROM memories m WHERE ${w.sql} ORDER BY m.created_at DESC, m.id LIMIT ? OFFSET ?`, ...w.args, limit, offset);
    return { rows: rows.map(memoryRow), total };
  }

  /** Ranked full-text matches with their score (lower is better, as SQLite's BM25 gives it). */
  async search(q: string, f: MemoryFilter, limit: number): Promise<{ memory: MemoryRecord; score: number }[]> {
    const t = textMatch(this.sql.dialect, q);
    if (t === undefined) return [];
    const w = where(f);
    const rows = await this.sql.all<Record<string, unknown>>(`SELECT ${COLUMNS}, ${t.score} AS score FROM ${t.from} WHERE ${t.cond} AND ${w.sql} ORDER BY score LIMIT ?`, t.words, ...w.args, limit);
    return rows.map((r) => ({ memory: memoryRow(r), score: r.score as number }));
  }

  /**
   * Memories that reach a caller, unexpired: global ones, the caller's key's, and the caller's
   * session's. With words, ranked and limited to matches; the current session's memories come
   * first whether or not they match.
   */
  async forCaller(c: MemoryCaller, words: string | undefined, now: number, limit: number): Promise<MemoryRecord[]> {
    const reach = '(m.expires_at IS NULL OR m.expires_at > ?) AND (m.api_key_id IS NULL OR m.api_key_id = ?) AND (m.session_id IS NULL OR m.session_id = ?)';
    const args = [now, c.apiKeyId ?? null, c.sessionId ?? null];
    const out: MemoryRecord[] = [];
    const seen = new Set<string>();
    if (c.sessionId !== undefined) {
      const rows = await this.sql.all<Record<string, unknown>>(`SELECT ${COLUMNS} FROM memories m WHERE m.session_id = ? AND ${reach} ORDER BY m.created_at DESC LIMIT ?`, c.sessionId, ...args, limit);
      for (const r of rows) (out.push(memoryRow(r)), seen.add(r.id as string));
    }
    const t = words !== undefined ? textMatch(this.sql.dialect, words) : undefined;
    if (t !== undefined && out.length < limit) {
      const rows = await this.sql.all<Record<string, unknown>>(`SELECT ${COLUMNS} FROM ${t.from} WHERE ${t.cond} AND ${reach} ORDER BY ${t.score} LIMIT ?`, t.words, ...args, limit);
      for (const r of rows) if (!seen.has(r.id as string) && out.length < limit) (out.push(memoryRow(r)), seen.add(r.id as string));
    }
    return out;
  }

  /** Delete what a filter selects (everything without one); how many went. */
  async clear(f: MemoryFilter): Promise<number> {
    const w = where(f);
    const n = await this.sql.run(`DELETE FROM memories AS m WHERE ${w.sql}`, ...w.args);
    this.forget();
    await this.announce();
    return n;
  }

  async deleteExpired(now: number): Promise<number> {
    const n = await this.sql.run('DELETE FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?', now);
    this.forget();
    await this.announce();
    return n;
  }

  async stats(now: number): Promise<MemoryStats> {
    const t = (await this.sql.get<{ total: number; expired: number | null; keys: number; sessions: number; bytes: number }>(
      `SELECT count(*) AS total, CAST(sum(CASE WHEN expires_at IS NOT NULL AND expires_at <= ? THEN 1 ELSE 0 END) AS BIGINT) AS expired,
              count(DISTINCT api_key_id) AS keys, count(DISTINCT session_id) AS sessions, CAST(coalesce(sum(length(content) + length(key)), 0) AS BIGINT) AS bytes FROM memories`,
      now,
    ))!;
    const byType: Record<string, number> = Object.fromEntries(MEMORY_TYPES.map((x) => [x, 0]));
    for (const r of await this.sql.all<{ type: string; n: number }>('SELECT type, count(*) AS n FROM memories GROUP BY type')) byType[r.type] = r.n;
    const byScope: Record<string, number> = Object.fromEntries(MEMORY_SCOPES.map((x) => [x, 0]));
    for (const r of await this.sql.all<{ scope: string; n: number }>('SELECT scope, count(*) AS n FROM memories GROUP BY scope')) byScope[r.scope] = r.n;
    return { total: t.total, expired: t.expired ?? 0, byType, byScope, apiKeys: t.keys, sessions: t.sessions, bytes: t.bytes };
  }

  /** Search index consistency (for /api/memory/health): FTS5's check; PostgreSQL's index is a generated column, nothing can drift. */
  async integrity(): Promise<string | undefined> {
    if (this.sql.dialect === 'postgres') {
      await this.sql.get('SELECT 1 FROM memories LIMIT 1');
      return undefined;
    }
    try {
      await this.sql.run(`INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)`);
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  }
}
