import { LabeledCounts } from '../http/metrics.js';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import { ClientIpResolver } from '../http/client-ip.js';
import type { Clock } from '../http/clock.js';
import type { RouteGuard } from '../http/dispatch.js';
import { HttpError } from '../http/errors.js';
import type { RateLimitDecl, Route } from '../http/router.js';
import type { Egress } from '../egress/index.js';
import type { CounterStore } from './adapter.js';
import { loadConfig, type RateLimitConfig } from './config.js';
import { RateLimitException } from './errors.js';
import { FileCounterStore, fileAdapterPath } from './file-adapter.js';
import { makeGuard, type GuardState } from './guard.js';
import { clientBucket, isBucket, isCounterRest, normalizeMethod, normalizePattern, routeKeyPrefix } from './key.js';
import { effectiveLimit, type LimitSource, type Policy } from './policy.js';
import { ThrottledLog } from './throttled-log.js';

/** One row of `ctl ratelimit status` / `GET /core/1.0/ratelimit`. */
export interface RateLimitStatusRow {
  server: string;
  method: string;
  /** The route pattern as the router knows it (`/posts/:id`). */
  route: string;
  /** Hits allowed per window now (0 when switched off). */
  limit: number;
  /** Window in seconds now (the declared one when switched off). */
  interval: number;
  /** Where the limit comes from: the code's declaration, rate_limit.yaml, or switched off there. */
  source: LimitSource;
  /** The code's declaration, or null for a limit rate_limit.yaml added. */
  declared: RateLimitDecl | null;
  adapter: 'file' | 'redis';
}

export interface ResetFilter {
  route?: string;
  ip?: string;
  server?: string;
}

interface State extends GuardState {
  config: RateLimitConfig;
  /** Per Route object (unique per router); the server is kept to notice a route asked for under another name. */
  cache: Map<Route, { server: string; policy: Policy | null }>;
}

/** Keeps a route's code declaration apart from what the file added to it. */
interface Registered {
  route: Route;
  declared: RateLimitDecl | undefined;
}

const MAX_INTERVAL_S = 366 * 86400;

export class Limiter {
  private state!: State;
  private readonly servers = new Map<string, Registered[]>();
  /** Which server a Route object belongs to (Route objects are unique per router). */
  private readonly serverOfRoute = new WeakMap<Route, string>();
  private readonly declaredOf = new WeakMap<Route, RateLimitDecl | undefined>();
  private readonly guards = new Map<string, RouteGuard>();
  private reloading: Promise<void> = Promise.resolve();
  private closed = false;
  /** Hits by server, route and result, across reloads (GET /metrics of the daemon). */
  readonly tally = new LabeledCounts();

  /** A guard for any registered route: finds the server from the route itself (for shared listeners). */
  readonly guard: RouteGuard = makeGuard(
    () => this.state,
    (route) => this.serverOfRoute.get(route),
  );

  private constructor(
    private readonly stateDir: string,
    private readonly log: Logger,
    private readonly clock: Clock,
    private readonly egress: Egress,
  ) {}

  static async create(stateDir: string, log: Logger, clock: Clock, egress: Egress): Promise<Limiter> {
    const l = new Limiter(stateDir, log, clock, egress);
    l.state = await l.buildState(await loadConfig(stateDir), null);
    return l;
  }

  /**
   * The guard for a listener of `server`. A route passed to register() counts under the server it was
   * registered for, whatever name the listener gives (the control socket serves every server, and
   * two servers may both have `GET /api/x`); `server` names only routes never registered.
   */
  guardFor(server: string): RouteGuard {
    let g = this.guards.get(server);
    if (!g) {
      g = makeGuard(
        () => this.state,
        (route) => this.serverOfRoute.get(route) ?? server,
      );
      this.guards.set(server, g);
    }
    return g;
  }

  register(server: string, routes: readonly Route[]): void {
    const list: Registered[] = [];
    for (const route of routes) {
      // A route registered before may carry a limit the file added; its declaration is the remembered one.
      const declared = this.declaredOf.has(route) ? this.declaredOf.get(route) : route.rateLimitDecl;
      if (declared) checkDeclaration(server, route, declared);
      this.declaredOf.set(route, declared);
      this.serverOfRoute.set(route, server);
      list.push({ route, declared });
    }
    this.servers.set(server, list);
    this.state.cache.clear();
    this.applyToRoutes(this.state);
    this.warnUnmatched(this.state.config, [server]);
  }

