/**
 * Request-log and usage recording off the hot path: entries queue in memory and are written in one
 * transaction every `flushMs` (or at `maxBatch` entries). Readers flush first, so the API always
 * sees every finished request. Key last-used times ride along in the same flush.
 */
import type { Logger } from 'pino';
import type { GatewayStore } from '../store.js';
import type { RequestLogEntry } from './store.js';

export class UsageRecorder {
  private queue: RequestLogEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Live readers of the request log (the dashboard's SSE stream): each finished request, as it is recorded. */
  private readonly listeners = new Set<(entry: RequestLogEntry) => void>();

  constructor(
    private readonly db: GatewayStore,
    private readonly log: Logger,
    private readonly lastUsed: Map<string, number>,
    private readonly flushMs = 200,
    private readonly maxBatch = 500,
  ) {}

  record(entry: RequestLogEntry): void {
    this.queue.push(entry);
    for (const fn of this.listeners) {
      try {
        fn(entry);
      } catch (e) {
        this.log.error({ err: e }, 'gateway: a request-log listener failed');
      }
    }
    if (this.queue.length >= this.maxBatch) this.flush();
    else if (!this.timer && !this.stopped) {
      this.timer = setTimeout(() => this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Write everything queued now. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.queue;
    this.queue = [];
    try {
      this.insert(batch);
      if (this.lastUsed.size > 0) {
        this.db.touchKeys(this.lastUsed);
        this.lastUsed.clear();
      }
    } catch (e) {
      this.log.error({ err: e, entries: batch.length }, 'gateway: writing the request log failed');
      // Keep the entries for the next attempt (bounded so a broken disk cannot exhaust memory).
      if (this.queue.length + batch.length <= 10 * this.maxBatch) this.queue = batch.concat(this.queue);
    }
  }

  /**
   * One transaction for the batch; when it fails, row by row, so one bad row never costs the good
   * ones. Rows that fail alone are dropped (and logged); when every row fails the cause is not a row
   * (a full or broken disk): that throws and the batch is kept for the next flush.
   */
  private insert(batch: RequestLogEntry[]): void {
    try {
      this.db.insertRequestLogs(batch);
      return;
    } catch (e) {
      if (batch.length === 1) throw e;
    }
    const failed: { entry: RequestLogEntry; err: unknown }[] = [];
    for (const entry of batch) {
      try {
        this.db.insertRequestLogs([entry]);
      } catch (err) {
        failed.push({ entry, err });
      }
    }
    if (failed.length === batch.length) throw failed[0]!.err;
    for (const f of failed) this.log.error({ err: f.err, requestId: f.entry.requestId, model: f.entry.model }, 'gateway: a request log row could not be written; dropped');
  }

  /** Call `fn` with every entry recorded from now on; returns the unsubscribe. */
  subscribe(fn: (entry: RequestLogEntry) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Live readers right now. */
  get subscribers(): number {
    return this.listeners.size;
  }

  get pending(): number {
    return this.queue.length;
  }

  stop(): void {
    this.stopped = true;
    this.flush();
  }
}
