/**
 * The gateway's database handle: the configuration (config/store.ts) in its SQLite file
 * (`database/gateway.db`), and the other capabilities' stores it opens for the gateway (memory,
 * files, batches, webhook deliveries, the request log, login sessions: each in its own folder,
 * written once for both databases on the kit's query layer through sql.ts). With ctl.yaml
 * `storage.postgres`, SharedConfigStore (config/pg-store.ts) replaces it and opens the same stores
 * on the shared database here (`openShared`). The schemas are assembled in schema.ts.
 */
import type { Logger } from 'pino';
import type { SharedPostgres } from '../store/postgres.js';
import type { Sql } from '../store/sql.js';
import { ConfigStore } from './config/store.js';
import type { MemoryData } from './memory/data.js';
import { MemoryStore } from './memory/store.js';
import { FileStore, type FileData } from './files/store.js';
import { BatchStore, SharedBatchStore, type BatchData } from './batches/store.js';
import { SqlDeliveryQueue, type DeliveryQueue } from './webhooks/store.js';
import { RequestLogStore, type RequestLogReader } from './request-log/reader.js';
import { sharedSql, sqliteSql } from './sql.js';
import { SqliteRequestLog, type RequestLogEntry } from './request-log/store.js';
import { PgRequestLog } from './request-log/shared-log.js';
import { SqliteSessions, type SessionData } from './sessions/store.js';

/** The stores several daemons share (storage.postgres): what the gateway keeps in PostgreSQL besides its configuration. */
interface SharedStores {
  sql: Sql;
  requestLog: PgRequestLog;
  memory: MemoryStore;
  files: FileStore;
  batches: SharedBatchStore;
}

export class GatewayStore extends ConfigStore {
  /** Set by `openShared`: the stores on the shared database replace those on the daemon's own file. */
  private shared?: SharedStores;

  /**
   * Open the stores several daemons share (their tables are migrated already: schema.ts); what no
   * shared store covers (OAuth tokens, caches, audit and the like) stays in the daemon's own file.
   */
  protected async openShared(db: SharedPostgres, daemonId: string, log: Logger): Promise<void> {
    const sql = sharedSql(db);
    const requestLog = new PgRequestLog(db, log, (before) => this.pruneCompressionLog(before));
    const memory = await MemoryStore.shared(sql, db, daemonId, log);
    const files = new FileStore(sql);
    const batches = await SharedBatchStore.open(sql, db);
    this.shared = { sql, requestLog, memory, files, batches };
  }

  /** The cluster's request log, with shared storage (rows written behind the request). */
  get requestLog(): PgRequestLog | undefined {
    return this.shared?.requestLog;
  }

  /** Persistent memory (/api/memory); shared: every gateway lists, searches and injects the same memories. */
  memoryStore(): MemoryData {
    return this.shared?.memory ?? new MemoryStore(sqliteSql(this.store));
  }

  /** Uploaded files (rows here, bytes on disk); shared: bytes included, any gateway serves a file uploaded through another. */
  fileData(): FileData {
    return this.shared?.files ?? new FileStore(sqliteSql(this.store));
  }

  /** Webhook deliveries waiting to be sent, and their attempts; shared: each sent by one gateway, retried by any. */
  deliveryQueue(): DeliveryQueue {
    return new SqlDeliveryQueue(this.shared?.sql ?? sqliteSql(this.store));
  }

  /** Batches and their line results; shared: every gateway runs a share of each batch's lines. */
  batchData(): BatchData {
    return this.shared?.batches ?? new BatchStore(sqliteSql(this.store));
  }

  private reader?: RequestLogReader;

  /** Asynchronous reads of the request log (routes use these: the log may be shared). */
  get logs(): RequestLogReader {
    return this.shared?.requestLog ?? (this.reader ??= new RequestLogStore(sqliteSql(this.store), (before) => this.pruneCompressionLog(before)));
  }

  /** The compression log's rows older than `before` go with the request log's (both kept in the daemon's own file). */
  private pruneCompressionLog(before: number): number {
    return this.store.prepare('DELETE FROM compression_log WHERE ts < ?').run(before).changes;
  }

  // ----- request log -------------------------------------------------------------------------

  /** Append rows to the request log (with shared storage they go to the cluster's log). */
  insertRequestLogs(entries: readonly RequestLogEntry[]): void {
    if (this.shared) this.shared.requestLog.append(entries);
    else (this.localLog ??= new SqliteRequestLog(this.store)).insert(entries);
  }

  private localLog?: SqliteRequestLog;

  // ----- login sessions (sessions/) ------------------------------------------------------------

  /** Login sessions of the management UI, their expired ones dropped first. */
  listSessions(now: number): { tokenHash: string; expiresAt: number }[] {
    return this.sessions.list(now);
  }

  /** True when login sessions live in a store several daemons share (read them here, do not cache). */
  get sessionsShared(): boolean {
    return this.sessions.shared;
  }

  /** Expiry of a login session, if it exists. */
  sessionExpiry(tokenHash: string): number | undefined {
    return this.sessions.expiry(tokenHash);
  }

  saveSession(tokenHash: string, now: number, expiresAt: number): void {
    this.sessions.save(tokenHash, now, expiresAt);
  }

  deleteSession(tokenHash: string): void {
    this.sessions.delete(tokenHash);
  }

  deleteAllSessions(): void {
    this.sessions.deleteAll();
  }

  /** Where login sessions are kept: the daemon's own file (the shared store keeps them with its configuration). */
  protected openSessions(): SessionData {
    return new SqliteSessions(this.store);
  }

  private get sessions(): SessionData {
    return (this.sessionData ??= this.openSessions());
  }

  private sessionData?: SessionData;
}
