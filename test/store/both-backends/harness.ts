/**
 * One set of store cases, run on both backends: the daemon's own SQLite file and a database of a
 * private PostgreSQL server (one server per test file, a fresh database per case). A write path
 * that works on one backend and not the other fails here.
 *
 * A store adds its cases as one file in this folder:
 *
 *   bothBackends('my store', {
 *     sqlite: (b) => new MyStore(new SqliteSql(b.sqlite(MIGRATIONS))),
 *     postgres: async (b) => { const db = await b.postgres(); await db.migrate('mine', PG_MIGRATIONS); return new MyStore(PgSql.over(db, TABLES)); },
 *   }, (open) => {
 *     it('…', async () => { const s = await open(); … });
 *   });
 *
 * `open()` gives a store on an empty database (as many as a case wants: each is another daemon on
 * SQLite's side, another database on PostgreSQL's); `b.same()` opens a second daemon on the database
 * the last `open()` made (PostgreSQL: several daemons share it). Everything opened is closed after
 * each case.
 */
import { afterAll, afterEach, describe, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Store, type Migration } from '../../../src/store/index.js';
import { SharedPostgres } from '../../../src/store/postgres.js';
import { postgresForThisFile } from '../../helpers/file-postgres.js';
import { PG_BIN, PG_SKIP_REASON } from '../../helpers/postgres-server.js';

export type Dialect = 'sqlite' | 'postgres';

export interface SqliteBackend {
  readonly dialect: 'sqlite';
  /** The daemon's file (a new one per `open()`, the last one's again under `same()`), migrated. */
  sqlite(migrations: Migration[]): Store;
}

export interface PostgresBackend {
  readonly dialect: 'postgres';
  /** A connection to the case's database (a new one per `open()`, the last one's under `same()`). */
  postgres(): Promise<SharedPostgres>;
}

export interface Openers<S> {
  sqlite(b: SqliteBackend): S | Promise<S>;
  postgres(b: PostgresBackend): S | Promise<S>;
}

export interface Opened<S> {
  /** A store on a new, empty database. */
  (): Promise<S>;
  /** Another daemon's store on the database the last `open()` made. */
  same(): Promise<S>;
  readonly dialect: Dialect;
}

const log = pino({ level: 'silent' });
let databases = 0;

/** `cases` once per backend, each in its own `describe` (`name [sqlite]`, `name [postgres]`). */
export function bothBackends<S>(name: string, openers: Openers<S>, cases: (open: Opened<S>) => void): void {
  const server = PG_BIN ? postgresForThisFile() : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'ctl-both-backends-'));
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe(`${name} [sqlite]`, () => {
    let file = '';
    const opener = (fresh: boolean) => async () => {
      if (fresh || !file) file = join(dir, `db-${++databases}.sqlite`);
      const path = file;
      return openers.sqlite({
        dialect: 'sqlite',
        sqlite: (migrations) => {
          const store = new Store(path, migrations);
          closers.push(() => store.close());
          return store;
        },
      });
    };
    cases(Object.assign(opener(true), { same: opener(false), dialect: 'sqlite' as const }));
  });

  if (!server) {
    describe.skip(`${name} [postgres]: ${PG_SKIP_REASON}`, () => it('needs PostgreSQL', () => undefined));
    return;
  }
  describe(`${name} [postgres]`, () => {
    let url = '';
    const opener = (fresh: boolean) => async () => {
      if (fresh || !url) url = await server().createDatabase(`ctl_both_${process.pid}_${++databases}`);
      const at = url;
      return openers.postgres({
        dialect: 'postgres',
        postgres: async () => {
          const db = await SharedPostgres.connect(at, log);
          closers.push(() => db.close());
          return db;
        },
      });
    };
    cases(Object.assign(opener(true), { same: opener(false), dialect: 'postgres' as const }));
  });
}
