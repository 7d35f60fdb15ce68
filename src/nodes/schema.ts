/**
 * The node monitor's tables: in the daemon's own SQLite file (`MIGRATIONS`) or, with ctl.yaml
 * `storage.postgres`, in the database several daemons share (`NODES_SHARED_MIGRATIONS`), where they
 * carry the prefix `nm_` (three have shorter names there: `NODES_TABLES`). The store (store.ts)
 * names them plainly; its query layer renames them for PostgreSQL.
 */
import type { Migration } from '../store/index.js';
import type { PgMigration } from '../store/postgres.js';
import type { TablePrefix } from '../store/sql.js';

export const NODES_TABLES: TablePrefix = {
  prefix: 'nm_',
  tables: ['accounts', 'nodes', 'wallets', 'prices', 'netstatus', 'meta'],
  renamed: { node_state: 'nm_state', node_history: 'nm_history', crawl_nodes: 'nm_crawl' },
};

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    up: `
      CREATE TABLE accounts (
        id INTEGER PRIMARY KEY,
        hash TEXT NOT NULL UNIQUE,
        created_ip TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX accounts_created ON accounts(created_ip, created_at);

      CREATE TABLE nodes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        ip TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (account_id, ip)
      );
      CREATE INDEX nodes_ip ON nodes(ip);

      -- Last poll result per distinct address (shared by every account that added it).
      CREATE TABLE node_state (
        ip TEXT PRIMARY KEY,
        pool TEXT NOT NULL DEFAULT 'main',
        status TEXT,
        fails INTEGER NOT NULL DEFAULT 0,
        ever_ok INTEGER NOT NULL DEFAULT 0,
        uptime INTEGER NOT NULL DEFAULT 0,
        height INTEGER NOT NULL DEFAULT 0,
        version TEXT NOT NULL DEFAULT '',
        relays INTEGER NOT NULL DEFAULT 0,
        currts INTEGER NOT NULL DEFAULT 0,
        proposals INTEGER NOT NULL DEFAULT 0,
        public_key TEXT,
        sync_state TEXT,
        rph INTEGER NOT NULL DEFAULT 0,
        rph10 INTEGER NOT NULL DEFAULT 0,
        rph60 INTEGER NOT NULL DEFAULT 0,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX node_state_key ON node_state(public_key);

      CREATE TABLE node_history (
        ip TEXT NOT NULL,
        taken_at INTEGER NOT NULL,
        currts INTEGER NOT NULL,
        uptime INTEGER NOT NULL,
        height INTEGER NOT NULL,
        relays INTEGER NOT NULL,
        PRIMARY KEY (ip, taken_at)
      ) WITHOUT ROWID;

      CREATE TABLE wallets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        account_id INTEGER NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        address TEXT NOT NULL,
        balance REAL NOT NULL DEFAULT -100,
        updated_at INTEGER,
        UNIQUE (account_id, address)
      );
      CREATE INDEX wallets_address ON wallets(address);

      CREATE TABLE prices (
        currency TEXT PRIMARY KEY,
        value REAL NOT NULL,
        updated_at INTEGER NOT NULL
      );

      CREATE TABLE netstatus (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        data TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );

      -- Network crawl results; the current generation is in meta.crawl_generation.
      CREATE TABLE crawl_nodes (
        generation INTEGER NOT NULL,
        ip TEXT NOT NULL,
        public_key TEXT,
        sync_state TEXT,
        height INTEGER NOT NULL DEFAULT 0,
        uptime INTEGER NOT NULL DEFAULT 0,
        relays INTEGER NOT NULL DEFAULT 0,
        proposals INTEGER NOT NULL DEFAULT 0,
        answered INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (generation, ip)
      ) WITHOUT ROWID;
      CREATE INDEX crawl_nodes_key ON crawl_nodes(generation, public_key);

      CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
  {
    // getmynodes reads an account's nodes in id order: no sort step with this index.
    version: 2,
    up: 'CREATE INDEX nodes_account_order ON nodes(account_id, id);',
  },
];

export const NODES_SHARED_MIGRATIONS: PgMigration[] = [
  {
    version: 1,
    up: `
      CREATE TABLE nm_accounts (
        id BIGSERIAL PRIMARY KEY,
        hash TEXT NOT NULL UNIQUE,
        created_ip TEXT NOT NULL,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX nm_accounts_created ON nm_accounts(created_ip, created_at);

      CREATE TABLE nm_nodes (
        id BIGSERIAL PRIMARY KEY,
        account_id BIGINT NOT NULL REFERENCES nm_accounts(id) ON DELETE CASCADE,
        ip TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        UNIQUE (account_id, ip)
      );
      CREATE INDEX nm_nodes_ip ON nm_nodes(ip);
      CREATE INDEX nm_nodes_account_order ON nm_nodes(account_id, id);

      CREATE TABLE nm_state (
        ip TEXT PRIMARY KEY,
        pool TEXT NOT NULL DEFAULT 'main',
        status TEXT,
        fails INTEGER NOT NULL DEFAULT 0,
        ever_ok INTEGER NOT NULL DEFAULT 0,
        uptime BIGINT NOT NULL DEFAULT 0,
        height BIGINT NOT NULL DEFAULT 0,
        version TEXT NOT NULL DEFAULT '',
        relays BIGINT NOT NULL DEFAULT 0,
        currts BIGINT NOT NULL DEFAULT 0,
        proposals BIGINT NOT NULL DEFAULT 0,
        public_key TEXT,
        sync_state TEXT,
        rph DOUBLE PRECISION NOT NULL DEFAULT 0,
        rph10 DOUBLE PRECISION NOT NULL DEFAULT 0,
        rph60 DOUBLE PRECISION NOT NULL DEFAULT 0,
        updated_at BIGINT NOT NULL
      );
      CREATE INDEX nm_state_key ON nm_state(public_key);

      CREATE TABLE nm_history (
        ip TEXT NOT NULL,
        taken_at BIGINT NOT NULL,
        currts BIGINT NOT NULL,
        uptime BIGINT NOT NULL,
        height BIGINT NOT NULL,
        relays BIGINT NOT NULL,
        PRIMARY KEY (ip, taken_at)
      );

      CREATE TABLE nm_wallets (
        id BIGSERIAL PRIMARY KEY,
        account_id BIGINT NOT NULL REFERENCES nm_accounts(id) ON DELETE CASCADE,
        address TEXT NOT NULL,
        balance DOUBLE PRECISION NOT NULL DEFAULT -100,
        updated_at BIGINT,
        UNIQUE (account_id, address)
      );
      CREATE INDEX nm_wallets_address ON nm_wallets(address);

      CREATE TABLE nm_prices (
        currency TEXT PRIMARY KEY,
        value DOUBLE PRECISION NOT NULL,
        updated_at BIGINT NOT NULL
      );

      CREATE TABLE nm_netstatus (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        data TEXT NOT NULL,
        updated_at BIGINT NOT NULL
      );

      CREATE TABLE nm_crawl (
        generation BIGINT NOT NULL,
        ip TEXT NOT NULL,
        public_key TEXT,
        sync_state TEXT,
        height BIGINT NOT NULL DEFAULT 0,
        uptime BIGINT NOT NULL DEFAULT 0,
        relays BIGINT NOT NULL DEFAULT 0,
        proposals BIGINT NOT NULL DEFAULT 0,
        answered INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (generation, ip)
      );
      CREATE INDEX nm_crawl_key ON nm_crawl(generation, public_key);

      CREATE TABLE nm_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
];

