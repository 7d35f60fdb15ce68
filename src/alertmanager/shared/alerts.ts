/**
 * Alerts in the shared database: an alert posted to any daemon of the cluster is held by every
 * daemon, so each lists the same alerts and builds the same aggregation groups (the shared
 * notification log then sends each change of a group once, whichever daemon flushes first).
 *
 * A POST is merged into the daemon's store as on one machine (0.25's merge rules, alerts.ts), and
 * the states it produced are written to the table in one statement per batch (concurrent POSTs of
 * one event-loop turn share it) before the API answers; that statement also notifies the other
 * daemons, which read the rows named and take them as they are. The later `updatedAt` wins, in
 * the table and in memory. A write the database refused (it is away) is undone in memory and the
 * POST answers 503, as a silence write does. After the notification connection was lost, and when
 * the alert manager starts, every row is read again: each daemon holds exactly what the table holds
 * (its own journal is not read, so a daemon that was down never brings back as firing an alert
 * the cluster resolved meanwhile).
 */
import type { Logger } from 'pino';
import type { Clock } from '../../http/clock.js';
import type { SharedPostgres } from '../../store/postgres.js';
import { StorageUnavailable } from '../../store/unavailable.js';
import { newAlert, type Alert, type AlertStore } from '../alerts.js';
import { labelSetsEqual } from '../labels.js';
import type { AlertmanagerPersistence, StoredAlert, WriteBatch } from '../persist.js';

const CHANNEL = 'ctl_am_alerts';
/**
 * PostgreSQL refuses notification payloads of 8000 bytes or more. States that fit travel in the
 * notification itself (the others take them without a query); larger ones are named by fingerprint
 * (16 hex digits each) and read from the table.
 */
const MAX_PAYLOAD = 7000;
/**
 * Statements writing alerts at once. More POSTs than this arriving together wait for one to end
 * and are written together in the next (the pool's other connections serve silences and the log).
 */
const MAX_COMMITS = 2;
/** A read of changed rows that failed is tried again after this long (the database is away). */
const RETRY_READ_MS = 1000;

/** One statement: the states (later updatedAt wins), and a notification per chunk of fingerprints. */
const UPSERT = `
  WITH up AS (
    INSERT INTO am_alerts (fingerprint, data, updated_at, ends_at)
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
    ON CONFLICT (fingerprint) DO UPDATE
      SET data = EXCLUDED.data, updated_at = EXCLUDED.updated_at, ends_at = EXCLUDED.ends_at
      WHERE am_alerts.updated_at <= EXCLUDED.updated_at
    RETURNING fingerprint
  )
  SELECT (SELECT array_agg(fingerprint) FROM up) AS written,
         (SELECT count(*) FROM (SELECT pg_notify($5, p) FROM unnest($6::text[]) AS p) n) AS notices`;

/** What the follower updates: the engine's store and its hook to the dispatcher. */
export interface AlertTarget {
  readonly alerts: AlertStore;
  onStored?: (alerts: Alert[]) => void;
}

interface Batch {
  states: Map<string, Alert>;
  /** The state before this batch's first write of each fingerprint (undefined: it was new). */
  previous: Map<string, Alert | undefined>;
  done: Promise<void>;
  /** Its statement is due (scheduled or running): later writes go into the next batch. */
  scheduled: boolean;
  resolve(): void;
  reject(e: unknown): void;
}

/** A notification: the writer, and the states written (`a`) or the fingerprints to read (`f`). */
interface Notice {
  o: string;
  a?: StoredAlert[];
  f?: string[];
}

