/**
 * The node monitor's tables: in the daemon's own SQLite file (`MIGRATIONS`) or, with ctl.yaml
 * `storage.postgres`, in the database several daemons share (`NODES_SHARED_MIGRATIONS`), where they
 * carry the prefix `nm_` (three have shorter names there: `NODES_TABLES`). The store (store.ts)
 * names them plainly; its query layer renames them for PostgreSQL. One text declares the tables
 * for both: the types that differ are named by dialect (`TYPES`).
 */
import type { Migration } from '../store/index.js';
import type { PgMigration } from '../store/postgres.js';
import { PgText, type TablePrefix } from '../store/sql.js';

export const NODES_TABLES: TablePrefix = {
  prefix: 'nm_',
  tables: ['accounts', 'nodes', 'wallets', 'prices', 'netstatus', 'meta'],
  renamed: { node_state: 'nm_state', node_history: 'nm_history', crawl_nodes: 'nm_crawl' },
};

type Dialect = 'sqlite' | 'postgres';

/** Column types by dialect: SQLite's integers are 64-bit whatever their name, PostgreSQL's are not. */
const TYPES = {
  sqlite: { key: 'INTEGER PRIMARY KEY', serial: 'INTEGER PRIMARY KEY AUTOINCREMENT', big: 'INTEGER', real: 'REAL', rate: 'INTEGER', keyed: ' WITHOUT ROWID' },
  postgres: { key: 'BIGSERIAL PRIMARY KEY', serial: 'BIGSERIAL PRIMARY KEY', big: 'BIGINT', real: 'DOUBLE PRECISION', rate: 'DOUBLE PRECISION', keyed: '' },
} as const;

const pgNames = new PgText(NODES_TABLES);

/** An index name: the table's name in that database, and what it indexes. */
function index(d: Dialect, table: string, what: string): string {
  return `${d === 'sqlite' ? table : pgNames.convert(table)}_${what}`;
}

function tables(d: Dialect): string {
  const t = TYPES[d];
  const ix = (table: string, what: string) => index(d, table, what);
  const text = `
      CREATE TABLE accounts (
        id ${t.key},
        hash TEXT NOT NULL UNIQUE,
        created_ip TEXT NOT NULL,
        created_at ${t.big} NOT NULL
      );
      CREATE INDEX ${ix('accounts', 'created')} ON accounts(created_ip, created_at);

      CREATE TABLE nodes (
        id ${t.serial},
        account_id ${t.big} NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        ip TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at ${t.big} NOT NULL,
        UNIQUE (account_id, ip)
      );
      CREATE INDEX ${ix('nodes', 'ip')} ON nodes(ip);

      -- Last poll result per distinct address (shared by every account that added it).
      CREATE TABLE node_state (
        ip TEXT PRIMARY KEY,
        pool TEXT NOT NULL DEFAULT 'main',
        status TEXT,
        fails INTEGER NOT NULL DEFAULT 0,
        ever_ok INTEGER NOT NULL DEFAULT 0,
        uptime ${t.big} NOT NULL DEFAULT 0,
        height ${t.big} NOT NULL DEFAULT 0,
        version TEXT NOT NULL DEFAULT '',
        relays ${t.big} NOT NULL DEFAULT 0,
        currts ${t.big} NOT NULL DEFAULT 0,
        proposals ${t.big} NOT NULL DEFAULT 0,
        public_key TEXT,
        sync_state TEXT,
        rph ${t.rate} NOT NULL DEFAULT 0,
        rph10 ${t.rate} NOT NULL DEFAULT 0,
        rph60 ${t.rate} NOT NULL DEFAULT 0,
        updated_at ${t.big} NOT NULL
      );
      CREATE INDEX ${ix('node_state', 'key')} ON node_state(public_key);

      CREATE TABLE node_history (
        ip TEXT NOT NULL,
        taken_at ${t.big} NOT NULL,
        currts ${t.big} NOT NULL,
        uptime ${t.big} NOT NULL,
        height ${t.big} NOT NULL,
        relays ${t.big} NOT NULL,
        PRIMARY KEY (ip, taken_at)
      )${t.keyed};

      CREATE TABLE wallets (
        id ${t.serial},
        account_id ${t.big} NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        address TEXT NOT NULL,
        balance ${t.real} NOT NULL DEFAULT -100,
        updated_at ${t.big},
        UNIQUE (account_id, address)
      );
      CREATE INDEX ${ix('wallets', 'address')} ON wallets(address);

      CREATE TABLE prices (
        currency TEXT PRIMARY KEY,
        value ${t.real} NOT NULL,
        updated_at ${t.big} NOT NULL
      );

      CREATE TABLE netstatus (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        data TEXT NOT NULL,
        updated_at ${t.big} NOT NULL
      );

      -- Network crawl results; the current generation is in meta.crawl_generation.
      CREATE TABLE crawl_nodes (
        generation ${t.big} NOT NULL,
        ip TEXT NOT NULL,
        public_key TEXT,
        sync_state TEXT,
        height ${t.big} NOT NULL DEFAULT 0,
        uptime ${t.big} NOT NULL DEFAULT 0,
        relays ${t.big} NOT NULL DEFAULT 0,
        proposals ${t.big} NOT NULL DEFAULT 0,
        answered INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (generation, ip)
      )${t.keyed};
      CREATE INDEX ${ix('crawl_nodes', 'key')} ON crawl_nodes(generation, public_key);

      CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `;
  return d === 'sqlite' ? text : pgNames.convert(text);
}

/** getmynodes reads an account's nodes in id order: no sort step with this index. */
const accountOrder = (d: Dialect) => {
  const text = `CREATE INDEX ${index(d, 'nodes', 'account_order')} ON nodes(account_id, id);`;
  return d === 'sqlite' ? text : pgNames.convert(text);
};

export const MIGRATIONS: Migration[] = [
  { version: 1, up: tables('sqlite') },
  { version: 2, up: accountOrder('sqlite') },
];

export const NODES_SHARED_MIGRATIONS: PgMigration[] = [{ version: 1, up: `${tables('postgres')}\n${accountOrder('postgres')}` }];
