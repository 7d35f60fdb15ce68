/**
 * Where silences and alerts live on disk. The API keeps both in memory and writes through this
 * interface before it answers, so a 2xx is on disk (SQLite WAL) when it is sent.
 *
 * Alerts arrive in batches (Prometheus posts many at a time), so each batch is one journal row
 * holding the alerts' final states; a compaction folds the journal into a per-fingerprint
 * snapshot table now and then, in small transactions. Loading reads the snapshot, then replays
 * the journal in order (the last state of a fingerprint wins), which is correct even if a
 * compaction was cut short. Silences are few and written one row each.
 *
 * Another backend (a shared SQL server for several daemons) would implement the same interface.
 */
import type { Migration, Store } from '../store/index.js';

export interface StoredSilence {
  id: string;
  matchers: { name: string; value: string; isRegex: boolean; isEqual: boolean }[];
  startsAt: number;
  endsAt: number;
  updatedAt: number;
  createdBy: string;
  comment: string;
}

export interface StoredAlert {
  fingerprint: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: number;
  endsAt: number;
  updatedAt: number;
  generatorURL: string;
  timeout: boolean;
}

export interface WriteBatch {
  silences?: StoredSilence[];
  alerts?: StoredAlert[];
  deleteSilences?: string[];
  deleteAlerts?: string[];
}

export interface AlertmanagerPersistence {
  loadSilences(): StoredSilence[];
  loadAlerts(): StoredAlert[];
  /** Apply one batch atomically (durable when it returns). */
  write(batch: WriteBatch): void;
  /** Fold pending journal entries into the snapshot; `current` gives the latest state of a fingerprint. */
  compact?(current: (fp: string) => StoredAlert | undefined): void;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    up: `
      CREATE TABLE silences (
        id TEXT PRIMARY KEY,
        data TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE alerts (
        fingerprint TEXT PRIMARY KEY,
        data TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE TABLE alert_journal (
        seq INTEGER PRIMARY KEY,
        data TEXT NOT NULL
      );
    `,
  },
];

/** Compact alert record: [fp, labels, annotations, startsAt, endsAt, updatedAt, generatorURL, timeout]. */
type Row = [string, Record<string, string>, Record<string, string>, number, number, number, string, 0 | 1];

const toRow = (a: StoredAlert): Row => [a.fingerprint, a.labels, a.annotations, a.startsAt, a.endsAt, a.updatedAt, a.generatorURL, a.timeout ? 1 : 0];
const fromRow = (r: Row): StoredAlert => ({
  fingerprint: r[0],
  labels: r[1],
  annotations: r[2],
  startsAt: r[3],
  endsAt: r[4],
  updatedAt: r[5],
  generatorURL: r[6],
  timeout: r[7] === 1,
});

interface JournalEntry {
  /** Alert states written. */
  a?: Row[];
  /** Fingerprints deleted. */
  d?: string[];
}

const COMPACT_CHUNK = 500;

export class SqlitePersistence implements AlertmanagerPersistence {
  /** Fingerprints changed or deleted since the last compaction. */
  private readonly dirty = new Set<string>();
  private journalRows = 0;
  private tunedDb: unknown;

  constructor(private readonly store: Store) {}

  /**
   * SQLite checkpoints the WAL into the database file (with an fsync) from inside whichever
   * commit crosses 1000 pages: with alert batches that is a request every few dozen. Turn that
   * off for this connection and checkpoint from the compaction step instead, off the request
   * path. Re-applied after the Core API reopens the store.
   */
  private tune(): void {
    const db = this.store.db;
    if (db === this.tunedDb) return;
    db.pragma('wal_autocheckpoint = 0');
    this.tunedDb = db;
  }

  loadSilences(): StoredSilence[] {
    return (this.store.prepare('SELECT data FROM silences').all() as { data: string }[]).map((r) => JSON.parse(r.data));
  }

  loadAlerts(): StoredAlert[] {
    const byFp = new Map<string, StoredAlert>();
    for (const r of this.store.prepare('SELECT data FROM alerts').all() as { data: string }[]) {
      const a = fromRow(JSON.parse(r.data));
      byFp.set(a.fingerprint, a);
    }
    const journal = this.store.prepare('SELECT data FROM alert_journal ORDER BY seq').all() as { data: string }[];
    for (const r of journal) {
      const e = JSON.parse(r.data) as JournalEntry;
      for (const row of e.a ?? []) {
        byFp.set(row[0], fromRow(row));
        this.dirty.add(row[0]);
      }
      for (const fp of e.d ?? []) {
        byFp.delete(fp);
        this.dirty.add(fp);
      }
    }
    this.journalRows = journal.length;
    return [...byFp.values()];
  }

