/**
 * ctl's internal alerts on several daemons sharing PostgreSQL: one view for the cluster. Each
 * daemon's components judge from what they see (a budget, a breaker, a node), and those views
 * differ for a moment or for good; posted to each daemon's own alert manager, one daemon held an
 * alert firing while another held it resolved, and the shared notification log sent firing and
 * resolved in turn at every flush. Here each daemon writes what its components report to one table
 * (a row per alert and daemon), and every daemon posts the cluster's state of each alert to its own
 * alert manager: firing while any daemon's row fires (from the earliest start, to the latest end),
 * resolved once none does. Every alert manager of the cluster then holds the same alerts, and each
 * change is notified once. A daemon that dies leaves rows that end by themselves (ComponentAlerts
 * posts firing alerts a few refreshes ahead), as its alerts in an alert manager would.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../http/clock.js';
import type { PgMigration, SharedPostgres } from '../store/postgres.js';
import type { AlertSink } from './internal-alerts.js';

type Postable = Parameters<AlertSink['post']>[0][number];

export const CLUSTER_ALERTS_MIGRATIONS: PgMigration[] = [
  {
    version: 1,
    up: `
      CREATE TABLE ctl_internal_alerts (
        key TEXT NOT NULL,
        owner TEXT NOT NULL,
        data TEXT NOT NULL,
        starts_at BIGINT NOT NULL,
        ends_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (key, owner)
      );
      CREATE INDEX ctl_internal_alerts_ends ON ctl_internal_alerts (ends_at);
    `,
  },
];

const CHANNEL = 'ctl_internal_alerts';
/** Rows written but not stored yet (the database was away) are tried again this often. */
const RETRY_MS = 1000;
/** Everything is read and posted again this often (an alert manager revived, a notification lost). */
const RESYNC_MS = 60_000;
/** Rows that ended this long ago are deleted. */
const KEEP_ENDED_MS = 3_600_000;
/** Notification payloads stay well under PostgreSQL's 8000 bytes; past this, daemons read everything. */
const MAX_PAYLOAD = 7000;

/** A label set's key: SHA-256 of its pairs sorted (alerts of one label set are one alert; text columns refuse NUL). */
const keyOf = (labels: Record<string, string>) =>
  createHash('sha256')
    .update(
      Object.keys(labels)
        .sort()
        .map((k) => `${k}\u0000${labels[k]}`)
        .join('\u0001'),
    )
    .digest('hex');

interface Row {
  key: string;
  data: string;
  starts_at: string;
  ends_at: string;
  updated_at: string;
}

export class ClusterAlerts {
  /** This daemon's reports not stored yet: the latest per alert. */
  private pending = new Map<string, Postable>();
  private writing = false;
  /** The last write failed (logged once until one succeeds). */
  private failing = false;
  private retry?: NodeJS.Timeout;
  private resync?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  private closed = false;

