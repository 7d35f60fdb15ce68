/**
 * The shared database of several daemons (ctl.yaml `storage.postgres`), through `pg`: a pool of
 * connections, named prepared statements, numbered migrations per component run once under an
 * advisory lock, and LISTEN/NOTIFY on a connection of its own.
 *
 * Losing the server must not hang requests: a query that fails for want of a connection marks the
 * database down, and until a background probe reaches it again every query fails at once with
 * StorageUnavailable (the APIs answer 503). When it is back, the listener connection listens again
 * and every subscriber's `resync` runs, since notifications sent meanwhile are lost.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import pg from 'pg';
import type { Egress } from '../egress/index.js';
import { Leases } from './leases.js';
import { redactUrl } from './storage-config.js';
import { StorageUnavailable } from './unavailable.js';

// BIGINT (int8) columns and COUNT(*) as numbers, not strings: ctl keeps epoch milliseconds and
// counts there, all far below 2^53.
pg.types.setTypeParser(20, (v: string) => Number(v));

export { StorageUnavailable };


export interface PgMigration {
  version: number;
  up: string;
}

/** Something that runs SQL: the pool, or one connection inside `transaction`. */
export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
  /** An INSERT, UPDATE or DELETE: how many rows it changed. */
  command(sql: string, params?: unknown[]): Promise<number>;
}

interface Subscription {
  channel: string;
  onPayload(payload: string): void;
  /** Notifications may have been missed (the listener reconnected): reload everything. */
  resync(): void;
}

/** Errors with a SQLSTATE outside these classes are the query's own fault, not the connection's. */
const CONNECTION_CLASSES = ['08', '57', '53'];

function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return CONNECTION_CLASSES.includes(code.slice(0, 2));
  return true;
}

