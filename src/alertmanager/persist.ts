/**
 * Where silences and alerts live on disk. The API keeps both in memory and writes through this
 * interface before it answers, so a 2xx is on disk when it is sent.
 *
 * Alerts arrive in batches (Prometheus posts many at a time), so each batch is one record of the
 * alert journal (alert-journal.ts: append-only files beside the database, one write(2) per
 * batch) holding the alerts' final states; a compaction folds the journal into a per-fingerprint
 * snapshot table in SQLite now and then, in small transactions. Loading reads the snapshot, then
 * replays the journal in order (the last state of a fingerprint wins), which is correct even if a
 * compaction was cut short. Silences are few and written one SQLite row each.
 *
 * Another backend (a shared SQL server for several daemons) would implement the same interface.
 */
import type { Migration, Store } from '../store/index.js';
import { AlertJournalFiles, type JournalRecord } from './alert-journal.js';
import { replayRawBatch, type RawAlertBatch } from './raw-batch.js';
import { NFLOG_MIGRATION } from './dispatch/nflog.js';
import { sortInSteps } from './sort-steps.js';
import type { SilenceBackend } from './silences.js';

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
  /** Nanoseconds past the millisecond of startsAt / endsAt (0-999999): Go's times keep them. */
  startsAtNs?: number;
  endsAtNs?: number;
  /** The zone offset (minutes east of UTC) startsAt / endsAt were posted with; absent for UTC (Z). */
  startsAtOff?: number;
  endsAtOff?: number;
  updatedAt: number;
  generatorURL: string;
  timeout: boolean;
}

export interface WriteBatch {
  silences?: StoredSilence[];
  /** Alert states to store. */
  alerts?: StoredAlert[];
  /**
   * Per alert state, what was stored for its fingerprint before: undefined where the fingerprint
   * is new. Optional; lets a backend note new fingerprints without looking them up.
   */
  previous?: readonly (StoredAlert | undefined)[];
  /** The request body these states came from, with their outcome: a backend may journal it instead. */
  raw?: RawAlertBatch;
  deleteSilences?: string[];
  deleteAlerts?: string[];
}

export interface AlertmanagerPersistence extends SilenceBackend {
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
  {
    // Raw journal rows (raw-batch.ts): data is {"u":updatedAt}, body the request body, outcome
    // three float64 per element. Since the journal moved to files (alert-journal.ts) the table
    // is only read: rows an older version left are replayed before the files and folded away.
    version: 2,
    up: `
      ALTER TABLE alert_journal ADD COLUMN body BLOB;
      ALTER TABLE alert_journal ADD COLUMN outcome BLOB;
    `,
  },
  NFLOG_MIGRATION,
];

/**
 * Compact alert record: [fp, labels, annotations, startsAt, endsAt, updatedAt, generatorURL, timeout,
 * startsAtNs, endsAtNs, startsAtOff, endsAtOff]; startsAtNs and endsAtNs only when either is not 0
 * or there are offsets (rows written before they existed read as 0), the offsets only when either
 * is posted (null for the other: UTC).
 */
type Row = [string, Record<string, string>, Record<string, string>, number, number, number, string, 0 | 1, number?, number?, (number | null)?, (number | null)?];

const toRow = (a: StoredAlert): Row =>
  a.startsAtOff !== undefined || a.endsAtOff !== undefined
    ? [a.fingerprint, a.labels, a.annotations, a.startsAt, a.endsAt, a.updatedAt, a.generatorURL, a.timeout ? 1 : 0, a.startsAtNs ?? 0, a.endsAtNs ?? 0, a.startsAtOff ?? null, a.endsAtOff ?? null]
    : a.startsAtNs || a.endsAtNs
      ? [a.fingerprint, a.labels, a.annotations, a.startsAt, a.endsAt, a.updatedAt, a.generatorURL, a.timeout ? 1 : 0, a.startsAtNs ?? 0, a.endsAtNs ?? 0]
      : [a.fingerprint, a.labels, a.annotations, a.startsAt, a.endsAt, a.updatedAt, a.generatorURL, a.timeout ? 1 : 0];
const fromRow = (r: Row): StoredAlert => ({
  fingerprint: r[0],
  labels: r[1],
  annotations: r[2],
  startsAt: r[3],
  endsAt: r[4],
  updatedAt: r[5],
  generatorURL: r[6],
  timeout: r[7] === 1,
  ...(r.length > 8 ? { startsAtNs: r[8], endsAtNs: r[9] } : {}),
  ...(r.length > 10 ? { startsAtOff: r[10] ?? undefined, endsAtOff: r[11] ?? undefined } : {}),
});

