/**
 * Reads of the request log as the management and analytics routes make them. Asynchronous, so the
 * log may live in the daemon's own SQLite file (SqliteLogReader, answering at once) or in the
 * database several daemons share (pg-store.ts, which also answers the analytics.ts reads).
 */
import { AnalyticsStore, type CacheRow, type LatencyRow, type RoutingRow } from './analytics.js';
import type { Store } from '../../store/index.js';
import { SqliteRequestLog, type HistoryBucket, type HistoryQuery, type LogQuery, type RequestLogRow } from './store.js';

export type { HistoryQuery };
export type AccountTotals = ReturnType<SqliteRequestLog['accountUsage']>;
export type ComboTargetCount = Awaited<ReturnType<SqliteRequestLog['comboTargetCounts']>>[number];

export interface RequestLogReader {
  requestLogs(q: LogQuery): Promise<{ total: number; rows: RequestLogRow[] }>;
  history(q: HistoryQuery): Promise<HistoryBucket[]>;
  accountUsage(provider: string, account: string, since: number): Promise<AccountTotals>;
  /** Delete rows from before `before` (and this daemon's compression log). */
  purge(before: number): Promise<{ requestLogs: number; compressionLogs: number }>;
  comboTargetCounts(since: number): Promise<ComboTargetCount[]>;
  latencyRows(q: Parameters<AnalyticsStore['latencyRows']>[0]): Promise<LatencyRow[]>;
  cacheRows(q: Parameters<AnalyticsStore['cacheRows']>[0]): Promise<CacheRow[]>;
  routingRows(since: number, maxRows: number): Promise<RoutingRow[]>;
  providerCounts(since: number): Promise<{ provider: string; n: number }[]>;
}

export class SqliteLogReader implements RequestLogReader {
  private readonly log: SqliteRequestLog;
  private readonly analytics: AnalyticsStore;

  constructor(store: Store) {
    this.log = new SqliteRequestLog(store);
    this.analytics = new AnalyticsStore(store);
  }

  async requestLogs(q: LogQuery) {
    return this.log.query(q);
  }
  async history(q: HistoryQuery) {
    return this.log.history(q);
  }
  async accountUsage(provider: string, account: string, since: number) {
    return this.log.accountUsage(provider, account, since);
  }
  async purge(before: number) {
    return this.log.purge(before);
  }
  async comboTargetCounts(since: number) {
    return this.log.comboTargetCounts(since);
  }
  async latencyRows(q: Parameters<AnalyticsStore['latencyRows']>[0]) {
    return this.analytics.latencyRows(q);
  }
  async cacheRows(q: Parameters<AnalyticsStore['cacheRows']>[0]) {
    return this.analytics.cacheRows(q);
  }
  async routingRows(since: number, maxRows: number) {
    return this.analytics.routingRows(since, maxRows);
  }
  async providerCounts(since: number) {
    return this.analytics.providerCounts(since);
  }
}