  write(batch: WriteBatch): void {
    this.tune();
    const s = this.store;
    const entry: JournalEntry = {};
    if (batch.alerts?.length) entry.a = batch.alerts.map(toRow);
    if (batch.deleteAlerts?.length) entry.d = batch.deleteAlerts;
    s.transaction(() => {
      if (entry.a || entry.d) s.prepare('INSERT INTO alert_journal (data) VALUES (?)').run(JSON.stringify(entry));
      if (batch.silences?.length) {
        const st = s.prepare('INSERT OR REPLACE INTO silences (id, data) VALUES (?, ?)');
        for (const x of batch.silences) st.run(x.id, JSON.stringify(x));
      }
      if (batch.deleteSilences?.length) {
        const st = s.prepare('DELETE FROM silences WHERE id = ?');
        for (const id of batch.deleteSilences) st.run(id);
      }
    });
    if (entry.a || entry.d) {
      this.journalRows++;
      for (const a of batch.alerts ?? []) this.dirty.add(a.fingerprint);
      for (const fp of batch.deleteAlerts ?? []) this.dirty.add(fp);
    }
  }

  /** Journal rows not yet folded into the snapshot. */
  get pendingJournal(): number {
    return this.journalRows;
  }

  /**
   * Write the latest state of every dirty fingerprint to the snapshot in chunks, then drop the
   * journal rows that existed when it started. Synchronous; callers spread it over ticks via
   * `compactStep`.
   */
  compact(current: (fp: string) => StoredAlert | undefined): void {
    while (this.compactStep(current, Infinity)) {
      /* until done */
    }
  }

  private compaction?: { upTo: number; todo: string[] };

  /** One chunk of a compaction; returns true while more work remains. */
  compactStep(current: (fp: string) => StoredAlert | undefined, chunk = COMPACT_CHUNK): boolean {
    const s = this.store;
    if (!this.compaction) {
      if (this.journalRows === 0) return false;
      const upTo = (s.prepare('SELECT COALESCE(MAX(seq), 0) AS m FROM alert_journal').get() as { m: number }).m;
      this.compaction = { upTo, todo: [...this.dirty] };
      this.dirty.clear();
    }
    const c = this.compaction;
    const part = c.todo.splice(0, chunk);
    s.transaction(() => {
      const up = s.prepare('INSERT OR REPLACE INTO alerts (fingerprint, data) VALUES (?, ?)');
      const del = s.prepare('DELETE FROM alerts WHERE fingerprint = ?');
      for (const fp of part) {
        const a = current(fp);
        if (a) up.run(fp, JSON.stringify(toRow(a)));
        else del.run(fp);
      }
      if (c.todo.length === 0) {
        const removed = s.prepare('DELETE FROM alert_journal WHERE seq <= ?').run(c.upTo).changes;
        this.journalRows = Math.max(0, this.journalRows - removed);
      }
    });
    if (c.todo.length === 0) {
      this.compaction = undefined;
      this.checkpoint();
      return false;
    }
    return true;
  }

  /** Copy the WAL into the database file without waiting for readers or writers. */
  checkpoint(): void {
    this.tune();
    this.store.db.pragma('wal_checkpoint(PASSIVE)');
  }
}

/** Keeps everything in memory: for unit tests of the in-memory logic. */
export class MemoryPersistence implements AlertmanagerPersistence {
  silences = new Map<string, StoredSilence>();
  alerts = new Map<string, StoredAlert>();
  writes = 0;
  loadSilences(): StoredSilence[] {
    return [...this.silences.values()].map((s) => structuredClone(s));
  }
  loadAlerts(): StoredAlert[] {
    return [...this.alerts.values()].map((a) => structuredClone(a));
  }
  write(batch: WriteBatch): void {
    this.writes++;
    for (const s of batch.silences ?? []) this.silences.set(s.id, structuredClone(s));
    for (const a of batch.alerts ?? []) {
      const { fingerprint, labels, annotations, startsAt, endsAt, updatedAt, generatorURL, timeout } = a;
      this.alerts.set(a.fingerprint, structuredClone({ fingerprint, labels, annotations, startsAt, endsAt, updatedAt, generatorURL, timeout }));
    }
    for (const id of batch.deleteSilences ?? []) this.silences.delete(id);
    for (const fp of batch.deleteAlerts ?? []) this.alerts.delete(fp);
  }
}
