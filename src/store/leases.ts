/**
 * Leases for scheduled work several daemons share: a job runs on the daemon that holds its lease,
 * and on no other. A lease is a PostgreSQL session advisory lock taken on a connection kept for
 * leases alone, so it is held exactly as long as that connection lives: a daemon that stops, is
 * killed or loses the server loses its connection, the server drops its locks, and the next daemon
 * that asks gets them. Nothing expires on a clock, so a slow job is never run twice.
 *
 * `hold(name)` answers whether this daemon holds the lease now, taking it when it is free. A held
 * lease is confirmed with a round trip on its connection before each run, so a daemon cut off from
 * the server stops running jobs as soon as it notices, at the latest when the query times out.
 */
import type { Logger } from 'pino';
import pg from 'pg';

const QUERY_TIMEOUT_MS = 2000;

export class Leases {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client | null> | null = null;
  private readonly held = new Set<string>();
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly log: Logger,
  ) {}

  /** True when this daemon holds `name` (taken now if it was free); false when another does or the server is away. */
  async hold(name: string): Promise<boolean> {
    if (this.closed) return false;
    const client = await this.connection();
    if (!client) return false;
    try {
      if (this.held.has(name)) {
        await client.query('SELECT 1');
        return true;
      }
      const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [`ctl lease ${name}`]);
      if (r.rows[0]?.ok !== true) return false;
      this.held.add(name);
      this.log.debug({ lease: name }, `this daemon now runs ${name}`);
      return true;
    } catch (e) {
      this.drop(client, e as Error);
      return false;
    }
  }

  /** Give one lease back (a turn that ends, such as one pipeline run); another daemon may take it at once. */
  async release(name: string): Promise<void> {
    if (!this.held.delete(name)) return;
    const c = this.client;
    if (!c) return;
    try {
      await c.query('SELECT pg_advisory_unlock(hashtext($1))', [`ctl lease ${name}`]);
    } catch (e) {
      this.drop(c, e as Error);
    }
  }

  /** The leases this daemon holds now (as far as it knows). */
  holding(): string[] {
    return [...this.held].sort();
  }

  /** Give every lease back (at shutdown: another daemon takes over at once). */
  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = null;
    this.held.clear();
    await c?.end().catch(() => {});
  }

  private async connection(): Promise<pg.Client | null> {
    if (this.client) return this.client;
    this.connecting ??= (async () => {
      const c = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: QUERY_TIMEOUT_MS, query_timeout: QUERY_TIMEOUT_MS, application_name: 'ctl-leases' });
      c.on('error', (e) => this.drop(c, e));
      c.on('end', () => this.drop(c, new Error('connection ended')));
      try {
        await c.connect();
      } catch {
        c.end().catch(() => {});
        return null;
      }
      if (this.closed) {
        c.end().catch(() => {});
        return null;
      }
      this.client = c;
      return c;
    })().finally(() => (this.connecting = null));
    return this.connecting;
  }

  /** The lease connection is gone, and with it every lease (the server released them). */
  private drop(c: pg.Client, e: Error): void {
    if (this.client !== c) return;
    this.client = null;
    if (this.held.size > 0 && !this.closed) this.log.warn({ err: e.message, leases: [...this.held] }, 'lost the lease connection: its scheduled work is left to other daemons until it is taken again');
    this.held.clear();
    c.end().catch(() => {});
  }
}
