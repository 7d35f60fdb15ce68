import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Egress } from '../egress/index.js';
import type { CounterStore, HitResult } from './adapter.js';
import type { RedisAdapterConfig } from './config.js';
import { egressConnector } from '../egress/redis-connector.js';
import { ThrottledLog } from './throttled-log.js';

/**
 * The whole hit in one script, so a key can never be left without an expiry (the original's
 * INCR-then-EXPIRE could): count up, and when the key has no TTL yet (its first hit, or a key some
 * older writer left immortal) start the window now. Returns the count and the ms left.
 */
export const HIT_SCRIPT = `local c = redis.call('INCR', KEYS[1])
local t = redis.call('PTTL', KEYS[1])
if t < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  t = tonumber(ARGV[1])
end
return {c, t}`;

/** Fast failure: an outage must answer within these bounds, never queue or hang a request. */
export const CONNECT_TIMEOUT_MS = 1000;
export const COMMAND_TIMEOUT_MS = 500;
/**
 * The circuit: after this many failed hits in a row Redis is not called for CIRCUIT_OPEN_MS (every
 * hit fails at once, the store-error policy answers), then one hit probes it; a success closes it.
 * A frozen Redis (accepting bytes, answering nothing) otherwise costs every request the command
 * timeout.
 */
export const CIRCUIT_FAILURES = 5;
export const CIRCUIT_OPEN_MS = 1000;
const CHUNK = 500;
const CIRCUIT_OPEN = new Error('rate limit: redis circuit open (Redis failed repeatedly; retried shortly)');

type HitCommand = (key: string, windowMs: number) => Promise<[number, number]>;

export class RedisCounterStore implements CounterStore {
  readonly name = 'redis' as const;
  readonly onStoreError: 'block' | 'allow';
  readonly prefix: string;
  readonly client: Redis;
  private readonly hitPipelined: HitCommand;
  private readonly hitNow: HitCommand;
  /** Hits sent and not answered yet. */
  private inflight = 0;
  private readonly connLog: ThrottledLog;