  private constructor(
    private readonly db: SharedPostgres,
    private readonly owner: string,
    /** This daemon's alert manager, when it runs one. */
    private readonly alertmanager: () => AlertSink | undefined,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  static async open(db: SharedPostgres, owner: string, alertmanager: () => AlertSink | undefined, clock: Clock, log: Logger): Promise<ClusterAlerts> {
    await db.migrate('internal-alerts', CLUSTER_ALERTS_MIGRATIONS);
    const c = new ClusterAlerts(db, owner, alertmanager, clock, log);
    c.unsubscribe = await db.subscribe(
      CHANNEL,
      (payload) => void c.changed(JSON.parse(payload) as string[] | null),
      () => void c.changed(null),
    );
    c.resync = setInterval(() => void c.changed(null, 2 * RESYNC_MS), RESYNC_MS);
    c.resync.unref();
    return c;
  }

  /** What components post to (in place of the alert manager): their reports go to the table. */
  readonly sink: AlertSink = {
    post: (alerts) => {
      for (const a of alerts) this.pending.set(keyOf(a.labels), a);
      void this.write();
      return [];
    },
  };

  /** Post the cluster's state of every alert to this daemon's alert manager (it just started). */
  async sync(): Promise<void> {
    await this.changed(null);
  }

  private async write(): Promise<void> {
    if (this.writing || this.closed || this.pending.size === 0) return;
    this.writing = true;
    const batch = this.pending;
    this.pending = new Map();
    const now = this.clock.now();
    try {
      const keys = [...batch.keys()];
      let payload = JSON.stringify(keys);
      if (payload.length > MAX_PAYLOAD) payload = 'null';
      await this.db.transaction(async (q) => {
        for (const [key, a] of batch) {
          const startsAt = a.startsAt ?? a.endsAt ?? now;
          await q.query(
            `INSERT INTO ctl_internal_alerts (key, owner, data, starts_at, ends_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (key, owner) DO UPDATE SET data = EXCLUDED.data, ends_at = EXCLUDED.ends_at, updated_at = EXCLUDED.updated_at,
               starts_at = CASE WHEN ctl_internal_alerts.ends_at > $6 THEN LEAST(ctl_internal_alerts.starts_at, EXCLUDED.starts_at) ELSE EXCLUDED.starts_at END`,
            [key, this.owner, JSON.stringify(a), Math.round(startsAt), Math.round(a.endsAt ?? now), now],
          );
        }
        await q.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]);
      });
      if (this.failing) this.log.info('internal alerts: this daemon\'s alerts are stored in the shared database again');
      this.failing = false;
    } catch (e) {
      // Kept (unless a newer report replaced it meanwhile) and written when the database answers.
      for (const [key, a] of batch) if (!this.pending.has(key)) this.pending.set(key, a);
      if (!this.failing) this.log.warn({ err: (e as Error).message }, 'internal alerts: storing this daemon\'s alerts in the shared database failed; retrying every second');
      this.failing = true;
      if (!this.retry) {
        this.retry = setTimeout(() => {
          this.retry = undefined;
          void this.write();
        }, RETRY_MS);
        this.retry.unref();
      }
    } finally {
      this.writing = false;
    }
    if (this.pending.size > 0 && !this.retry) void this.write();
  }

  /**
   * Alerts some daemon reported on (`null`: any): post their cluster state here. `endedWithin`
   * leaves out alerts resolved longer ago than that (a periodic resync need not post every
   * resolution of the last hour again).
   */
  private changed(keys: string[] | null, endedWithin = Infinity): Promise<void> {
    // One at a time, in order: a slower read must not post an older state after a newer one.
    const next = this.reading.then(() => this.readAndPost(keys, endedWithin));
    this.reading = next.catch(() => undefined);
    return next;
  }

  private reading: Promise<unknown> = Promise.resolve();

  private async readAndPost(keys: string[] | null, endedWithin: number): Promise<void> {
    if (this.closed) return;
    let rows: Row[];
    try {
      rows =
        keys === null
          ? await this.db.query<Row>('SELECT key, data, starts_at, ends_at, updated_at FROM ctl_internal_alerts')
          : await this.db.query<Row>('SELECT key, data, starts_at, ends_at, updated_at FROM ctl_internal_alerts WHERE key = ANY($1::text[])', [keys]);
      if (keys === null) await this.db.command('DELETE FROM ctl_internal_alerts WHERE ends_at < $1', [this.clock.now() - KEEP_ENDED_MS]);
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, 'internal alerts: reading the cluster\'s alerts failed; read again at the next change or resync');
      return;
    }
    const am = this.alertmanager();
    if (!am) return;
    const now = this.clock.now();
    const merged = mergeRows(rows, now).filter((a) => a.endsAt! > now - endedWithin);
    if (merged.length === 0) return;
    try {
      const errors = am.post(merged);
      if (errors.length > 0) this.log.warn({ errors }, `internal alerts refused: ${errors.join('; ')}`);
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, `internal alerts not delivered: ${(e as Error).message}`);
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    clearInterval(this.resync);
    this.unsubscribe?.();
  }
}

/**
 * One alert per key from every daemon's row: firing while any row's end is ahead (from the earliest
 * start of those, to the latest end; text of the latest report), else resolved at the latest end.
 */
export function mergeRows(rows: readonly Row[], now: number): Postable[] {
  const byKey = new Map<string, Row[]>();
  for (const r of rows) {
    const list = byKey.get(r.key);
    if (list) list.push(r);
    else byKey.set(r.key, [r]);
  }
  const out: Postable[] = [];
  for (const list of byKey.values()) {
    const live = list.filter((r) => Number(r.ends_at) > now);
    const from = live.length > 0 ? live : list;
    let latest = from[0]!;
    let startsAt = Infinity;
    let endsAt = -Infinity;
    for (const r of from) {
      if (Number(r.updated_at) > Number(latest.updated_at)) latest = r;
      startsAt = Math.min(startsAt, Number(r.starts_at));
      endsAt = Math.max(endsAt, Number(r.ends_at));
    }
    const a = JSON.parse(latest.data) as Postable;
    out.push({ labels: a.labels, annotations: a.annotations, generatorURL: a.generatorURL, startsAt: Math.min(startsAt, endsAt), endsAt });
  }
  return out;
}
