/**
 * The kit's query layer: SQL, asynchronous, on either database: the daemon's own SQLite file or,
 * with ctl.yaml `storage.postgres`, the database several daemons share. A component's repositories
 * write one SQL text for both: `?` placeholders (numbered for PostgreSQL here), case-insensitive comparisons as
 * `lower(x) = lower(?)`, conflicts as `ON CONFLICT … DO NOTHING`; `insert` answers the new row's id
 * (`RETURNING id` on PostgreSQL) and `run` the number of rows changed. In the shared database a
 * component's tables carry its prefix (`pl_`, `nm_`…): the SQL names them plainly and `PgSql`
 * rewrites the names it is given (`TablePrefix`).
 *
 * SQLite answers at once, but a transaction whose steps await must not take in other requests'
 * statements: while one is open, every other statement and transaction waits for its end.
 */
import type { Queryable, SharedPostgres } from './postgres.js';
import type { Store } from './index.js';

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

  /**
   * A statement outside a transaction: at once, or after the open transaction (it would land inside
   * it). Its error comes as a rejection either way, never thrown at the caller.
   */
  private now<T>(f: () => T): Promise<T> {
    if (this.open) return this.queued(f);
    try {
      return Promise.resolve(f());
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Checked again after every wait and run in the same turn: a transaction woken first keeps it out. */
  private async queued<T>(f: () => T): Promise<T> {
    while (this.open) await this.open;
    return f();
  }

  all<R>(sql: string, ...params: unknown[]): Promise<R[]> {
    return this.now(() => this.allNow<R>(sql, params));
  }

  get<R>(sql: string, ...params: unknown[]): Promise<R | undefined> {
    return this.now(() => this.getNow<R>(sql, params));
  }

  run(sql: string, ...params: unknown[]): Promise<number> {
    return this.now(() => this.runNow(sql, params).changes);
  }

  insert(sql: string, ...params: unknown[]): Promise<number> {
    return this.now(() => Number(this.runNow(sql, params).lastInsertRowid));
  }

  /** Rows as arrays of their column values: for long lists, about half the CPU time of row objects (SQLite only). */
  values(sql: string, ...params: unknown[]): Promise<unknown[][]> {
    return this.now(() => {
      const st = this.store.prepare(sql);
      try {
        return st.raw(true).all(...params) as unknown[][];
      } finally {
        st.raw(false);
      }
    });
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
    // Checked again after every wait, and taken in the same turn: two transactions started together
    // take turns instead of the second beginning inside the first.
    while (this.open) await this.open;
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

/** A component's tables in the shared database: their plain names, and the prefix they carry there. */
export interface TablePrefix {
  readonly prefix: string;
  readonly tables: readonly string[];
  /** Tables whose name in the shared database is not the prefix and the plain name (plain name: shared name). */
  readonly renamed?: Readonly<Record<string, string>>;
}

/** SQL texts as PostgreSQL gets them (placeholders numbered, tables prefixed), converted once per text. */
export class PgText {
  private readonly re: RegExp | undefined;
  private readonly converted = new Map<string, string>();

  constructor(private readonly names?: TablePrefix) {
    const plain = names ? [...names.tables, ...Object.keys(names.renamed ?? {})] : [];
    this.re = plain.length > 0 ? new RegExp(`\\b(${plain.join('|')})\\b`, 'g') : undefined;
  }

  /** Placeholders numbered and table names prefixed, outside quoted literals. */
  convert(sql: string): string {
    const numbered = numberPlaceholders(sql);
    const re = this.re;
    if (!re) return numbered;
    const { prefix, renamed } = this.names!;
    const shared = (name: string) => renamed?.[name] ?? `${prefix}${name}`;
    return numbered
      .split("'")
      .map((part, i) => (i % 2 === 0 ? part.replace(re, shared) : part))
      .join("'");
  }

  text(sql: string): string {
    let t = this.converted.get(sql);
    if (t === undefined) this.converted.set(sql, (t = this.convert(sql)));
    return t;
  }
}

export class PgSql implements Sql {
  readonly dialect = 'postgres';

  constructor(
    private readonly q: Queryable,
    private readonly db: SharedPostgres,
    private readonly texts: PgText,
    private readonly inTransaction = false,
  ) {}

  /** `tables`: the component's tables and their prefix in the shared database. */
  static over(db: SharedPostgres, tables?: TablePrefix): PgSql {
    return new PgSql(db, db, new PgText(tables));
  }

  all<R>(sql: string, ...params: unknown[]): Promise<R[]> {
    return this.q.query<R>(this.texts.text(sql), params);
  }

  async get<R>(sql: string, ...params: unknown[]): Promise<R | undefined> {
    return (await this.q.query<R>(this.texts.text(sql), params))[0];
  }

  run(sql: string, ...params: unknown[]): Promise<number> {
    return this.q.command(this.texts.text(sql), params);
  }

  async insert(sql: string, ...params: unknown[]): Promise<number> {
    return (await this.q.query<{ id: number }>(this.texts.text(`${sql} RETURNING id`), params))[0]!.id;
  }

  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn(this);
    return this.db.transaction((q) => fn(new PgSql(q, this.db, this.texts, true)));
  }
}
