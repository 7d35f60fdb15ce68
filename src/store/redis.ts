/**
 * The shared Redis of several daemons (ctl.yaml `storage.redis`), through `ioredis`: hot counters
 * that must be exact across daemons (budget windows), changed by Lua scripts so each change is
 * atomic. Fail fast: no offline queue, one-second command timeout, so while Redis is away a request
 * that needs it fails at once (StorageUnavailable → 503) and the client reconnects by itself.
 */
import type { Logger } from 'pino';
import { Redis } from 'ioredis';
import type { Egress } from '../egress/index.js';
import { egressConnector } from '../egress/redis-connector.js';
import { redactUrl } from './storage-config.js';
import { StorageUnavailable } from './unavailable.js';

export class SharedRedis {
  readonly where: string;
  private downSince: number | null = null;

  private constructor(
    readonly client: Redis,
    url: string,
    private readonly log: Logger,
  ) {
    this.where = `Redis (${redactUrl(url)})`;
    client.on('error', (e: Error) => {
      if (this.downSince !== null) return;
      this.downSince = Date.now();
      this.log.error({ err: e.message }, `${this.where} is unreachable: requests that need it answer 503 until it is back`);
    });
    client.on('ready', () => {
      if (this.downSince === null) return;
      this.downSince = null;
      this.log.info(`${this.where} is reachable again`);
    });
  }

  /** Connect and check the server answers; a clear error when it does not (the daemon does not start). */
  static async connect(url: string, log: Logger, egress: Egress): Promise<SharedRedis> {
    const u = new URL(url);
    const host = u.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
    const port = u.port ? Number(u.port) : 6379;
    const tls = u.protocol === 'rediss:';
    const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
    const client = new Redis({
      host,
      port,
      db: Number.isInteger(db) ? db : 0,
      ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
      ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
      ...(tls ? { tls: {} } : {}),
      Connector: egressConnector({ host, port, tls, egress }),
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      commandTimeout: 1000,
      retryStrategy: (times) => Math.min(100 * times, 1000),
    });
    const shared = new SharedRedis(client, url, log);
    try {
      await client.connect();
      await client.ping();
    } catch (e) {
      client.disconnect();
      throw new Error(`storage.redis: cannot reach ${shared.where}: ${(e as Error).message}`);
    }
    return shared;
  }

  get available(): boolean {
    return this.client.status === 'ready';
  }

  /** Run `fn` against the client; connection trouble becomes StorageUnavailable. */
  async run<T>(fn: (c: Redis) => Promise<T>): Promise<T> {
    if (this.client.status !== 'ready') throw new StorageUnavailable(this.where, new Error(`connection ${this.client.status}`));
    try {
      return await fn(this.client);
    } catch (e) {
      const msg = (e as Error).message ?? '';
      // A script's own error (ERR ... from Lua) is a bug, not an outage; everything else is the connection.
      if (/^ERR /.test(msg)) throw e;
      throw new StorageUnavailable(this.where, e);
    }
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }
}