  /** SIGHUP: re-read rate_limit.yaml. A bad file throws and the running configuration stays. */
  reload(): Promise<void> {
    const run = this.reloading.then(async () => {
      if (this.closed) return;
      const config = await loadConfig(this.stateDir);
      const next = await this.buildState(config, this.state);
      const old = this.state;
      this.state = next;
      this.applyToRoutes(next);
      this.warnUnmatched(config, [...this.servers.keys()]);
      if (old.store !== next.store) await old.store.close();
      this.log.info({ adapter: next.store.name, routes: config.routes.length }, 'rate limit configuration reloaded');
    });
    this.reloading = run.catch(() => undefined);
    return run;
  }

  status(): RateLimitStatusRow[] {
    const st = this.state;
    const rows: RateLimitStatusRow[] = [];
    for (const [server, list] of this.servers) {
      const seen = new Set<Route>();
      for (const { route, declared } of list) {
        if (seen.has(route)) continue;
        seen.add(route);
        const eff = effectiveLimit(server, route, declared, st.config.routes, st.store.prefix);
        if (eff.source === null) continue;
        rows.push({
          server,
          method: route.method,
          route: route.pattern,
          limit: eff.policy?.limit ?? 0,
          interval: eff.policy?.interval ?? declared?.interval ?? 0,
          source: eff.source,
          declared: declared ? { limit: declared.limit, interval: declared.interval } : null,
          adapter: st.store.name,
        });
      }
    }
    return rows;
  }

  /** Clear counters; every part of the filter narrows. Resolves to the number of live counters removed. */
  async reset(filter: ResetFilter = {}): Promise<number> {
    const store = this.state.store;
    const server = filter.server?.trim() || undefined;
    const ip = filter.ip?.trim() || undefined;
    if (ip !== undefined && isIP(ip) === 0) throw new HttpError(400, `ip: ${ip} is not an IP address`);
    const route = filter.route?.trim() ? parseRouteFilter(filter.route) : undefined;
    if (server !== undefined && /[:\s]/.test(server)) throw new HttpError(400, `server: ${server} is not a server name`);

    if (!route && !ip) {
      const prefix = server ? `${store.prefix}${server}:` : store.prefix;
      return store.deleteByPrefix(prefix, (rest) => isCounterRest(rest, !server));
    }

    // Otherwise the candidates are the registered routes (counters exist only for those).
    const targets: Array<{ server: string; method: string; pattern: string }> = [];
    for (const [name, list] of this.servers) {
      if (server !== undefined && name !== server) continue;
      for (const { route: r } of list) {
        if (route && (normalizePattern(r.pattern) !== route.pattern || (route.method && r.method !== route.method))) continue;
        if (!targets.some((t) => t.server === name && t.method === r.method && t.pattern === r.pattern)) {
          targets.push({ server: name, method: r.method, pattern: r.pattern });
        }
      }
    }
    if (route && targets.length === 0) {
      throw new HttpError(404, `no declared route ${route.method ? route.method + ' ' : ''}${route.pattern}${server ? ` on server ${server}` : ''}`);
    }
    if (ip) {
      const bucket = clientBucket(ip, this.state.ipv6Prefix);
      return store.deleteKeys(targets.map((t) => routeKeyPrefix(store.prefix, t.server, t.method, t.pattern) + bucket));
    }
    let n = 0;
    for (const t of targets) n += await store.deleteByPrefix(routeKeyPrefix(store.prefix, t.server, t.method, t.pattern), isBucket);
    return n;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.reloading;
    await this.state.store.close();
  }

