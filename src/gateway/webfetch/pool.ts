/**
 * The web-fetch pool (seed rules): with no provider named, the configured providers are walked in
 * fixed priority, fill-first; one cooling down after a 429 is skipped; a failure falls through to
 * the next when it is a 429 (always), no answer or a 5xx, or a 402/403 from one of the three
 * quota-style hosted providers (never from the built-in fetcher, whose 403 is the page's own), and
 * never for a plain 400. A pool with nothing left answers one 429 with Retry-After; that includes the
 * built-in fetcher refusing the address after the hosted providers were rate-limited or out of quota (the
 * pool is spent, the request is not bad), while a page's own answer (its 403, 404) still surfaces. A named
 * provider gets no fallback: 429 while it cools down, else its own status.
 */
import { HttpError } from '../../http/errors.js';
import type { FetchProviderId } from './config.js';
import { ApiFailure } from '../providers/api-call.js';
import { RefusedUrlFailure, type FetchedPage } from './providers.js';

const QUOTA_STYLE: ReadonlySet<FetchProviderId> = new Set(['firecrawl', 'jina', 'tavily']);
/** How long a provider that answered 429 without Retry-After is skipped. */
export const DEFAULT_COOLDOWN_MS = 60_000;

export interface PoolAttempt {
  provider: FetchProviderId;
  status: number;
  error?: string;
}

export class FetchPool {
  private readonly until = new Map<FetchProviderId, number>();

  constructor(private readonly now: () => number) {}

  /** Milliseconds until `id` may be tried again (0: now). */
  cooling(id: FetchProviderId): number {
    return Math.max(0, (this.until.get(id) ?? 0) - this.now());
  }

  private coolDown(id: FetchProviderId, ms: number | undefined): void {
    this.until.set(id, this.now() + (ms ?? DEFAULT_COOLDOWN_MS));
  }

  private static fallsThrough(id: FetchProviderId, status: number): boolean {
    if (status === 429 || status === 0 || status >= 500) return true;
    return (status === 402 || status === 403) && QUOTA_STYLE.has(id);
  }

  private static surface(f: ApiFailure): HttpError {
    return new HttpError(f.status === 0 ? 502 : f.status, f.message, { code: f.status === 0 ? 'fetch_failed' : 'fetch_error' });
  }

  private tooMany(message: string, ms: number): HttpError {
    return new HttpError(429, message, { code: 'rate_limited', headers: { 'Retry-After': String(Math.max(1, Math.ceil(ms / 1000))) } });
  }

  async run(order: readonly FetchProviderId[], explicit: FetchProviderId | undefined, call: (id: FetchProviderId) => Promise<FetchedPage>): Promise<{ page: FetchedPage; provider: FetchProviderId; attempts: PoolAttempt[] }> {
    const attempts: PoolAttempt[] = [];
    if (explicit) {
      const wait = this.cooling(explicit);
      if (wait > 0) throw this.tooMany(`web fetch provider ${explicit} is rate-limited`, wait);
      try {
        return { page: await call(explicit), provider: explicit, attempts };
      } catch (e) {
        if (!(e instanceof ApiFailure)) throw e;
        if (e.status === 429) {
          this.coolDown(explicit, e.retryAfterMs);
          throw this.tooMany(`web fetch provider ${explicit} is rate-limited: ${e.message}`, this.cooling(explicit));
        }
        throw FetchPool.surface(e);
      }
    }
    // Whether a provider was skipped or failed for a rate limit or quota on the way.
    let limited = false;
    for (const id of order) {
      if (this.cooling(id) > 0) {
        limited = true;
        continue;
      }
      try {
        return { page: await call(id), provider: id, attempts };
      } catch (e) {
        if (!(e instanceof ApiFailure)) throw e;
        attempts.push({ provider: id, status: e.status, error: e.message });
        if (e.status === 429) this.coolDown(id, e.retryAfterMs);
        if (FetchPool.fallsThrough(id, e.status)) limited ||= e.status === 429 || e.status === 402 || e.status === 403;
        else if (!(limited && e instanceof RefusedUrlFailure)) throw FetchPool.surface(e);
      }
    }
    const waits = order.map((id) => this.cooling(id)).filter((w) => w > 0);
    const tried = attempts.map((a) => `${a.provider} ${a.status || 'no answer'}`).join(', ');
    throw this.tooMany(`every web fetch provider is rate-limited or failed${tried ? ` (${tried})` : ''}`, waits.length > 0 ? Math.min(...waits) : DEFAULT_COOLDOWN_MS);
  }
}
