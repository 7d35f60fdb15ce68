/**
 * The notification log (0.25's nflog): per group, receiver and integration, which alerts the last
 * successful notification carried as firing and as resolved, and when. Kept in the alert manager's
 * database, written before the next flush can read it, so a restart or kill -9 neither sends again
 * what was sent within repeat_interval nor forgets a pending resolution. Entries expire after the
 * data retention (--data.retention, 120h), as in 0.25.
 */
import type { Store } from '../../store/index.js';

export interface NflogEntry {
  firing: string[];
  resolved: string[];
  /** When the notification was sent (epoch ms). */
  at: number;
}

export const NFLOG_MIGRATION = {
  version: 3,
  up: `
    CREATE TABLE nflog (
      key TEXT PRIMARY KEY,
      firing TEXT NOT NULL,
      resolved TEXT NOT NULL,
      at INTEGER NOT NULL,
      expires INTEGER NOT NULL
    ) WITHOUT ROWID;
  `,
};

/** One flush's use of a log entry: what was logged, and the right to notify for it now. */
export interface NflogTurn {
  entry: NflogEntry | undefined;
  /** Done: log `sent` when a notification went out (else the entry stays), and give the right back. */
  finish(sent?: NflogEntry): void | Promise<void>;
}

/**
 * What the dispatcher needs of a notification log: this daemon's own (NotificationLog) or the one
 * several daemons share (shared/nflog.ts), where `begin` answers null while another daemon is
 * notifying for the same key, so the cluster sends each notification once.
 */
export interface NotificationLedger {
  /** The entry of `key`; held for this flush until `finish` or, should this process die, until `holdMs` pass. */
  begin(key: string, now: number, holdMs: number): NflogTurn | null | Promise<NflogTurn | null>;
  readonly size: number;
  gc(now: number): number | Promise<number>;
  commit(): void;
}

export class NotificationLog implements NotificationLedger {
  /** Entries logged since the last commit: written together, once per event-loop turn. */
  private pending = new Map<string, NflogEntry>();
  private commitScheduled = false;

  constructor(
    private readonly store: Store,
    private readonly retentionMs: number,
  ) {}

  begin(key: string, now: number): NflogTurn {
    return {
      entry: this.get(key, now),
      finish: (sent) => {
        if (sent) this.log(key, sent);
      },
    };
  }

  static key(groupKey: string, receiver: string, integration: string, index: number): string {
    return `${groupKey}\u0000${receiver}\u0000${integration}\u0000${index}`;
  }

  get(key: string, now: number): NflogEntry | undefined {
    const p = this.pending.get(key);
    if (p) return p.at + this.retentionMs <= now ? undefined : p;
    const r = this.store.prepare('SELECT firing, resolved, at, expires FROM nflog WHERE key = ?').get(key) as
      | { firing: string; resolved: string; at: number; expires: number }
      | undefined;
    if (!r || r.expires <= now) return undefined;
    return { firing: JSON.parse(r.firing) as string[], resolved: JSON.parse(r.resolved) as string[], at: r.at };
  }

  /**
   * Record a notification. Entries of one event-loop turn are committed together (a thousand groups
   * flushing at once make one transaction, not a thousand); reads see them at once. A kill -9 in
   * between loses at most that turn's entries: those notifications are sent again after the restart
   * (sent at least once, never lost).
   */
  log(key: string, entry: NflogEntry): void {
    this.pending.set(key, entry);
    if (this.commitScheduled) return;
    this.commitScheduled = true;
    setImmediate(() => this.commit());
  }

  /** Write what is pending (also called before the store closes). */
  commit(): void {
    this.commitScheduled = false;
    if (this.pending.size === 0) return;
    const rows = this.pending;
    this.pending = new Map();
    const insert = this.store.prepare('INSERT OR REPLACE INTO nflog (key, firing, resolved, at, expires) VALUES (?, ?, ?, ?, ?)');
    this.store.transaction(() => {
      for (const [key, e] of rows) insert.run(key, JSON.stringify(e.firing), JSON.stringify(e.resolved), e.at, e.at + this.retentionMs);
    });
  }

  get size(): number {
    this.commit();
    return (this.store.prepare('SELECT COUNT(*) AS n FROM nflog').get() as { n: number }).n;
  }

  /** Drop expired entries (the maintenance tick). */
  gc(now: number): number {
    this.commit();
    return this.store.prepare('DELETE FROM nflog WHERE expires <= ?').run(now).changes;
  }
}

/**
 * DedupStage.needsUpdate of 0.25: send when something fires that the last notification did not
 * carry; when every alert resolved after a notification carried firing ones (whatever send_resolved
 * says, so the log forgets them); when resolved alerts are new and the integration sends them; and
 * otherwise once repeat_interval has passed.
 */
export function needsUpdate(entry: NflogEntry | undefined, firing: Set<string>, resolved: Set<string>, sendResolved: boolean, repeatMs: number, now: number): boolean {
  if (!entry) return firing.size > 0;
  // Entry.IsFiringSubset / IsResolvedSubset: is every current alert one the last notification carried?
  const loggedFiring = new Set(entry.firing);
  for (const fp of firing) if (!loggedFiring.has(fp)) return true;
  if (firing.size === 0) return entry.firing.length > 0;
  if (sendResolved) {
    const loggedResolved = new Set(entry.resolved);
    for (const fp of resolved) if (!loggedResolved.has(fp)) return true;
  }
  return entry.at < now - repeatMs;
}