interface JournalRow {
  data: string;
  body: Buffer | null;
  outcome: Buffer | null;
}

interface JournalEntry {
  /** updatedAt of a raw row (its body and outcome are columns of their own). */
  u?: number;
  /** Alert states written. */
  a?: Row[];
  /** Fingerprints deleted. */
  d?: string[];
}

const COMPACT_CHUNK = 500;
/** A compaction's sorting of its fingerprints: this much of it per step, checking the time every SORT_STEP_COMPARISONS. */
const SORT_STEP_MS = 4;
const SORT_STEP_COMPARISONS = 1024;

/** Chunks a compaction writes between two checkpoints of the WAL. */
const CHECKPOINT_CHUNKS = 16;

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The fingerprints a compaction writes (changed or deleted, and new ones not among those) in
 * order, collected and sorted a bounded amount at a time (undefined is yielded between).
 */
function* fingerprintsInOrder(dirty: Set<string>, born: string[]): Generator<undefined, string[], unknown> {
  const todo: string[] = [];
  let n = 0;
  for (const fp of dirty) {
    todo.push(fp);
    if (++n % SORT_STEP_COMPARISONS === 0) yield undefined;
  }
  for (const fp of born) {
    if (!dirty.has(fp)) todo.push(fp);
    if (++n % SORT_STEP_COMPARISONS === 0) yield undefined;
  }
  return yield* sortInSteps(todo, compareStrings, undefined, SORT_STEP_COMPARISONS);
}

/**
 * SQLite page cache of this connection, in KiB as `cache_size` takes it (negative). The database
 * is read once, at start-up (everything is served from memory); after that it only takes appends
 * to the journal and the compaction's upserts, which need few pages at a time. better-sqlite3's
 * default (16 MiB) fills up with journal pages under a burst of POSTs and is never given back.
 */
const PAGE_CACHE_KIB = -1024;

export class SqlitePersistence implements AlertmanagerPersistence {
  /**
   * Fingerprints changed or deleted since the last compaction. A set: re-posted alerts add no
   * entry (and no garbage) when they are already in it.
   */
  private dirty = new Set<string>();
  /**
   * Fingerprints stored for the first time since the last compaction (WriteBatch.previous): a
   * list, no set lookup per new alert. A fingerprint is new once until it is deleted, and a
   * deletion puts it in `dirty`, so the list has no repeats the compaction would not drop.
   */
  private born: string[] = [];
  /** Journal records (file records and legacy table rows) not yet folded into the snapshot. */
  private journalRows = 0;
  /** Bytes of journal files not yet folded into the snapshot: what the next start would replay. */
  journalBytes = 0;
  private readonly files: AlertJournalFiles;
  private tunedDb: unknown;
  /** performance.now() of the last write (the maintenance waits for a quiet moment). */
  lastWriteAt = -Infinity;
  /** performance.now() of the oldest write not yet folded into the database file, if any. */
  uncheckpointedSince: number | undefined;

  constructor(private readonly store: Store) {
    this.files = new AlertJournalFiles(store.path);
    this.tune();
  }

  /**
   * SQLite checkpoints the WAL into the database file (with an fsync) from inside whichever
   * commit crosses 1000 pages: turn that off for this connection and checkpoint from the
   * compaction step instead, off the request path. The connection also keeps the file lock
   * (locking_mode EXCLUSIVE): no lock and unlock system calls around every commit; nothing else
   * opens this database while the daemon runs. Re-applied after the Core API reopens the store.
   */
  private tune(): void {
    const db = this.store.db;
    if (db === this.tunedDb) return;
    db.pragma('wal_autocheckpoint = 0');
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma(`cache_size = ${PAGE_CACHE_KIB}`);
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
    const replay = (r: JournalRecord) => {
      const e = JSON.parse(r.entry) as JournalEntry;
      if (r.body && r.outcome) {
        const outcome = new Float64Array(r.outcome.buffer.slice(r.outcome.byteOffset, r.outcome.byteOffset + r.outcome.byteLength));
        for (const a of replayRawBatch({ body: r.body, updatedAt: e.u!, outcome })) {
          byFp.set(a.fingerprint, a);
          this.dirty.add(a.fingerprint);
        }
      }
      for (const row of e.a ?? []) {
        byFp.set(row[0], fromRow(row));
        this.dirty.add(row[0]);
      }
      for (const fp of e.d ?? []) {
        byFp.delete(fp);
        this.dirty.add(fp);
      }
    };
    // Rows an earlier version journaled in the table come first: the files started after them.
    const legacy = this.store.prepare('SELECT data, body, outcome FROM alert_journal ORDER BY seq').all() as JournalRow[];
    for (const r of legacy) replay({ entry: r.data, ...(r.body && r.outcome ? { body: r.body, outcome: r.outcome } : {}) });
    let records = 0;
    this.journalBytes = this.files.forEachSegment((segment) => {
      for (const r of segment) replay(r);
      records += segment.length;
    });
    this.journalRows = legacy.length + records;
    if (this.journalRows > 0) this.uncheckpointedSince = performance.now();
    return [...byFp.values()];
  }

