import type { LabeledCounts } from '../http/metrics.js';
import type { Logger } from 'pino';
import { normalizeIp, type ClientIpResolver } from '../http/client-ip.js';
import type { RequestContext } from '../http/context.js';
import type { RouteGuard } from '../http/dispatch.js';
import { sendJson } from '../http/respond.js';
import type { Route } from '../http/router.js';
import type { CounterStore, HitResult } from './adapter.js';
import { clientBucket } from './key.js';
import type { Policy } from './policy.js';
import type { ThrottledLog } from './throttled-log.js';

/** The exact body of every blocked answer, on every API (the seed's). */
export const BLOCKED_BODY = Object.freeze({ message: 'Too Many Requests' });

/** Everything a guard reads per request; the limiter swaps it as a whole on reload. */
export interface GuardState {
  store: CounterStore;
  /** Resolver for rate_limit.yaml's trusted-proxies, or null when none are configured. */
  proxies: ClientIpResolver | null;
  ipv6Prefix: number;
  policyFor(server: string, route: Route): Policy | null;
  storeErrors: ThrottledLog;
  log: Logger;
  /** Hits by server, route and result (allowed, blocked), for /metrics; kept across reloads. */
  tally: LabeledCounts;
}

/**
 * The RouteGuard: counts the hit and either lets the request on (with `X-RateLimit-Limit`) or
 * answers 429 itself and returns false, so the handler and component middleware never run.
 * `serverOf` names the server a route belongs to (fixed per listener, or looked up by route).
 */
export function makeGuard(current: () => GuardState, serverOf: (route: Route) => string | undefined): RouteGuard {
  return (ctx, route) => {
    const st = current();
    const server = serverOf(route);
    if (server === undefined) return true;
    const policy = st.policyFor(server, route);
    if (!policy) return true;
    const key = policy.keyPrefix + clientBucket(clientAddress(ctx, st.proxies), st.ipv6Prefix);
    let result: HitResult | Promise<HitResult>;
    try {
      result = st.store.hit(key, policy.windowMs);
    } catch (e) {
      return storeFailed(ctx, policy, st, e);
    }
    if (result instanceof Promise) {
      return result.then(
        (r) => decide(ctx, policy, r, st),
        (e: unknown) => storeFailed(ctx, policy, st, e),
      );
    }
    return decide(ctx, policy, result, st);
  };
}

/**
 * The client address a counter belongs to: the socket peer as the kit resolved it, or, when the
 * peer is one of rate_limit.yaml's trusted proxies, the address it forwards. '' (unresolvable,
 * e.g. the unix socket) becomes the `0.0.0.0` bucket.
 */
export function clientAddress(ctx: RequestContext, proxies: ClientIpResolver | null): string {
  if (ctx.viaSocket) return '';
  if (proxies) {
    const peer = normalizeIp(ctx.req.socket?.remoteAddress ?? '');
    if (proxies.isTrusted(peer)) return proxies.resolve(ctx.req);
  }
  return ctx.clientIp;
}

function decide(ctx: RequestContext, policy: Policy, r: HitResult, st: GuardState): boolean {
  st.storeErrors.success();
  if (r.count <= policy.limit) {
    ctx.res.setHeader('X-RateLimit-Limit', policy.limit);
    st.tally.add({ server: policy.server, route: `${policy.method} ${policy.pattern}`, result: 'allowed' });
    return true;
  }
  st.tally.add({ server: policy.server, route: `${policy.method} ${policy.pattern}`, result: 'blocked' });
  block(ctx, policy, r.ttlMs);
  return false;
}

function storeFailed(ctx: RequestContext, policy: Policy, st: GuardState, err: unknown): boolean {
  st.storeErrors.failure(err, { adapter: st.store.name });
  if (st.store.onStoreError === 'allow') {
    ctx.res.setHeader('X-RateLimit-Limit', policy.limit);
    return true;
  }
  block(ctx, policy, 0);
  return false;
}

/** 429 with the seed's body and headers; Retry-After falls back to the interval when the store cannot tell. */
function block(ctx: RequestContext, policy: Policy, ttlMs: number): void {
  const left = Math.ceil(ttlMs / 1000);
  const retryAfter = left > 0 ? left : Math.max(1, Math.ceil(policy.interval));
  ctx.log.debug({ route: `${policy.method} ${policy.pattern}`, server: policy.server, retryAfter }, 'rate limited');
  sendJson(ctx.res, 429, BLOCKED_BODY, {
    'X-RateLimit-Limit': policy.limit,
    'X-RateLimit-Remaining': 0,
    'Retry-After': retryAfter,
  });
}
