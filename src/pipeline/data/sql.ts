/**
 * The pipeline's SQL, asynchronous, on either database: the daemon's own SQLite file or, with
 * ctl.yaml `storage.postgres`, the database several daemons share. The repositories write one SQL
 * text for both: `?` placeholders (numbered for PostgreSQL here), case-insensitive comparisons as
 * `lower(x) = lower(?)`, conflicts as `ON CONFLICT … DO NOTHING`; `insert` answers the new row's id
 * (`RETURNING id` on PostgreSQL) and `run` the number of rows changed.
 *
 * SQLite answers at once, but a transaction whose steps await must not take in other requests'
 * statements: while one is open, every other statement and transaction waits for its end.
 */
import type { Queryable, SharedPostgres } from '../../store/postgres.js';
import type { Store } from '../../store/index.js';

export interface Sql {
  readonly dialect: 'sqlite' | 'postgres';
  all<R>(sql: string, ...params: unknown[]): Promise<R[]>;
  get<R>(sql: string, ...params: unknown[]): Promise<R | undefined>;
  /** Rows changed. */
  run(sql: string, ...params: unknown[]): Promise<number>;
  /** The id of the row an INSERT made. */
  insert(sql: string, ...params: unknown[]): Promise<number>;
  /** `fn` in one transaction (nested calls join the outer one). */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
}

// ---- SQLite ---------------------------------------------------------------------------------------

export class SqliteSql implements Sql {
  readonly dialect = 'sqlite';
  /** Settles when the open transaction ends (null: none open). */
  private open: Promise<void> | null = null;

  constructor(private readonly store: Store) {}

  /** Statements outside a transaction wait while one is open (they would land inside it). */
  private async ready(): Promise<void> {
    while (this.open) await this.open;
  }

  all<R>(sql: string, ...params: unknown[]): Promise<R[]> {
    return this.open ? this.ready().then(() => this.allNow<R>(sql, params)) : Promise.resolve(this.allNow<R>(sql, params));
  }

  get<R>(sql: string, ...params: unknown[]): Promise<R | undefined> {
    return this.open ? this.ready().then(() => this.getNow<R>(sql, params)) : Promise.resolve(this.getNow<R>(sql, params));
  }

  run(sql: string, ...params: unknown[]): Promise<number> {
    return this.open ? this.ready().then(() => this.runNow(sql, params).changes) : Promise.resolve(this.runNow(sql, params).changes);
  }

  insert(sql: string, ...params: unknown[]): Promise<number> {
    return this.open ? this.ready().then(() => Number(this.runNow(sql, params).lastInsertRowid)) : Promise.resolve(Number(this.runNow(sql, params).lastInsertRowid));
  }

  allNow<R>(sql: string, params: unknown[]): R[] {
    return this.store.prepare(sql).all(...params) as R[];
  }

  getNow<R>(sql: string, params: unknown[]): R | undefined {
    return this.store.prepare(sql).get(...params) as R | undefined;
  }

  runNow(sql: string, params: unknown[]): { changes: number; lastInsertRowid: number | bigint } {
    return this.store.prepare(sql).run(...params);
  }

  async transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    await this.ready();
    let end!: () => void;
    this.open = new Promise<void>((r) => (end = r));
    const db = this.store.db;
    try {
      db.exec('BEGIN IMMEDIATE');
      try {
        const out = await fn(new SqliteTx(this));
        db.exec('COMMIT');
        return out;
      } catch (e) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw e;
      }
    } finally {
      this.open = null;
      end();
    }
  }
}

/** The statements of an open SQLite transaction: they run at once. */
class SqliteTx implements Sql {
  readonly dialect = 'sqlite';

  constructor(private readonly base: SqliteSql) {}

  async all<R>(sql: string, ...params: unknown[]): Promise<R[]> {
    return this.base.allNow<R>(sql, params);
  }

  async get<R>(sql: string, ...params: unknown[]): Promise<R | undefined> {
    return this.base.getNow<R>(sql, params);
  }

  async run(sql: string, ...params: unknown[]): Promise<number> {
    return this.base.runNow(sql, params).changes;
  }

  async insert(sql: string, ...params: unknown[]): Promise<number> {
    return Number(this.base.runNow(sql, params).lastInsertRowid);
  }

  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    return fn(this);
  }
}

// ---- PostgreSQL -----------------------------------------------------------------------------------

/** `?` placeholders as `$1, $2, …` (a `?` inside a quoted literal stays). */
export function numberPlaceholders(sql: string): string {
  let n = 0;
  let quoted = false;
  let out = '';
  for (const ch of sql) {
    if (ch === "'") quoted = !quoted;
    out += ch === '?' && !quoted ? `$${++n}` : ch;
  }
  return out;
}

/**
 * The pipeline's tables carry the prefix `pl_` in the shared database (beside the other components'
 * `am_`, `gw_`, `nm_` tables); SQL written with the plain names is rewritten once per text.
 */
export const PIPELINE_TABLES = ['categories', 'sources', 'runs', 'posts', 'post_metrics', 'used_items', 'style_versions', 'proposals', 'settings', 'activity', 'images'];
const TABLE_RE = new RegExp(`\\b(${PIPELINE_TABLES.join('|')})\\b`, 'g');

/** Placeholders numbered and table names prefixed, outside quoted literals. */
export function pgPipelineText(sql: string): string {
  return numberPlaceholders(sql)
    .split("'")
    .map((part, i) => (i % 2 === 0 ? part.replace(TABLE_RE, 'pl_$1') : part))
    .join("'");
}

const converted = new Map<string, string>();
const pgText = (sql: string): string => {
  let t = converted.get(sql);
  if (t === undefined) converted.set(sql, (t = pgPipelineText(sql)));
  return t;
};

export class PgSql implements Sql {
  readonly dialect = 'postgres';

  constructor(
    private readonly q: Queryable,
    private readonly db: SharedPostgres,
    private readonly inTransaction = false,
  ) {}

  static over(db: SharedPostgres): PgSql {
    return new PgSql(db, db);
  }

  all<R>(sql: string, ...params: unknown[]): Promise<R[]> {
    return this.q.query<R>(pgText(sql), params);
  }

  async get<R>(sql: string, ...params: unknown[]): Promise<R | undefined> {
    return (await this.q.query<R>(pgText(sql), params))[0];
  }

  run(sql: string, ...params: unknown[]): Promise<number> {
    return this.q.command(pgText(sql), params);
  }

  async insert(sql: string, ...params: unknown[]): Promise<number> {
    return (await this.q.query<{ id: number }>(pgText(`${sql} RETURNING id`), params))[0]!.id;
  }

  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn(this);
    return this.db.transaction((q) => fn(new PgSql(q, this.db, true)));
  }
}
