/**
 * Which daemons share this daemon's PostgreSQL right now: each daemon keeps a row in `ctl_daemons`
 * (its id and the bound address of each of its servers), renewed every few seconds and deleted when
 * it stops. A daemon is live while its row was renewed within three intervals, on the database's
 * clock (the daemons' clocks may differ). Components read it through the `membership` handle, e.g.
 * the alert manager's cluster status (GET /api/v2/status) lists the live daemons that run one.
 */
import type { Logger } from 'pino';
import type { PgMigration, SharedPostgres } from '../store/postgres.js';

export const PRESENCE_MIGRATIONS: PgMigration[] = [
  {
    version: 1,
    up: `
      CREATE TABLE ctl_daemons (
        id TEXT PRIMARY KEY,
        servers TEXT NOT NULL,
        started_at BIGINT NOT NULL,
        seen_at TIMESTAMPTZ NOT NULL
      );
    `,
  },
];

/** A row is renewed this often; a daemon not heard from for three intervals is not listed. */
export const PRESENCE_INTERVAL_MS = 5000;
/** Rows of daemons gone this long are deleted (by whichever daemon renews its own). */
const FORGET_AFTER = '1 hour';
/** A read older than this is done again when asked. */
const FRESH_MS = 1000;

export interface Peer {
  /** The daemon's id among those sharing the storage (`name/pid/random`). */
  name: string;
  /** The bound address of its listener for the server asked about. */
  address: string;
}

export interface MembershipStatus {
  /** This daemon's id. */
  name: string;
  /** `ready` once this daemon's row is in the database and the list was read; `settling` before, or while the database does not answer. */
  status: 'ready' | 'settling';
  /** Live daemons that run `server`, this one included, sorted by name. */
  peers: Peer[];
}

/** The handle the daemon passes to components as `membership` (only with storage.postgres). */
export interface Membership {
  status(server: string): Promise<MembershipStatus>;
}

interface Row {
  id: string;
  servers: string;
}

export class DaemonPresence implements Membership {
  private timer?: NodeJS.Timeout;
  private registered = false;
  private lastOk = false;
  private rows: { id: string; servers: Record<string, string> }[] = [];
  private readAt = 0;
  private reading?: Promise<void>;
  private closed = false;

  private constructor(
    private readonly db: SharedPostgres,
    readonly id: string,
    private readonly servers: () => Record<string, string>,
    private readonly log: Logger,
  ) {}

  static async open(db: SharedPostgres, id: string, servers: () => Record<string, string>, log: Logger): Promise<DaemonPresence> {
    await db.migrate('daemons', PRESENCE_MIGRATIONS);
    return new DaemonPresence(db, id, servers, log);
  }

  /** Write this daemon's row now (its listeners are bound) and renew it every interval. */
  start(): void {
    if (this.closed || this.timer) return;
    void this.beat();
    this.timer = setInterval(() => void this.beat(), PRESENCE_INTERVAL_MS);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    try {
      await this.db.command(
        `INSERT INTO ctl_daemons (id, servers, started_at, seen_at) VALUES ($1, $2, $3, now())
         ON CONFLICT (id) DO UPDATE SET servers = EXCLUDED.servers, seen_at = now()`,
        [this.id, JSON.stringify(this.servers()), Date.now()],
      );
      if (!this.registered) this.log.debug({ id: this.id }, 'daemon presence: this daemon is listed in the shared database');
      this.registered = true;
      await this.db.command(`DELETE FROM ctl_daemons WHERE seen_at < now() - interval '${FORGET_AFTER}'`);
    } catch {
      /* the database is away: the row ages, and status says settling until a read succeeds */
    }
  }

  private read(): Promise<void> {
    this.reading ??= (async () => {
      try {
        const rows = await this.db.query<Row>(
          `SELECT id, servers FROM ctl_daemons WHERE seen_at >= now() - make_interval(secs => $1) ORDER BY id`,
          [(3 * PRESENCE_INTERVAL_MS) / 1000],
        );
        this.rows = rows.map((r) => {
          let servers: Record<string, string> = {};
          try {
            servers = JSON.parse(r.servers) as Record<string, string>;
          } catch {
            /* a row another program wrote: no servers */
          }
          return { id: r.id, servers };
        });
        this.lastOk = true;
      } catch {
        this.lastOk = false;
      } finally {
        this.readAt = Date.now();
        this.reading = undefined;
      }
    })();
    return this.reading;
  }

  async status(server: string): Promise<MembershipStatus> {
    if (Date.now() - this.readAt > FRESH_MS && this.db.available) await this.read();
    else if (!this.db.available) this.lastOk = false;
    const peers: Peer[] = [];
    for (const r of this.rows) {
      const address = r.servers[server];
      if (typeof address === 'string' && address !== '') peers.push({ name: r.id, address });
    }
    if (!peers.some((p) => p.name === this.id)) {
      const own = this.servers()[server];
      if (own) peers.push({ name: this.id, address: own });
    }
    peers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { name: this.id, status: this.registered && this.lastOk ? 'ready' : 'settling', peers };
  }

  /** Stop renewing and delete this daemon's row (the others stop listing it at once). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    if (this.registered) await this.db.command('DELETE FROM ctl_daemons WHERE id = $1', [this.id]).catch(() => undefined);
  }
}
