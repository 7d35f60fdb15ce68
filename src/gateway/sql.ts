/**
 * The gateway's repositories on the kit's query layer (store/sql.ts): one `Sql` per SQLite file
 * (its transactions keep other statements of the file waiting, so every repository of the file
 * shares it), and in the database several daemons share, the gateway's tables under `gw_`.
 */
import { PgSql, SqliteSql, type Sql, type TablePrefix } from '../store/sql.js';
import type { Store } from '../store/index.js';
import type { SharedPostgres } from '../store/postgres.js';

/** The tables the gateway's repositories name plainly; `gw_<name>` in the shared database. */
export const GATEWAY_TABLES: TablePrefix = {
  prefix: 'gw_',
  tables: ['request_log', 'memories', 'files', 'file_chunks', 'batches', 'batch_results', 'batch_lines', 'webhook_deliveries', 'webhook_attempts'],
};

const sqlite = new WeakMap<Store, SqliteSql>();

/** The query layer of a SQLite file (one per file). */
export function sqliteSql(store: Store): SqliteSql {
  let s = sqlite.get(store);
  if (!s) sqlite.set(store, (s = new SqliteSql(store)));
  return s;
}

/** The query layer of the shared database, the gateway's tables prefixed. */
export function sharedSql(db: SharedPostgres): Sql {
  return PgSql.over(db, GATEWAY_TABLES);
}

/** How each database names what a table declares alike: big integers (milliseconds, sizes), floats, row ids, the table prefix. */
export interface ColumnTypes {
  readonly big: string;
  readonly real: string;
  /** An integer row id the database assigns. */
  readonly serial: string;
  /** After a table's closing parenthesis: SQLite's WITHOUT ROWID for tables keyed by their primary key. */
  readonly withoutRowid: string;
  /** Table and index name prefix. */
  readonly p: string;
}

export const SQLITE_TYPES: ColumnTypes = { big: 'INTEGER', real: 'REAL', serial: 'INTEGER PRIMARY KEY AUTOINCREMENT', withoutRowid: ' WITHOUT ROWID', p: '' };
export const PG_TYPES: ColumnTypes = { big: 'BIGINT', real: 'DOUBLE PRECISION', serial: 'BIGSERIAL PRIMARY KEY', withoutRowid: '', p: 'gw_' };
