/**
 * The request log in the database several daemons share: every daemon appends what it served, and
 * usage, history and analytics read the cluster's traffic whichever daemon answers (the reads of
 * reader.ts). Rows are written behind the request (batched, one INSERT … SELECT FROM unnest per
 * batch), as the SQLite log is: a request's row is telemetry, not something its answer
 * acknowledged. A batch the server refuses is kept and tried again every second until the server
 * takes it (after an outage every queued row is written); beyond MAX_QUEUED rows waiting, the
 * oldest are dropped, counted (`dropped`, ctl_gateway_request_log_dropped_total) and logged. Reads
 * first wait for what this daemon has queued, so a request it finished is visible.
 */
import type { Logger } from 'pino';
import type { SharedPostgres } from '../../store/postgres.js';
import { sharedSql } from '../sql.js';
import { RequestLogStore } from './reader.js';
import { LOG_COLUMNS, pushLogValues, type RequestLogEntry } from './store.js';

/** PostgreSQL array types of LOG_COLUMNS, in order. */
const TYPES = [
  'text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'int', 'text', 'int',
  'int', 'int', 'int', 'int', 'float8', 'int', 'int', 'int', 'text', 'int', 'text', 'float8', 'int', 'text',
];
const COLUMNS = LOG_COLUMNS.split(',').map((c) => c.trim());
const INSERT = `INSERT INTO request_log (${COLUMNS.join(', ')}) SELECT * FROM unnest(${TYPES.map((t) => `?::${t}[]`).join(', ')})`;
const MAX_QUEUED = 100_000;

/** A batch the server refused is tried again this much later. */
const RETRY_MS = 1000;

export class PgRequestLog extends RequestLogStore {
  private queue: RequestLogEntry[] = [];
  /** The flush under way, if any (cleared when it ends, whatever the outcome). */
  private flushing?: Promise<void>;
  private failing = false;
  /** Set while a refused batch waits to be tried again: appends do not hammer the server meanwhile. */
  private retry?: NodeJS.Timeout;
  /** Rows dropped because the queue was full (ctl_gateway_request_log_dropped_total). */
  dropped = 0;

  constructor(
    db: SharedPostgres,
    private readonly log: Logger,
    /** This daemon's compression log purge (that log stays in the daemon's own file). */
    purgeLocal: (before: number) => number,
    private readonly maxQueued = MAX_QUEUED,
  ) {
    super(sharedSql(db), purgeLocal);
  }

  /** Rows waiting to be written. */
  get queued(): number {
    return this.queue.length;
  }

  append(entries: readonly RequestLogEntry[]): void {
    if (entries.length === 0) return;
    this.queue.push(...entries);
    if (this.queue.length > this.maxQueued) this.drop(this.queue.length - this.maxQueued);
    this.kick();
  }

  /** The oldest rows go when the queue is full: counted and logged, never silently. */
  private drop(n: number): void {
    const gone = this.queue.splice(0, n);
    this.dropped += gone.length;
    this.log.error(
      { dropped: gone.length, droppedTotal: this.dropped, from: new Date(gone[0]!.ts).toISOString(), to: new Date(gone[gone.length - 1]!.ts).toISOString(), firstRequestId: gone[0]!.requestId, lastRequestId: gone[gone.length - 1]!.requestId },
      `gateway: the request log queue is full (${this.maxQueued} rows waiting for the shared database): the oldest rows were dropped`,
    );
  }

  /** Start a flush unless one runs or a retry is due (the retry starts it). */
  private kick(): void {
    if (this.flushing || this.retry) return;
    // .finally runs after the assignment even when flush() settles at once: `flushing` never keeps a settled flush.
    this.flushing = this.flush().finally(() => {
      this.flushing = undefined;
      if (this.queue.length > 0 && !this.retry) this.kick();
    });
  }

  /** Write what is queued; returns when the queue is empty or the server refused (kept, tried again later). */
  private async flush(): Promise<void> {
    await new Promise<void>((r) => setImmediate(r)); // gather what the current tick appends
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, 2000);
      const values = TYPES.map(() => [] as unknown[]);
      const row: unknown[] = [];
      for (const e of batch) {
        row.length = 0;
        pushLogValues(e, row);
        row.forEach((v, i) => values[i]!.push(v));
      }
      try {
        await this.sql.run(INSERT, ...values);
      } catch (e) {
        if (!this.failing) this.log.error({ err: (e as Error).message, queued: this.queue.length }, 'gateway: writing the request log to the shared database failed; kept and tried again');
        this.failing = true;
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.kick();
        }, RETRY_MS);
        this.retry.unref();
        return;
      }
      if (this.failing) this.log.info({ queued: this.queue.length }, 'gateway: the request log reaches the shared database again');
      this.failing = false;
      // Rows dropped meanwhile (a full queue) were the oldest: take off only what is still at the front.
      const written = new Set(batch);
      let n = 0;
      while (n < this.queue.length && written.has(this.queue[n]!)) n++;
      this.queue.splice(0, n);
    }
  }

  /** What this daemon queued is written (or could not be: the read goes on with what is there). */
  protected override async caughtUp(): Promise<void> {
    if (this.queue.length > 0) this.kick();
    await this.flushing;
  }

  /** Queued rows are written (the component stops). */
  async close(): Promise<void> {
    clearTimeout(this.retry);
    this.retry = undefined;
    await this.caughtUp().catch(() => {});
  }
}