/** The notifications of one write: rows packed while they fit, fingerprints of the others. */
function noticesFor(owner: string, fps: string[], rows: string[]): string[] {
  const head = `{"o":${JSON.stringify(owner)},`;
  const out: string[] = [];
  const big: string[] = [];
  let parts: string[] = [];
  let size = 0;
  const flush = () => {
    if (parts.length > 0) out.push(`${head}"a":[${parts.join(',')}]}`);
    parts = [];
    size = head.length + 8;
  };
  flush();
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    if (head.length + 8 + r.length > MAX_PAYLOAD) {
      big.push(fps[i]!);
      continue;
    }
    if (size + r.length + 1 > MAX_PAYLOAD) flush();
    parts.push(r);
    size += r.length + 1;
  }
  flush();
  for (let i = 0; i < big.length; i += 300) out.push(`${head}"f":${JSON.stringify(big.slice(i, i + 300))}}`);
  return out;
}

function toRow(a: StoredAlert): string {
  return JSON.stringify({
    fingerprint: a.fingerprint,
    labels: a.labels,
    annotations: a.annotations,
    startsAt: a.startsAt,
    endsAt: a.endsAt,
    updatedAt: a.updatedAt,
    generatorURL: a.generatorURL,
    timeout: a.timeout,
    // The nanoseconds past the millisecond, only when there are any (as the journal keeps them).
    ...(a.startsAtNs || a.endsAtNs ? { startsAtNs: a.startsAtNs ?? 0, endsAtNs: a.endsAtNs ?? 0 } : {}),
    // The zone offsets the times were posted with, only when there are any (absent: UTC).
    ...(a.startsAtOff !== undefined ? { startsAtOff: a.startsAtOff } : {}),
    ...(a.endsAtOff !== undefined ? { endsAtOff: a.endsAtOff } : {}),
  });
}

function sameState(a: StoredAlert, b: StoredAlert): boolean {
  return (
    a.updatedAt === b.updatedAt &&
    a.startsAt === b.startsAt &&
    a.endsAt === b.endsAt &&
    (a.startsAtNs ?? 0) === (b.startsAtNs ?? 0) &&
    (a.endsAtNs ?? 0) === (b.endsAtNs ?? 0) &&
    a.startsAtOff === b.startsAtOff &&
    a.endsAtOff === b.endsAtOff &&
    a.timeout === b.timeout &&
    a.generatorURL === b.generatorURL &&
    labelSetsEqual(a.annotations, b.annotations)
  );
}

export class SharedAlerts {
  private initial: StoredAlert[] | null = null;
  private target?: AlertTarget;
  private unsubscribe?: () => void;
  private batch: Batch | null = null;
  private committing = 0;
  /** The batch that took the last write since `mark` (what a POST waits for). */
  private marked: Batch | null = null;
  /** Fingerprints in batches not answered yet: never dropped from memory by a read meanwhile. */
  private readonly inflight = new Map<string, number>();
  /** Rows to read again (another daemon changed them), or all of them. */
  private wanted = new Set<string>();
  private wantAll = false;
  private reading = false;
  private closed = false;

