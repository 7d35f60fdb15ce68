/**
 * The gateway's persistent memory (/api/memory, injection into chat requests) in the PostgreSQL
 * database several gateways share: a memory saved through one gateway is listed, searched and
 * injected by every gateway. Full-text search is PostgreSQL's (a `simple` tsvector of key and
 * content, GIN-indexed) in place of SQLite's FTS5: the same words match (any of the user's words,
 * common English words left out), ranked by ts_rank; scores keep FTS5's sign (lower is better).
 *
 * `any()` answers from memory for the chat path: a save here sets it, and a notification from
 * another gateway's save (channel `ctl_gw_memory`) sets it there; deletes make every gateway look
 * again.
 */
import type { Logger } from 'pino';
import type { SharedPostgres } from '../../store/postgres.js';
import type { MemoryData } from './data.js';
import { MEMORY_SCOPES, MEMORY_TYPES, memoryRow, memoryWords, type MemoryCaller, type MemoryFilter, type MemoryRecord } from './store.js';
import type { SchemaStep } from '../schema.js';

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

/** Persistent memory: this capability's share of the gateway's PostgreSQL migrations (placed by version in gateway/schema.ts). */
export const MEMORY_PG_SCHEMA: SchemaStep[] = [{ version: 3, up: MEMORY_MIGRATION }];

const CHANNEL = 'ctl_gw_memory';
const COLUMNS = 'm.id, m.key, m.content, m.type, m.scope, m.session_id, m.api_key_id, m.metadata, m.created_at, m.updated_at, m.expires_at';


/** The user's words as a tsquery text (`a | b`): memoryWords keeps letters, digits and _ only. */
function tsQuery(text: string): string | undefined {
  const words = memoryWords(text);
  return words.length ? words.join(' | ') : undefined;
}

/** SQL conditions of a filter, numbering parameters from `first`. */
function where(f: MemoryFilter, first: number): { sql: string; args: unknown[] } {
  const parts: string[] = [];
  const args: unknown[] = [];
  const p = (cond: string, v: unknown) => {
    args.push(v);
    parts.push(cond.replace('?', `$${first + args.length - 1}`));
  };
  if (f.apiKeyId !== undefined) p('m.api_key_id = ?', f.apiKeyId);
  if (f.type !== undefined) p('m.type = ?', f.type);
  if (f.sessionId !== undefined) p('m.session_id = ?', f.sessionId);
  if (f.scope !== undefined) p('m.scope = ?', f.scope);
  if (f.now !== undefined) p('(m.expires_at IS NULL OR m.expires_at > ?)', f.now);
  return { sql: parts.length ? parts.join(' AND ') : 'TRUE', args };
}

export class PgMemoryStore implements MemoryData {
  /** undefined: not known (then `any()` says true and a lookup finds out). */
  private anyKnown: boolean | undefined;

  private constructor(
    private readonly db: SharedPostgres,
    private readonly daemonId: string,
    private readonly log: Logger,
  ) {}

  static async open(db: SharedPostgres, daemonId: string, log: Logger): Promise<PgMemoryStore> {
    const s = new PgMemoryStore(db, daemonId, log);
    await db.subscribe(
      CHANNEL,
      (from) => {
        if (from !== daemonId) s.anyKnown = undefined;
      },
      () => (s.anyKnown = undefined),
    );
    await s.refreshAny();
    return s;
  }

  any(): boolean {
    if (this.anyKnown === undefined) {
      void this.refreshAny();
      return true;
    }
    return this.anyKnown;
  }

  private async refreshAny(): Promise<void> {
    try {
      this.anyKnown = (await this.db.query('SELECT 1 FROM gw_memories LIMIT 1')).length > 0;
    } catch (e) {
      this.log.debug({ err: e }, 'gateway: could not check for shared memories');
    }
  }

  private announce(): Promise<void> {
    return this.db.notify(CHANNEL, this.daemonId).catch(() => undefined);
  }

  async get(id: string): Promise<MemoryRecord | undefined> {
    const r = (await this.db.query(`SELECT ${COLUMNS} FROM gw_memories m WHERE m.id = $1`, [id]))[0];
    return r ? memoryRow(r) : undefined;
  }