const statementName = (sql: string) => `ctl_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;

/** A connection not made within this fails (the pool waits as long for a free connection). */
export const CONNECT_TIMEOUT_MS = 2000;
/** A query not answered within this fails; migrations, which may wait for another daemon's, get MIGRATION_TIMEOUT_MS. */
export const QUERY_TIMEOUT_MS = 3000;
const MIGRATION_TIMEOUT_MS = 600_000;

export interface SharedPostgresOptions {
  /** Pool size (default 10). */
  max?: number;
  /** How long a query may take before it fails (default QUERY_TIMEOUT_MS). */
  queryTimeoutMs?: number;
}

export class SharedPostgres implements Queryable {
  private readonly pool: pg.Pool;
  private listener: pg.Client | null = null;
  /** A listener connection is being made (openListener under way). */
  private opening = false;
  private listenerRetry?: NodeJS.Timeout;
  private readonly subs: Subscription[] = [];
  private down: unknown = null;
  private probe?: NodeJS.Timeout;
  private closed = false;
  private leaseSet?: Leases;
  readonly where: string;

  private constructor(
    readonly url: string,
    private readonly log: Logger,
    opts: SharedPostgresOptions,
  ) {
    this.where = `PostgreSQL (${redactUrl(url)})`;
    this.pool = new pg.Pool({
      connectionString: url,
      max: opts.max ?? 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      // A frozen server (SIGSTOP, a hung host) keeps its connections open and answers nothing: a
      // query fails after this long (and the database is marked down: later ones fail at once).
      query_timeout: opts.queryTimeoutMs ?? QUERY_TIMEOUT_MS,
      keepAlive: true,
      application_name: 'ctl',
    });
    // An idle connection the server dropped: the pool discards it; without a listener Node would crash.
    this.pool.on('error', (e) => this.markDown(e));
  }

  /**
   * Connect and check the server answers; a clear error when it does not (the daemon does not
   * start). The server's address goes through the egress policy once, here (address map, and the
   * loopback-only guard under test); a host given as a socket directory is used as it is.
   */
  static async connect(url: string, log: Logger, egress?: Egress, opts: SharedPostgresOptions = {}): Promise<SharedPostgres> {
    let target = url;
    if (egress) {
      const u = new URL(url);
      if (u.hostname) {
        let t;
        try {
          t = await egress.resolve(u.hostname, u.port ? Number(u.port) : 5432);
        } catch (e) {
          throw new Error(`storage.postgres: ${redactUrl(url)}: ${(e as Error).message}`);
        }
        u.hostname = t.host.includes(':') ? `[${t.host}]` : t.host;
        u.port = String(t.port);
        target = u.toString();
      }
    }
    const db = new SharedPostgres(target, log, opts);
    try {
      await db.pool.query('SELECT 1');
    } catch (e) {
      await db.pool.end().catch(() => {});
      throw new Error(`storage.postgres: cannot reach ${db.where}: ${(e as Error).message}`);
    }
    await db.openListener();
    return db;
  }

  get available(): boolean {
    return this.down === null && !this.closed;
  }

  async query<R = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<R[]> {
    return (await this.run(this.pool, sql, params)).rows as R[];
  }

  async command(sql: string, params: unknown[] = []): Promise<number> {
    return (await this.run(this.pool, sql, params)).rowCount ?? 0;
  }

  /** `fn` inside BEGIN … COMMIT on one connection (ROLLBACK when it throws). */
  async transaction<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    const client = await this.connectClient();
    let broken = false;
    // The pool stops listening to a connection while it is lent out: a server that goes away during
    // the transaction makes the client emit 'error', which would crash the daemon unheard.
    const lost = (e: Error) => {
      broken = true;
      this.markDown(e);
    };
    client.on('error', lost);
    const on = async (sql: string, params: unknown[]) => {
      try {
        return await this.run(client, sql, params);
      } catch (e) {
        if (e instanceof StorageUnavailable) broken = true;
        throw e;
      }
    };
    const q: Queryable = {
      query: async <R>(sql: string, params: unknown[] = []) => (await on(sql, params)).rows as R[],
      command: async (sql: string, params: unknown[] = []) => (await on(sql, params)).rowCount ?? 0,
    };
    try {
      await q.query('BEGIN');
      const out = await fn(q);
      await q.query('COMMIT');
      return out;
    } catch (e) {
      if (!broken) await client.query('ROLLBACK').catch(() => (broken = true));
      throw e;
    } finally {
      client.removeListener('error', lost);
      client.release(broken);
    }
  }

  private async connectClient(): Promise<pg.PoolClient> {
    this.failFast();
    try {
      return await this.pool.connect();
    } catch (e) {
      this.markDown(e);
      throw new StorageUnavailable(this.where, e);
    }
  }

  private failFast(): void {
    if (this.closed) throw new StorageUnavailable(this.where, new Error('closed'));
    if (this.down !== null) throw new StorageUnavailable(this.where, this.down);
  }

  private async run(on: pg.Pool | pg.PoolClient, sql: string, params: unknown[]): Promise<pg.QueryResult> {
    this.failFast();
    try {
      return await on.query({ name: statementName(sql), text: sql, values: params });
    } catch (e) {
      if (!isConnectionError(e)) throw e;
      this.markDown(e);
      throw new StorageUnavailable(this.where, e);
    }
  }

  /** Mark the database down and probe it until it answers again. */
  private markDown(e: unknown): void {
    if (this.closed || this.down !== null) return;
    this.down = e;
    this.log.error({ err: (e as Error).message }, `${this.where} is unreachable: requests that need it answer 503 until it is back`);
    const check = async () => {
      if (this.closed) return;
      try {
        await this.pool.query('SELECT 1');
        this.down = null;
        this.log.info(`${this.where} is reachable again`);
        // Every subscriber reloads now that its reads work: a listener that stayed connected, or
        // came back before the pool did, left changes unread (a notification's follow-up read
        // failed, or the reload after reconnecting did while the database was marked down).
        if (this.listener) this.resyncAll();
        else void this.openListener();
      } catch {
        this.probe = setTimeout(() => void check(), 500);
        this.probe.unref();
      }
    };
    this.probe = setTimeout(() => void check(), 250);
    this.probe.unref();
  }

  /**
   * Apply `component`'s migrations above the version the database records, each in its own
   * transaction, under an advisory lock: several daemons starting together migrate once.
   */
  async migrate(component: string, migrations: readonly PgMigration[]): Promise<void> {
    migrations.forEach((m, i) => {
      if (m.version !== i + 1) throw new Error(`${component}: migrations must be numbered 1..n in order; found ${m.version} at ${i + 1}`);
    });
    const pooled = await this.connectClient();
    let broken = false;
    const lost = (e: Error) => {
      broken = true;
      this.markDown(e);
    };
    pooled.on('error', lost);
    // Waiting for another daemon's migrations (the advisory lock) may take longer than a query may.
    const client = { query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => pooled.query<R>({ text, ...(values ? { values } : {}), query_timeout: MIGRATION_TIMEOUT_MS } as pg.QueryConfig) };
    try {
      await client.query('SELECT pg_advisory_lock(hashtext($1))', ['ctl migrations']);
      try {
        await client.query('CREATE TABLE IF NOT EXISTS ctl_migrations (component TEXT PRIMARY KEY, version INTEGER NOT NULL)');
        const r = await client.query<{ version: number }>('SELECT version FROM ctl_migrations WHERE component = $1', [component]);
        const have = r.rows[0]?.version ?? 0;
        if (have > migrations.length) throw new Error(`${component}: shared database schema version ${have} is newer than this program knows (${migrations.length})`);
        for (const m of migrations.slice(have)) {
          await client.query('BEGIN');
          try {
            await client.query(m.up);
            await client.query(
              'INSERT INTO ctl_migrations (component, version) VALUES ($1, $2) ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version',
              [component, m.version],
            );
            await client.query('COMMIT');
          } catch (e) {
            await client.query('ROLLBACK');
            throw new Error(`${component}: shared database migration ${m.version} failed: ${(e as Error).message}`);
          }
        }
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', ['ctl migrations']);
      }
    } finally {
      pooled.removeListener('error', lost);
      pooled.release(broken);
    }
  }

  /** Leases for scheduled work (leases.ts), on a connection of their own made when first asked. */
  get leases(): Leases {
    return (this.leaseSet ??= new Leases(this.url, this.log));
  }

  /** The leases this daemon holds now (none before anything asked for one). */
  heldLeases(): string[] {
    return this.leaseSet?.holding() ?? [];
  }

  /** Tell every daemon (this one included) something changed on `channel`. */
  async notify(channel: string, payload: string): Promise<void> {
    await this.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  /**
   * Receive `channel`'s notifications. `resync` runs after the listener connection was lost and
   * came back (what was sent meanwhile is gone). Returns an unsubscribe function.
   */
  async subscribe(channel: string, onPayload: (payload: string) => void, resync: () => void): Promise<() => void> {
    const sub: Subscription = { channel, onPayload, resync };
    this.subs.push(sub);
    if (this.listener) await this.listener.query(`LISTEN "${channel.replace(/"/g, '')}"`);
    return () => {
      const i = this.subs.indexOf(sub);
      if (i >= 0) this.subs.splice(i, 1);
    };
  }

  private async openListener(): Promise<void> {
    if (this.closed || this.listener || this.opening) return;
    this.opening = true;
    try {
      await this.connectListener();
    } finally {
      this.opening = false;
    }
  }

  private async connectListener(): Promise<void> {
    clearTimeout(this.listenerRetry);
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 2000, application_name: 'ctl-listen' });
    const lost = (e?: Error) => {
      if (this.listener !== client) return;
      this.listener = null;
      client.end().catch(() => {});
      if (this.closed) return;
      this.log.warn({ err: e?.message }, `${this.where}: notification connection lost; reconnecting`);
      if (e) this.markDown(e);
      this.listenerRetry = setTimeout(() => void this.openListener(), 500);
      this.listenerRetry.unref();
    };
    client.on('error', lost);
    client.on('end', () => lost(new Error('connection ended')));
    client.on('notification', (n) => {
      for (const s of this.subs) {
        if (s.channel !== n.channel) continue;
        try {
          s.onPayload(n.payload ?? '');
        } catch (e) {
          this.log.error({ err: e, channel: n.channel }, 'handling a shared-state notification failed');
        }
      }
    });
    try {
      await client.connect();
      this.listener = client;
      for (const ch of new Set(this.subs.map((s) => s.channel))) await client.query(`LISTEN "${ch.replace(/"/g, '')}"`);
    } catch (e) {
      this.listener = null;
      client.end().catch(() => {});
      this.listenerRetry = setTimeout(() => void this.openListener(), 500);
      this.listenerRetry.unref();
      return;
    }
    // Whatever changed while nobody listened: every subscriber reloads. While the database is marked
    // down its reads would fail at once: the probe that finds it back has them reload instead.
    if (this.down === null) this.resyncAll();
  }

  private resyncAll(): void {
    for (const s of this.subs) {
      try {
        s.resync();
      } catch (e) {
        this.log.error({ err: e, channel: s.channel }, 'reloading shared state failed');
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.leaseSet?.close();
    clearTimeout(this.probe);
    clearTimeout(this.listenerRetry);
    const l = this.listener;
    this.listener = null;
    await l?.end().catch(() => {});
    await this.pool.end().catch(() => {});
  }
}