  private constructor(
    private readonly db: SharedPostgres,
    private readonly owner: string,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Listen first, then read every row: a change announced during the read is read again after it. */
  static async open(db: SharedPostgres, owner: string, clock: Clock, log: Logger): Promise<SharedAlerts> {
    const s = new SharedAlerts(db, owner, clock, log);
    s.unsubscribe = await db.subscribe(
      CHANNEL,
      (payload) => s.noticed(payload),
      () => s.resync(),
    );
    s.initial = await s.stored();
    return s;
  }

  /** Every alert in the shared database. */
  async stored(): Promise<StoredAlert[]> {
    const rows = await this.db.query<{ data: string }>('SELECT data FROM am_alerts');
    return rows.map((r) => JSON.parse(r.data) as StoredAlert);
  }

  /**
   * The engine's persistence with alerts in the shared table: the store loads the rows read by
   * `open` (not the local journal) and its writes go to the table. Silences pass to `base`.
   */
  persistence(base: AlertmanagerPersistence): AlertmanagerPersistence {
    return {
      loadSilences: () => base.loadSilences(),
      writeSilences: (silences, deleted) => base.writeSilences(silences, deleted),
      loadAlerts: () => {
        const rows = this.initial ?? [];
        this.initial = null;
        return rows;
      },
      write: (batch: WriteBatch) => {
        if (batch.silences?.length || batch.deleteSilences?.length) base.write({ silences: batch.silences, deleteSilences: batch.deleteSilences });
        if (batch.alerts?.length) this.stage(batch.alerts, batch.previous);
        if (batch.deleteAlerts?.length) this.dropResolved(batch.deleteAlerts);
      },
    };
  }

  /** Keep `target` in step with what any daemon writes. */
  follow(target: AlertTarget): void {
    this.target = target;
    this.kick();
  }

  /** Start watching the writes of one POST; `written` then waits for them. */
  mark(): void {
    this.marked = null;
  }

  /** Resolves once every write since `mark` is in the database; rejects (StorageUnavailable) when one was refused. */
  written(): Promise<void> {
    return this.marked?.done ?? Promise.resolve();
  }

  private stage(states: readonly StoredAlert[], previous: WriteBatch['previous']): void {
    let b = this.batch;
    if (!b) {
      let resolve!: () => void;
      let reject!: (e: unknown) => void;
      const done = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
      // Internal alerts and resolutions taken from the log write without anyone waiting: failures are logged.
      done.catch(() => {});
      b = this.batch = { states: new Map(), previous: new Map(), done, scheduled: false, resolve, reject };
      this.schedule(b);
    }
    for (let j = 0; j < states.length; j++) {
      const a = states[j]!;
      if (!b.states.has(a.fingerprint)) {
        // A copy: the store updates its stored object in place after the write.
        const p = previous?.[j];
        b.previous.set(a.fingerprint, p && newAlert(p));
        this.inflight.set(a.fingerprint, (this.inflight.get(a.fingerprint) ?? 0) + 1);
      }
      b.states.set(a.fingerprint, newAlert(a));
    }
    this.marked = b;
  }

  /** Write `b` at the next turn, unless MAX_COMMITS are running: then when one ends. */
  private schedule(b: Batch): void {
    if (b.scheduled || this.committing >= MAX_COMMITS) return;
    b.scheduled = true;
    this.committing++;
    setImmediate(() => void this.commit(b));
  }

  private async commit(b: Batch): Promise<void> {
    if (this.batch === b) this.batch = null;
    const fps = [...b.states.keys()];
    const states = [...b.states.values()];
    const data = states.map(toRow);
    const notices = noticesFor(this.owner, fps, data);
    try {
      const rows = await this.db.query<{ written: string[] | null }>(UPSERT, [
        fps,
        data,
        // Whole milliseconds: a time posted with a finer fraction (RFC 3339 allows nanoseconds) is kept in `data`.
        states.map((a) => Math.floor(a.updatedAt)),
        states.map((a) => Math.floor(a.endsAt)),
        CHANNEL,
        notices,
      ]);
      // Refused rows hold a later state another daemon wrote: take it.
      const written = new Set(rows[0]?.written ?? []);
      const refused = fps.filter((fp) => !written.has(fp));
      if (refused.length > 0) this.want(refused);
      b.resolve();
    } catch (e) {
      this.undo(b);
      this.log.error({ err: (e as Error).message, alerts: fps.length }, 'alertmanager: writing alerts to the shared database failed; undone here');
      b.reject(e instanceof StorageUnavailable ? e : new StorageUnavailable('the shared alert store', e));
    } finally {
      for (const fp of fps) {
        const n = (this.inflight.get(fp) ?? 1) - 1;
        if (n > 0) this.inflight.set(fp, n);
        else this.inflight.delete(fp);
      }
      this.committing--;
      if (this.batch) this.schedule(this.batch);
    }
  }

  /** Memory goes back to what it held before the refused batch, where nothing wrote since. */
  private undo(b: Batch): void {
    const store = this.target?.alerts;
    if (!store) return;
    const back: Alert[] = [];
    const gone: string[] = [];
    for (const [fp, state] of b.states) {
      const cur = store.get(fp);
      if (!cur || cur.updatedAt !== state.updatedAt) continue;
      const prev = b.previous.get(fp);
      if (prev) back.push(prev);
      else gone.push(fp);
    }
    store.replace(back, gone);
    if (back.length > 0) this.target?.onStored?.(back.map((a) => store.get(a.fingerprint)!));
    // What the database holds for them is read once it answers again.
    this.want([...b.states.keys()]);
  }

  /** Resolved alerts every daemon's garbage collection drops: their rows go too, unless they fired again. */
  private dropResolved(fps: string[]): void {
    this.db
      .query('DELETE FROM am_alerts WHERE fingerprint = ANY($1::text[]) AND ends_at <= $2', [fps, this.clock.now()])
      .catch((e) => this.log.warn({ err: (e as Error).message }, 'alertmanager: deleting resolved shared alerts failed; the next garbage collection tries again'));
  }

  private noticed(payload: string): void {
    let n: Notice;
    try {
      n = JSON.parse(payload) as Notice;
    } catch {
      return this.resync();
    }
    if (n.o === this.owner) return;
    if (n.f) this.want(n.f);
    // Taken unless this daemon holds a later state; a refused write's notice is older than the row
    // that refused it, whose own notice brings it.
    if (!n.a) return;
    if (this.target) this.apply(n.a, []);
    else this.want(n.a.map((r) => r.fingerprint));
  }

  private resync(): void {
    this.wantAll = true;
    this.kick();
  }

  private want(fps: readonly string[]): void {
    for (const fp of fps) this.wanted.add(fp);
    this.kick();
  }

  /** One read at a time; what was named meanwhile is read together after it. */
  private kick(): void {
    if (this.reading || this.closed || !this.target) return;
    if (!this.wantAll && this.wanted.size === 0) return;
    this.reading = true;
    setImmediate(() => void this.read());
  }

  private async read(): Promise<void> {
    const all = this.wantAll;
    const fps = [...this.wanted];
    this.wantAll = false;
    this.wanted = new Set();
    try {
      const rows = all
        ? await this.stored()
        : (await this.db.query<{ data: string }>('SELECT data FROM am_alerts WHERE fingerprint = ANY($1::text[])', [fps])).map((r) => JSON.parse(r.data) as StoredAlert);
      this.apply(rows, all ? undefined : fps);
    } catch (e) {
      if (all) this.wantAll = true;
      for (const fp of fps) this.wanted.add(fp);
      this.log.warn({ err: (e as Error).message }, 'alertmanager: reading shared alerts failed; trying again');
      const t = setTimeout(() => {
        this.reading = false;
        this.kick();
      }, RETRY_READ_MS);
      t.unref();
      return;
    }
    this.reading = false;
    this.kick();
  }

  /**
   * Take the rows as they are, except where this daemon holds a later state (written, or being
   * written). `named`: the fingerprints read (absent ones were deleted); all rows when undefined.
   */
  private apply(rows: StoredAlert[], named: string[] | undefined): void {
    const target = this.target;
    if (!target || this.closed) return;
    const store = target.alerts;
    const states: Alert[] = [];
    const present = new Set<string>();
    for (const r of rows) {
      present.add(r.fingerprint);
      const cur = store.get(r.fingerprint);
      if (cur && (cur.updatedAt > r.updatedAt || sameState(cur, r))) continue;
      states.push(newAlert(r));
    }
    const candidates = named ?? store.list().map((a) => a.fingerprint);
    const gone = candidates.filter((fp) => !present.has(fp) && !this.inflight.has(fp) && store.get(fp) !== undefined);
    if (states.length === 0 && gone.length === 0) return;
    store.replace(states, gone);
    if (states.length > 0) target.onStored?.(states.map((a) => store.get(a.fingerprint)!));
  }

  close(): void {
    this.closed = true;
    this.unsubscribe?.();
  }
}