  /** The adapter, resolver and policy cache for a configuration; reuses the running store when its settings did not change. */
  private async buildState(config: RateLimitConfig, prev: State | null): Promise<State> {
    const sameStore =
      prev !== null &&
      prev.config.default === config.default &&
      JSON.stringify(prev.config[config.default]) === JSON.stringify(config[config.default]);
    // The file adapter holds its file locked: the same file keeps its store, whatever the prefix.
    const sameFile =
      !sameStore &&
      prev?.store instanceof FileCounterStore &&
      config.default === 'file' &&
      prev.store.path === fileAdapterPath(config.file, this.stateDir);
    if (sameFile) (prev.store as FileCounterStore).usePrefix(config.file.prefix);
    const store = sameStore || sameFile ? prev!.store : await this.openStore(config);
    const cache: State['cache'] = new Map();
    const state: State = {
      config,
      cache,
      store,
      proxies: config.trustedProxies.length > 0 ? new ClientIpResolver(config.trustedProxies) : null,
      ipv6Prefix: config.ipv6Prefix,
      storeErrors: sameStore || sameFile ? prev!.storeErrors : new ThrottledLog(this.log, `rate limit: ${store.name} adapter`),
      log: this.log,
      tally: this.tally,
      policyFor: (server, route) => {
        const hit = cache.get(route);
        if (hit !== undefined && hit.server === server) return hit.policy;
        const declared = this.declaredOf.has(route) ? this.declaredOf.get(route) : route.rateLimitDecl;
        const policy = effectiveLimit(server, route, declared, config.routes, store.prefix).policy;
        cache.set(route, { server, policy });
        return policy;
      },
    };
    return state;
  }

  private async openStore(config: RateLimitConfig): Promise<CounterStore> {
    switch (config.default) {
      case 'file':
        try {
          return new FileCounterStore(config.file, this.stateDir, this.clock, this.log);
        } catch (e) {
          throw new RateLimitException(`rate limit file adapter: cannot open ${config.file.path}: ${(e as Error).message}`);
        }
      case 'redis': {
        // ioredis is loaded only when the redis adapter is configured (it is a heavy import).
        const { RedisCounterStore } = await import('./redis-adapter.js');
        return RedisCounterStore.open(config.redis, this.egress, this.log);
      }
      default:
        throw RateLimitException.adapterNotSupported(String(config.default));
    }
  }

  /**
   * The dispatcher calls the guard only for routes carrying a declaration, so a limit the file adds
   * to an undeclared route is set on the Route (and taken off again when the file drops it).
   */
  private applyToRoutes(st: State): void {
    for (const [server, list] of this.servers) {
      for (const { route, declared } of list) {
        const eff = effectiveLimit(server, route, declared, st.config.routes, st.store.prefix);
        if (declared) route.rateLimitDecl = declared;
        else if (eff.policy) route.rateLimitDecl = { limit: eff.policy.limit, interval: eff.policy.interval };
        else route.rateLimitDecl = undefined;
      }
    }
  }

  private warnUnmatched(config: RateLimitConfig, servers: readonly string[]): void {
    for (const o of config.routes) {
      if (!servers.includes(o.server)) continue;
      const list = this.servers.get(o.server) ?? [];
      const hit = list.some(({ route }) => normalizePattern(route.pattern) === o.route && (o.method === null || o.method === route.method));
      if (!hit) {
        this.log.warn({ server: o.server, method: o.method, route: o.route }, 'rate_limit.yaml names a route the server does not have; entry ignored');
      }
    }
  }
}

function checkDeclaration(server: string, route: Route, d: RateLimitDecl): void {
  const where = `${server}: ${route.method} ${route.pattern}`;
  if (!Number.isSafeInteger(d.limit) || d.limit <= 0) throw new RateLimitException(`${where}: rate limit must be an integer > 0, not ${d.limit}`);
  if (!Number.isFinite(d.interval) || d.interval <= 0 || d.interval > MAX_INTERVAL_S) {
    throw new RateLimitException(`${where}: rate limit interval must be > 0 and at most ${MAX_INTERVAL_S} seconds, not ${d.interval}`);
  }
}

/** `/posts/{id}`, `/posts/:id` or `POST /posts/:id`. */
function parseRouteFilter(text: string): { method: string | null; pattern: string } {
  const m = /^\s*(?:([A-Za-z]+)\s+)?(\/\S*)\s*$/.exec(text);
  if (!m) throw new HttpError(400, `route: ${text} is not a route pattern (write /path/{param} or METHOD /path/:param)`);
  return { method: m[1] ? normalizeMethod(m[1]) : null, pattern: normalizePattern(m[2]!) };
}