  async save(m: MemoryRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO gw_memories (id, key, content, type, scope, session_id, api_key_id, metadata, created_at, updated_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
       ON CONFLICT (id) DO UPDATE SET key = excluded.key, content = excluded.content, type = excluded.type, scope = excluded.scope,
         session_id = excluded.session_id, api_key_id = excluded.api_key_id, metadata = excluded.metadata,
         updated_at = excluded.updated_at, expires_at = excluded.expires_at`,
      [m.id, m.key, m.content, m.type, m.scope, m.sessionId ?? null, m.apiKeyId ?? null, JSON.stringify(m.metadata), m.createdAt, m.updatedAt, m.expiresAt ?? null],
    );
    this.anyKnown = true;
    await this.announce();
  }

  async delete(id: string): Promise<boolean> {
    const gone = (await this.db.query('DELETE FROM gw_memories WHERE id = $1 RETURNING id', [id])).length > 0;
    this.anyKnown = undefined;
    await this.announce();
    return gone;
  }

  async list(f: MemoryFilter, offset: number, limit: number): Promise<{ rows: MemoryRecord[]; total: number }> {
    const q = f.q !== undefined ? tsQuery(f.q) : undefined;
    if (f.q !== undefined && q === undefined) return { rows: [], total: 0 };
    if (q !== undefined) {
      const w = where(f, 2);
      const from = `FROM gw_memories m, to_tsquery('simple', $1) query WHERE m.search @@ query AND ${w.sql}`;
      const total = (await this.db.query<{ n: number }>(`SELECT count(*) AS n ${from}`, [q, ...w.args]))[0]!.n;
      const n = w.args.length + 2;
      const rows = await this.db.query(`SELECT ${COLUMNS} ${from} ORDER BY ts_rank(m.search, query) DESC, m.created_at DESC LIMIT $${n} OFFSET $${n + 1}`, [q, ...w.args, limit, offset]);
      return { rows: rows.map(memoryRow), total };
    }
    const w = where(f, 1);
    const total = (await this.db.query<{ n: number }>(`SELECT count(*) AS n FROM gw_memories m WHERE ${w.sql}`, w.args))[0]!.n;
    const n = w.args.length + 1;
    const rows = await this.db.query(`SELECT ${COLUMNS} FROM gw_memories m WHERE ${w.sql} ORDER BY m.created_at DESC, m.id LIMIT $${n} OFFSET $${n + 1}`, [...w.args, limit, offset]);
    return { rows: rows.map(memoryRow), total };
  }

  async search(text: string, f: MemoryFilter, limit: number): Promise<{ memory: MemoryRecord; score: number }[]> {
    const q = tsQuery(text);
    if (q === undefined) return [];
    const w = where(f, 2);
    const rows = await this.db.query(
      `SELECT ${COLUMNS}, -ts_rank(m.search, query) AS score FROM gw_memories m, to_tsquery('simple', $1) query
       WHERE m.search @@ query AND ${w.sql} ORDER BY score LIMIT $${w.args.length + 2}`,
      [q, ...w.args, limit],
    );
    return rows.map((r) => ({ memory: memoryRow(r), score: r.score as number }));
  }

  async forCaller(c: MemoryCaller, words: string | undefined, now: number, limit: number): Promise<MemoryRecord[]> {
    const reach = '(m.expires_at IS NULL OR m.expires_at > $1) AND (m.api_key_id IS NULL OR m.api_key_id = $2) AND (m.session_id IS NULL OR m.session_id = $3)';
    const args = [now, c.apiKeyId ?? null, c.sessionId ?? null];
    const out: MemoryRecord[] = [];
    const seen = new Set<string>();
    if (c.sessionId !== undefined) {
      const rows = await this.db.query(`SELECT ${COLUMNS} FROM gw_memories m WHERE m.session_id = $3 AND ${reach} ORDER BY m.created_at DESC LIMIT $4`, [...args, limit]);
      for (const r of rows) (out.push(memoryRow(r)), seen.add(r.id as string));
    }
    const q = words !== undefined ? tsQuery(words) : undefined;
    if (q !== undefined && out.length < limit) {
      const rows = await this.db.query(
        `SELECT ${COLUMNS} FROM gw_memories m, to_tsquery('simple', $4) query WHERE m.search @@ query AND ${reach} ORDER BY ts_rank(m.search, query) DESC LIMIT $5`,
        [...args, q, limit],
      );
      for (const r of rows) if (!seen.has(r.id as string) && out.length < limit) (out.push(memoryRow(r)), seen.add(r.id as string));
    }
    return out;
  }

  async clear(f: MemoryFilter): Promise<number> {
    const w = where(f, 1);
    const n = (await this.db.query(`DELETE FROM gw_memories m WHERE ${w.sql} RETURNING id`, w.args)).length;
    this.anyKnown = undefined;
    await this.announce();
    return n;
  }

  async deleteExpired(now: number): Promise<number> {
    const n = (await this.db.query('DELETE FROM gw_memories WHERE expires_at IS NOT NULL AND expires_at <= $1 RETURNING id', [now])).length;
    this.anyKnown = undefined;
    await this.announce();
    return n;
  }

  async stats(now: number): Promise<{ total: number; expired: number; byType: Record<string, number>; byScope: Record<string, number>; apiKeys: number; sessions: number; bytes: number }> {
    const t = (
      await this.db.query<{ total: number; expired: number | null; keys: number; sessions: number; bytes: number }>(
        `SELECT count(*) AS total, sum(CASE WHEN expires_at IS NOT NULL AND expires_at <= $1 THEN 1 ELSE 0 END)::bigint AS expired,
                count(DISTINCT api_key_id) AS keys, count(DISTINCT session_id) AS sessions, coalesce(sum(length(content) + length(key)), 0)::bigint AS bytes FROM gw_memories`,
        [now],
      )
    )[0]!;
    const byType: Record<string, number> = Object.fromEntries(MEMORY_TYPES.map((x) => [x, 0]));
    for (const r of await this.db.query<{ type: string; n: number }>('SELECT type, count(*) AS n FROM gw_memories GROUP BY type')) byType[r.type] = r.n;
    const byScope: Record<string, number> = Object.fromEntries(MEMORY_SCOPES.map((x) => [x, 0]));
    for (const r of await this.db.query<{ scope: string; n: number }>('SELECT scope, count(*) AS n FROM gw_memories GROUP BY scope')) byScope[r.scope] = r.n;
    return { total: t.total, expired: t.expired ?? 0, byType, byScope, apiKeys: t.keys, sessions: t.sessions, bytes: t.bytes };
  }

  /** The search index is part of the table (a generated column): nothing can drift. */
  async integrity(): Promise<string | undefined> {
    await this.db.query('SELECT 1 FROM gw_memories LIMIT 1');
    return undefined;
  }
}
