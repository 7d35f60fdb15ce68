/**
 * Requests per minute per API key (`rpm` on a key): each request the key makes takes one unit of
 * the key's current minute (fixed windows of 60 s, UTC), in one atomic step (limit-windows.ts: in
 * this process, or in Redis for the cluster with storage.redis, so the limit holds across daemons).
 * A minute whose count reached `rpm` refuses with 429 `rate_limit_exceeded` and `Retry-After` (the
 * seconds until the next minute); 503 when Redis cannot be reached.
 */
import { randomUUID } from 'node:crypto';
import { LocalWindows, type LimitWindows } from './limit-windows.js';
import { GatewayError, secondsUntil } from '../errors.js';

const MINUTE = 60_000;

export class KeyRpm {
  private windows: LimitWindows = new LocalWindows();

  /** Count the minutes in Redis from now on (several daemons, one limit). */
  useSharedWindows(w: LimitWindows): void {
    this.windows = w;
  }

  async close(): Promise<void> {
    await this.windows.close();
  }

  /** Take one request of the key's minute, or throw 429 (503 when the shared count cannot be reached). */
  async admit(apiKeyId: string, rpm: number, now: number): Promise<void> {
    const start = Math.floor(now / MINUTE) * MINUTE;
    const window = { key: `${apiKeyId}:${start}`, start, end: start + MINUTE, limit: rpm, seed: () => 0 };
    const id = randomUUID();
    let r;
    try {
      r = await this.windows.reserve([window], 1, id, now);
    } catch (e) {
      throw new GatewayError('unavailable', `the key's request rate cannot be checked: ${(e as Error).message}`, { code: 'storage_unavailable', cause: e });
    }
    if (!r.ok) {
      throw new GatewayError('limited', `rate limit reached for this API key: ${rpm} requests per minute`, {
        code: 'rate_limit_exceeded',
        retryAfterS: secondsUntil(window.end, now),
      });
    }
    // A request counts once admitted, whatever becomes of it.
    void this.windows.settle([window], id, 1).catch(() => {});
  }
}
