/**
 * The notification log in the shared database, with claims: before a daemon notifies for a key
 * (group, receiver, integration) it takes the key's row for the length of the send. A daemon that
 * finds the row taken skips that key in this flush; when it looks again, the log shows what the
 * other sent, so the cluster sends each notification once (0.25 in HA mode gets the same from
 * gossip and a wait per peer position). A daemon that dies mid-send holds the key only until its
 * claim runs out; then another daemon's flush sends it. Claims run on the database's clock, so
 * daemons whose clocks differ a little still agree.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { SharedPostgres } from '../../store/postgres.js';
import type { NflogEntry, NflogTurn, NotificationLedger } from '../dispatch/nflog.js';

/** Keys hold NUL separators and any label text, which a TEXT column refuses: rows are keyed by digest. */
const rowKey = (key: string) => createHash('sha256').update(key).digest('hex');

const DB_NOW = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

interface Row {
  firing: string;
  resolved: string;
  at: string;
  expires: string;
}

export class SharedNotificationLog implements NotificationLedger {
  private entries = 0;

  constructor(
    private readonly db: SharedPostgres,
    private readonly owner: string,
    private readonly retentionMs: number,
    private readonly log: Logger,
  ) {}

  async begin(key: string, now: number, holdMs: number): Promise<NflogTurn | null> {
    const rows = await this.db.query<Row>(
      `INSERT INTO am_nflog (key, claim_owner, claim_until) VALUES ($1, $2, ${DB_NOW} + $3)
       ON CONFLICT (key) DO UPDATE SET claim_owner = EXCLUDED.claim_owner, claim_until = EXCLUDED.claim_until
       WHERE am_nflog.claim_until < ${DB_NOW} OR am_nflog.claim_owner = $2
       RETURNING firing, resolved, at, expires`,
      [rowKey(key), this.owner, Math.max(1000, Math.round(holdMs))],
    );
    const r = rows[0];
    if (!r) return null;
    const entry: NflogEntry | undefined =
      Number(r.expires) > now ? { firing: JSON.parse(r.firing) as string[], resolved: JSON.parse(r.resolved) as string[], at: Number(r.at) } : undefined;
    return { entry, finish: (sent) => this.finish(rowKey(key), sent) };
  }

  private async finish(row: string, sent: NflogEntry | undefined): Promise<void> {
    if (!sent) {
      await this.db.query('UPDATE am_nflog SET claim_owner = NULL, claim_until = 0 WHERE key = $1 AND claim_owner = $2', [row, this.owner]);
      return;
    }
    await this.db.query(
      `UPDATE am_nflog SET firing = $3, resolved = $4, at = $5, expires = $6, claim_owner = NULL, claim_until = 0
       WHERE key = $1 AND claim_owner = $2`,
      [row, this.owner, JSON.stringify(sent.firing), JSON.stringify(sent.resolved), sent.at, sent.at + this.retentionMs],
    );
  }

  /** Entries counted at the last garbage collection (the metric; counting on every scrape would query the server). */
  get size(): number {
    return this.entries;
  }

  /** Drop expired entries nobody holds; every daemon may run it (deleting twice is harmless). */
  async gc(now: number): Promise<number> {
    const gone = await this.db.query(`DELETE FROM am_nflog WHERE expires <= $1 AND claim_until < ${DB_NOW} RETURNING key`, [now]);
    const n = await this.db.query<{ n: string }>('SELECT COUNT(*) AS n FROM am_nflog WHERE expires > $1', [now]);
    this.entries = Number(n[0]?.n ?? 0);
    if (gone.length > 0) this.log.debug({ removed: gone.length }, 'alertmanager shared notification log garbage collection');
    return gone.length;
  }

  /** Writes are not batched here: nothing to flush. */
  commit(): void {}
}
