/**
 * The response cache's shared tier (ctl.yaml storage.redis): an answer one gateway cached is a hit on
 * every gateway. Each daemon keeps its memory and file tiers; a miss there asks Redis, and an answer
 * put here goes to Redis too, with the same time to live. The cache is an optimisation: while Redis is
 * away a lookup is a miss and a put is skipped, never an error. Deleting entries (by filter or all)
 * also scans the shared tier in the background.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { SharedRedis } from '../../store/redis.js';
import type { StoredAnswer } from './answer.js';

const PREFIX = 'ctl:gw:cache:';

export interface SharedEntry {
  namespace: string;
  model: string;
  createdAt: number;
  expiresAt: number;
  answer: StoredAnswer;
}

export class SharedCacheTier {
  constructor(
    private readonly redis: SharedRedis,
    private readonly log: Logger,
  ) {}

  private key(signature: string): string {
    return PREFIX + createHash('sha256').update(signature).digest('hex');
  }

  /** The entry of `signature`, or undefined (also when Redis cannot be asked). */
  async get(signature: string): Promise<SharedEntry | undefined> {
    if (!this.redis.available) return undefined;
    try {
      const v = await this.redis.run((c) => c.get(this.key(signature)));
      return v === null ? undefined : (JSON.parse(v) as SharedEntry);
    } catch {
      return undefined;
    }
  }

  set(signature: string, e: SharedEntry): void {
    const ttl = Math.max(1, e.expiresAt - Date.now());
    if (!this.redis.available) return;
    this.redis.run((c) => c.set(this.key(signature), JSON.stringify(e), 'PX', ttl)).catch(() => {});
  }

  async deleteOne(signature: string): Promise<void> {
    await this.redis.run((c) => c.unlink(this.key(signature))).catch(() => {});
  }

  /** Delete the shared entries `match` picks (all when it is absent), scanning in batches. */
  async delete(match?: (e: SharedEntry) => boolean): Promise<number> {
    let n = 0;
    try {
      await this.redis.run(async (c) => {
        let cursor = '0';
        do {
          const [next, keys] = await c.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 500);
          cursor = next;
          if (keys.length === 0) continue;
          let gone = keys;
          if (match) {
            const values = await c.mget(...keys);
            gone = keys.filter((_, i) => {
              try {
                return values[i] !== null && match(JSON.parse(values[i]!) as SharedEntry);
              } catch {
                return true;
              }
            });
          }
          if (gone.length > 0) n += await c.unlink(...gone);
        } while (cursor !== '0');
      });
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, 'gateway: deleting shared cache entries failed; they expire with their time to live');
    }
    return n;
  }
}
