import Database from 'better-sqlite3';
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

export type Db = Database.Database;
export type Statement = Database.Statement;

/** A numbered migration. `version` starts at 1 and increases by one; `PRAGMA user_version` records the last applied. */
export interface Migration {
  version: number;
  /** SQL text, or a function for migrations that need code. */
  up: string | ((db: Db) => void);
}

/**
 * A component's SQLite database: WAL, busy timeout, foreign keys, numbered migrations, and a
 * statement cache. Handlers reach the database only through `prepare`/`transaction`/`db`, never
 * keep a Database or Statement across awaits, so `reopen()` (Core API `restart=true`) is safe.
 */
/** How a Store opens its file. */
export interface StoreOptions {
  /**
   * Keep the file locked for as long as the connection is open (`locking_mode = EXCLUSIVE`, set
   * before WAL so no shared-memory index is used): no lock and unlock system calls per
   * transaction, and no other connection or process can read or write the file meanwhile.
   */
  exclusive?: boolean;
  /** How long a statement waits for another connection's lock (default 5000 ms). */
  busyTimeoutMs?: number;
}

/** Every Store open in this process (the state archive backs each up through its own connection). */
const OPEN = new Set<Store>();

/** A JSON text column read back: `fallback` for NULL or text that does not parse. */
export function parseJsonColumn<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

export function openStores(): Store[] {
  return [...OPEN];
}

export class Store {
  private current: Db | null = null;
  private readonly statements = new Map<string, Statement>();

  constructor(
    readonly path: string,
    private readonly migrations: readonly Migration[],
    private readonly options: StoreOptions = {},
  ) {
    checkMigrations(migrations);
    this.open();
  }

  get db(): Db {
    if (!this.current) throw new Error(`database ${this.path} is closed`);
    return this.current;
  }

  /** A cached prepared statement. */
  prepare(sql: string): Statement {
    let st = this.statements.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    return st;
  }

  /**
   * One transaction wrapper per connection, running the function it is given: better-sqlite3's
   * `db.transaction(fn)` builds four wrapper functions and defines five properties on each at
   * every call, which a request that commits one row (a silence) paid each time.
   */
  private runner?: { db: Db; run: ((fn: () => unknown) => unknown) & { immediate: (fn: () => unknown) => unknown } };

  /** Run `fn` in one IMMEDIATE transaction (batch many small writes in one); nested, a savepoint. */
  transaction<T>(fn: () => T): T {
    const db = this.db;
    let r = this.runner;
    if (!r || r.db !== db) this.runner = r = { db, run: db.transaction((f: () => unknown) => f()) };
    return r.run.immediate(fn) as T;
  }

  /** Schema version recorded in the file. */
  version(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  close(): void {
    this.statements.clear();
    if (this.current) {
      try {
        this.current.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        /* a busy checkpoint is harmless: the WAL is replayed on open */
      }
      this.current.close();
      this.current = null;
    }
    OPEN.delete(this);
  }

  reopen(): void {
    this.close();
    this.open();
  }

  private open(): void {
    if (this.path !== ':memory:') {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      // A new database file is owner-only; SQLite gives its -wal and -shm files the same mode.
      if (!existsSync(this.path)) closeSync(openSync(this.path, 'a', 0o600));
    }
    const db = new Database(this.path);
    try {
      db.pragma(`busy_timeout = ${this.options.busyTimeoutMs ?? 5000}`);
      if (this.options.exclusive) db.pragma('locking_mode = EXCLUSIVE');
      db.pragma('journal_mode = WAL');
      // NORMAL in WAL mode still survives a process kill (-9): only an OS crash can lose the last commits.
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      migrate(db, this.migrations);
      // An exclusive connection takes its lock with its first write; take it now, not on first use.
      if (this.options.exclusive) db.exec('BEGIN IMMEDIATE; COMMIT');
    } catch (e) {
      db.close();
      throw e;
    }
    this.current = db;
    OPEN.add(this);
  }
}

function checkMigrations(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migrations must be numbered 1..n in order; found ${m.version} at ${i + 1}`);
  });
}

/** Apply every migration above the file's user_version, each in its own transaction. */
export function migrate(db: Db, migrations: readonly Migration[]): void {
  const have = db.pragma('user_version', { simple: true }) as number;
  if (have > migrations.length) {
    throw new Error(`database schema version ${have} is newer than this program knows (${migrations.length})`);
  }
  for (const m of migrations.slice(have)) {
    db.transaction(() => {
      if (typeof m.up === 'string') db.exec(m.up);
      else m.up(db);
      db.pragma(`user_version = ${m.version}`);
    }).immediate();
  }
}

/** Open a Store outside the daemon (tests, tools). */
export function openStore(path: string, migrations: readonly Migration[]): Store {
  return new Store(path, migrations);
}
