import type { Logger } from 'pino';
import { Egress } from '../egress/index.js';
import { systemClock, type Clock } from '../http/clock.js';
import type { RouteGuard } from '../http/dispatch.js';
import type { Route } from '../http/router.js';
import { Limiter, type RateLimitStatusRow, type ResetFilter } from './limiter.js';

export type { RateLimitStatusRow, ResetFilter } from './limiter.js';
export { RateLimitException } from './errors.js';
export { CONFIG_FILE, parseConfig, loadConfig, type RateLimitConfig } from './config.js';
export { BLOCKED_BODY } from './guard.js';

export interface RateLimiter {
  /** The kit's RouteGuard (src/http/dispatch.ts) bound to a server name: runs before component middleware on routes
      whose Route has rateLimitDecl; answers 429 itself and returns false when blocked. */
  guardFor(server: string): RouteGuard;
  /** The same guard for listeners that serve several servers (the control socket): the server is
      found from the Route object, which must have been passed to register(). */
  readonly guard: RouteGuard;
  /** Validate every declared route of every server at start-up (both > 0 is already enforced by Route.rateLimit). */
  register(server: string, routes: readonly Route[]): void;
  /** SIGHUP: re-read DIR/rate_limit.yaml; a bad file keeps the old config and throws. */
  reload(): Promise<void>;
  /** Every declared route with effective limit/interval/source(code|file|off) and adapter. */
  status(): RateLimitStatusRow[];
  /** Hits by server, route and result (allowed, blocked) since start. */
  readonly tally: { values(): [Record<string, string>, number][] };
  /** Counters cleared; a bad filter throws HttpError 400, an unknown route 404. */
  reset(filter: ResetFilter): Promise<number>;
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  stateDir: string;
  log: Logger;
  clock?: Clock;
  /** Outbound policy for the Redis connection (the daemon's); a default loopback-aware one otherwise. */
  egress?: Egress;
}

/**
 * Read DIR/rate_limit.yaml (defaults when absent) and open the configured adapter. Fails with
 * ``Rate limit adapter `X` is not supported.`` for an unknown adapter, or with the file's problem.
 */
export async function createRateLimiter(opts: RateLimiterOptions): Promise<RateLimiter> {
  const ownEgress = opts.egress ? undefined : new Egress();
  const limiter = await Limiter.create(opts.stateDir, opts.log, opts.clock ?? systemClock, opts.egress ?? ownEgress!).catch(
    async (e: unknown) => {
      await ownEgress?.close();
      throw e;
    },
  );
  if (!ownEgress) return limiter;
  const close = limiter.close.bind(limiter);
  limiter.close = async () => {
    await close();
    await ownEgress.close();
  };
  return limiter;
}