  private constructor(
    readonly cfg: RedisAdapterConfig,
    egress: Egress,
    private readonly log: Logger,
  ) {
    this.onStoreError = cfg.onStoreError;
    this.prefix = cfg.prefix === '' || cfg.prefix.endsWith(':') ? cfg.prefix : `${cfg.prefix}:`;
    this.connLog = new ThrottledLog(log, `rate limit: redis ${cfg.host}:${cfg.port} connection`);
    this.client = new Redis({
      host: cfg.host,
      port: cfg.port,
      db: cfg.db,
      password: cfg.password === '' ? undefined : cfg.password,
      tls: cfg.tls ? {} : undefined,
      Connector: egressConnector({ host: cfg.host, port: cfg.port, tls: cfg.tls, egress }),
      lazyConnect: true,
      // Offline queue off and no retries per request: while Redis is away a hit fails at once
      // (store-error policy) instead of waiting for a reconnect.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: COMMAND_TIMEOUT_MS,
      retryStrategy: (times) => Math.min(50 * times, 1000),
      // Under load, hits issued in the same event-loop turn share one write and one round trip
      // (auto-pipelining); a hit while nothing is in flight goes out at once (see hit()).
      enableAutoPipelining: true,
      autoPipeliningIgnoredCommands: ['ctlRateLimitHitNow'],
    });
    this.client.defineCommand('ctlRateLimitHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    this.client.defineCommand('ctlRateLimitHitNow', { numberOfKeys: 1, lua: HIT_SCRIPT });
    const commands = this.client as unknown as { ctlRateLimitHit: HitCommand; ctlRateLimitHitNow: HitCommand };
    this.hitPipelined = commands.ctlRateLimitHit.bind(this.client);
    this.hitNow = commands.ctlRateLimitHitNow.bind(this.client);
    this.client.on('error', (err) => this.connLog.failure(err));
    this.client.on('ready', () => {
      // A fresh connection is a fresh start: the circuit closes (a frozen server's one never gets here).
      this.failures = 0;
      this.openUntil = 0;
      this.probing = false;
      this.connLog.success();
      this.log.debug({ host: cfg.host, port: cfg.port }, 'rate limit: redis ready');
    });
  }

  /** Connect, waiting at most the connect timeout; a Redis that is down now is retried in the background. */
  static async open(cfg: RedisAdapterConfig, egress: Egress, log: Logger): Promise<RedisCounterStore> {
    const s = new RedisCounterStore(cfg, egress, log);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      s.client.connect().catch((err: unknown) => {
        log.warn({ err }, `rate limit: redis ${cfg.host}:${cfg.port} is not reachable yet; retrying in the background`);
      }),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, CONNECT_TIMEOUT_MS + 500);
      }),
    ]);
    clearTimeout(timer);
    return s;
  }

  /**
   * Auto-pipelining waits for the end of the event-loop turn (setImmediate) to batch, which only
   * pays when other hits are waiting: an idle limiter sends at once, a busy one batches.
   */
  hit(key: string, windowMs: number): Promise<HitResult> {
    if (this.openUntil !== 0) {
      // Open: fail at once; once the cool-down is over, one hit (the probe) goes through.
      if (this.probing || Date.now() < this.openUntil) return Promise.reject(CIRCUIT_OPEN);
      this.probing = true;
    }
    const send = this.inflight === 0 ? this.hitNow : this.hitPipelined;
    this.inflight++;
    return send(key, windowMs).then(this.answered, this.failed);
  }

  /** Consecutive failed hits; past CIRCUIT_FAILURES the circuit opens. */
  private failures = 0;
  /** Date.now() until which the circuit is open; 0 when closed. */
  private openUntil = 0;
  private probing = false;

  // Integer replies arrive as numbers; arrow properties so the hot path allocates no closures.
  private readonly answered = (reply: [number, number]): HitResult => {
    this.inflight--;
    if (this.openUntil !== 0) this.log.info({ host: this.cfg.host, port: this.cfg.port }, 'rate limit: redis answers again; circuit closed');
    this.failures = 0;
    this.openUntil = 0;
    this.probing = false;
    return { count: reply[0], ttlMs: reply[1] };
  };
  private readonly failed = (err: unknown): never => {
    this.inflight--;
    this.probing = false;
    if (++this.failures >= CIRCUIT_FAILURES) {
      if (this.openUntil === 0) this.log.warn({ host: this.cfg.host, port: this.cfg.port, err }, `rate limit: redis failed ${this.failures} times in a row; not calling it for ${CIRCUIT_OPEN_MS} ms at a time until it answers`);
      this.openUntil = Date.now() + CIRCUIT_OPEN_MS;
    }
    throw err;
  };

  async deleteKeys(keys: readonly string[]): Promise<number> {
    let n = 0;
    for (let i = 0; i < keys.length; i += CHUNK) n += await this.client.unlink(...keys.slice(i, i + CHUNK));
    return n;
  }

  async deleteByPrefix(prefix: string, accept: (rest: string) => boolean): Promise<number> {
    const found = new Set<string>();
    let cursor = '0';
    do {
      const [next, keys] = await this.client.scan(cursor, 'MATCH', `${escapeGlob(prefix)}*`, 'COUNT', 1000);
      cursor = next;
      for (const k of keys) if (accept(k.slice(prefix.length))) found.add(k);
    } while (cursor !== '0'); // SCAN always completes a full pass
    return this.deleteKeys([...found]);
  }

  async close(): Promise<void> {
    try {
      if (this.client.status === 'ready') await this.client.quit();
      else this.client.disconnect();
    } catch {
      this.client.disconnect();
    }
  }
}

/** Escape Redis glob metacharacters so a route pattern matches literally. */
export function escapeGlob(s: string): string {
  return s.replace(/[*?[\]\\]/g, '\\$&');
}
