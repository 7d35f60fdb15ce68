/**
 * Silences in the shared database: every daemon of the cluster reads and writes the same rows. A
 * write commits before the API answers; the same transaction sends a notification, and every
 * daemon (the writer too) reloads the rows it names, so a silence set through one daemon mutes on
 * all of them within moments. After the notification connection was lost, all rows are reloaded.
 * Concurrent updates of one silence: the later `updatedAt` wins, on the server and in memory.
 */
import type { Logger } from 'pino';
import type { SharedPostgres } from '../../store/postgres.js';
import type { StoredSilence } from '../persist.js';
import type { SilenceBackend, SilenceStore } from '../silences.js';

const CHANNEL = 'ctl_am_silences';
/** PostgreSQL refuses notification payloads of 8000 bytes or more; past this, daemons reload everything. */
const MAX_PAYLOAD = 7000;

interface Change {
  ids?: string[];
  deleted?: string[];
  all?: true;
}

export class SharedSilences implements SilenceBackend {
  private initial: StoredSilence[] | null;
  private store?: SilenceStore;
  private unsubscribe?: () => void;

  private constructor(
    private readonly db: SharedPostgres,
    private readonly log: Logger,
    initial: StoredSilence[],
  ) {
    this.initial = initial;
  }

  static async open(db: SharedPostgres, log: Logger): Promise<SharedSilences> {
    const s = new SharedSilences(db, log, []);
    s.initial = await s.stored();
    return s;
  }

  /** Every silence in the shared database. */
  async stored(): Promise<StoredSilence[]> {
    const rows = await this.db.query<{ data: string }>('SELECT data FROM am_silences');
    return rows.map((r) => JSON.parse(r.data) as StoredSilence);
  }

  /** The rows read by `open` (the SilenceStore's first load). */
  loadSilences(): StoredSilence[] {
    const rows = this.initial ?? [];
    this.initial = null;
    return rows;
  }

  async writeSilences(silences: StoredSilence[], deleted: string[]): Promise<void> {
    if (silences.length === 0 && deleted.length === 0) return;
    let change: Change = { ids: silences.map((s) => s.id), deleted };
    let payload = JSON.stringify(change);
    if (payload.length > MAX_PAYLOAD) payload = JSON.stringify((change = { all: true }));
    await this.db.transaction(async (q) => {
      for (const s of silences) {
        await q.query(
          `INSERT INTO am_silences (id, data, updated_at) VALUES ($1, $2, $3)
           ON CONFLICT (id) DO UPDATE SET data = EXCLUDED.data, updated_at = EXCLUDED.updated_at
           WHERE am_silences.updated_at <= EXCLUDED.updated_at`,
          [s.id, JSON.stringify(s), s.updatedAt],
        );
      }
      if (deleted.length > 0) await q.query('DELETE FROM am_silences WHERE id = ANY($1::text[])', [deleted]);
      // Delivered when the transaction commits, to every daemon listening.
      await q.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]);
    });
  }

  /**
   * Keep `store` in step with changes any daemon makes. The store was filled from `open`'s read,
   * before anything listened: once listening, every silence is read again, so one another daemon
   * wrote in between is not missed (a restarted daemon used to miss those for good).
   */
  async follow(store: SilenceStore): Promise<void> {
    this.store = store;
    this.unsubscribe = await this.db.subscribe(
      CHANNEL,
      (payload) => void this.changed(JSON.parse(payload) as Change),
      () => void this.reloadAll(),
    );
    await this.reloadAll();
  }

  /** Full reads under way; a change applied meanwhile may be newer than what they return. */
  private loading = 0;
  private stale = false;

  private async changed(change: Change): Promise<void> {
    if (change.all) return this.reloadAll();
    if (this.loading > 0) this.stale = true;
    try {
      const ids = change.ids ?? [];
      const rows = ids.length ? await this.db.query<{ data: string }>('SELECT data FROM am_silences WHERE id = ANY($1::text[])', [ids]) : [];
      if (this.loading > 0) this.stale = true;
      const found = rows.map((r) => JSON.parse(r.data) as StoredSilence);
      const present = new Set(found.map((s) => s.id));
      // A silence named but gone was deleted since (garbage collection on some daemon).
      const gone = [...(change.deleted ?? []), ...ids.filter((id) => !present.has(id))];
      this.store?.apply(found, gone);
    } catch (e) {
      this.log.error({ err: (e as Error).message }, 'alertmanager: reading changed shared silences failed; reloading all when the database is back');
    }
  }

  /** Every silence again, replacing memory; read again while changes arrived during the read (they may be newer). */
  private async reloadAll(): Promise<void> {
    for (let round = 0; ; round++) {
      this.stale = false;
      this.loading++;
      let all: StoredSilence[];
      try {
        all = await this.stored();
      } catch (e) {
        this.log.error({ err: (e as Error).message }, 'alertmanager: reloading shared silences failed');
        return;
      } finally {
        this.loading--;
      }
      if (this.stale && round < 10) continue;
      this.store?.replaceAll(all);
      return;
    }
  }

  close(): void {
    this.unsubscribe?.();
  }
}