  writeSilences(silences: StoredSilence[], deleted: string[]): void {
    this.write({ silences, deleteSilences: deleted });
  }

  write(batch: WriteBatch): void {
    const wroteAlerts = this.journalAlerts(batch);
    const wroteSilences = this.storeSilences(batch);
    if (!wroteAlerts && !wroteSilences) return;
    const now = performance.now();
    this.lastWriteAt = now;
    this.uncheckpointedSince ??= now;
  }

  /** The batch's alert states and deletions as one journal record; false when it has none. */
  private journalAlerts(batch: WriteBatch): boolean {
    const entry: JournalEntry = {};
    const raw = batch.raw && batch.alerts?.length ? batch.raw : undefined;
    if (raw) entry.u = raw.updatedAt;
    else if (batch.alerts?.length) entry.a = batch.alerts.map(toRow);
    if (batch.deleteAlerts?.length) entry.d = batch.deleteAlerts;
    if (!raw && !entry.a && !entry.d) return false;
    if (raw) this.journalBytes += this.files.append(JSON.stringify(entry), raw.body, Buffer.from(raw.outcome.buffer, raw.outcome.byteOffset, raw.outcome.byteLength));
    else this.journalBytes += this.files.append(JSON.stringify(entry));
    this.journalRows++;
    const dirty = this.dirty;
    const alerts = batch.alerts;
    const previous = batch.previous;
    if (alerts) {
      for (let i = 0; i < alerts.length; i++) {
        if (previous && previous[i] === undefined) this.born.push(alerts[i]!.fingerprint);
        else dirty.add(alerts[i]!.fingerprint);
      }
    }
    if (batch.deleteAlerts) for (const fp of batch.deleteAlerts) dirty.add(fp);
    return true;
  }

  /** The batch's silence writes and deletions in one SQLite transaction; false when it has none. */
  private storeSilences(batch: WriteBatch): boolean {
    if (!batch.silences?.length && !batch.deleteSilences?.length) return false;
    this.tune();
    const s = this.store;
    s.transaction(() => {
      if (batch.silences?.length) {
        const st = s.prepare('INSERT OR REPLACE INTO silences (id, data) VALUES (?, ?)');
        for (const x of batch.silences) st.run(x.id, JSON.stringify(x));
      }
      if (batch.deleteSilences?.length) {
        const st = s.prepare('DELETE FROM silences WHERE id = ?');
        for (const id of batch.deleteSilences) st.run(id);
      }
    });
    return true;
  }

  /** Journal records not yet folded into the snapshot. */
  get pendingJournal(): number {
    return this.journalRows;
  }

  /**
   * Write the latest state of every dirty fingerprint to the snapshot in chunks, then drop the
   * journal records that existed when it started. Synchronous; callers spread it over ticks via
   * `compactStep`.
   */
  compact(current: (fp: string) => StoredAlert | undefined): void {
    while (this.compactStep(current, Infinity)) {
      /* until done */
    }
  }

  private compaction?: {
    upTo: number;
    records: number;
    bytes: number;
    /** Fingerprints to write, once in order (`sorting` done); written from `next` on. */
    todo: string[];
    next: number;
    sorting: Generator<undefined, string[], unknown> | undefined;
    /** Chunks written since the last checkpoint. */
    written: number;
  };

  /**
   * One step of a compaction: part of the sorting of the fingerprints (SORT_STEP_MS of it), or
   * one chunk of them written; returns true while more work remains.
   *
   * The fingerprints are written in order: each chunk's rows are then neighbours in the table's
   * B-tree, a few pages written to the WAL per transaction. In the order they came (hashes: all
   * over the table) every chunk of 500 rewrote about 500 pages, the WAL grew to hundreds of MB and
   * every page read searched it: 25-100 ms of CPU per chunk, and 380-530 ms for the checkpoint
   * that copies the WAL into the database file at the end (200,000 alerts).
   */
  compactStep(current: (fp: string) => StoredAlert | undefined, chunk = COMPACT_CHUNK): boolean {
    const s = this.store;
    this.tune();
    if (!this.compaction) {
      if (this.journalRows === 0) return false;
      const upTo = (s.prepare('SELECT COALESCE(MAX(seq), 0) AS m FROM alert_journal').get() as { m: number }).m;
      // Records written from now on go to a new file, replayed after the sealed ones.
      this.files.seal();
      this.compaction = { upTo, records: this.journalRows, bytes: this.journalBytes, todo: [], next: 0, sorting: fingerprintsInOrder(this.dirty, this.born), written: 0 };
      this.dirty = new Set();
      this.born = [];
      if (chunk !== Infinity) return true;
    }
    const c = this.compaction;
    if (c.sorting) {
      // All of it when the whole compaction runs at once (chunk Infinity: the component stops).
      const until = chunk === Infinity ? Infinity : performance.now() + SORT_STEP_MS;
      for (;;) {
        const r = c.sorting.next();
        if (r.done) {
          c.todo = r.value;
          c.sorting = undefined;
          break;
        }
        if (performance.now() >= until) return true;
      }
      if (chunk !== Infinity) return true;
    }
    const part = c.todo.slice(c.next, c.next + chunk);
    c.next += part.length;
    s.transaction(() => {
      const up = s.prepare('INSERT OR REPLACE INTO alerts (fingerprint, data) VALUES (?, ?)');
      const del = s.prepare('DELETE FROM alerts WHERE fingerprint = ?');
      for (const fp of part) {
        const a = current(fp);
        if (a) up.run(fp, JSON.stringify(toRow(a)));
        else del.run(fp);
      }
      if (c.next === c.todo.length && c.upTo > 0) s.prepare('DELETE FROM alert_journal WHERE seq <= ?').run(c.upTo);
    });
    if (c.next < c.todo.length) {
      // Copy the WAL into the database file every CHECKPOINT_CHUNKS chunks: each copy is then a
      // few MB, never the whole table in one turn of the loop at the end (125 ms of CPU for
      // 200,000 alerts), and the WAL is reused from its start instead of growing.
      if (++c.written >= CHECKPOINT_CHUNKS) {
        c.written = 0;
        s.db.pragma('wal_checkpoint(PASSIVE)');
      }
      return true;
    }
    // The snapshot is committed: the sealed files are no longer needed.
    this.files.removeSealed();
    this.journalRows = Math.max(0, this.journalRows - c.records);
    this.journalBytes = Math.max(0, this.journalBytes - c.bytes);
    this.compaction = undefined;
    this.checkpoint();
    return false;
  }

  /** Copy the WAL into the database file without waiting for readers or writers. */
  checkpoint(): void {
    this.tune();
    const started = performance.now();
    this.store.db.pragma('wal_checkpoint(PASSIVE)');
    // Journal records written while a compaction was under way are still to be folded.
    this.uncheckpointedSince = this.journalRows > 0 ? started : undefined;
  }

  /** Close the journal file (the component stops). */
  close(): void {
    this.files.close();
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
  writeSilences(silences: StoredSilence[], deleted: string[]): void {
    this.write({ silences, deleteSilences: deleted });
  }
  write(batch: WriteBatch): void {
    this.writes++;
    for (const s of batch.silences ?? []) this.silences.set(s.id, structuredClone(s));
    for (const a of batch.alerts ?? []) {
      const { fingerprint, labels, annotations, startsAt, endsAt, startsAtNs, endsAtNs, startsAtOff, endsAtOff, updatedAt, generatorURL, timeout } = a;
      this.alerts.set(a.fingerprint, structuredClone({ fingerprint, labels, annotations, startsAt, endsAt, startsAtNs, endsAtNs, startsAtOff, endsAtOff, updatedAt, generatorURL, timeout }));
    }
    for (const id of batch.deleteSilences ?? []) this.silences.delete(id);
    for (const fp of batch.deleteAlerts ?? []) this.alerts.delete(fp);
  }
}
