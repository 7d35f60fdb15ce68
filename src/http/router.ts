import FindMyWay from 'find-my-way';
import type { HTTPMethod } from 'find-my-way';
import type { RequestContext } from './context.js';

export type Handler = (ctx: RequestContext) => unknown | Promise<unknown>;

/** Component middleware: runs after the route matched and after the rate limiter, before the handler. */
export type Middleware = (ctx: RequestContext, route: Route, next: () => Promise<void>) => Promise<void>;

export interface RateLimitDecl {
  /** Hits allowed per window. */
  limit: number;
  /** Window length in seconds. */
  interval: number;
}

/** A declared route. `rateLimit()` chains after the definition, as in the seed's Route::rateLimit. */
export class Route {
  rateLimitDecl?: RateLimitDecl;
  /** Free-form flags for component middleware (e.g. `public: true` to skip auth). */
  readonly meta: Record<string, unknown> = {};

  constructor(
    readonly method: string,
    readonly pattern: string,
    readonly handler: Handler,
  ) {}

  /** Limit this route to `limit` hits per `interval` seconds per client IP. Both must be > 0. */
  rateLimit(limit: number, interval: number): this {
    if (!Number.isInteger(limit) || limit <= 0 || !(interval > 0)) {
      throw new Error(`rateLimit(${limit}, ${interval}) on ${this.method} ${this.pattern}: limit and interval must be > 0`);
    }
    this.rateLimitDecl = { limit, interval };
    return this;
  }

  /** Attach a flag read by component middleware. */
  tag(key: string, value: unknown = true): this {
    this.meta[key] = value;
    return this;
  }
}

export interface RouterOptions {
  /** Treat `/x/` as `/x` (Alertmanager does; microcluster does not). Default false. */
  ignoreTrailingSlash?: boolean;
  /** Answer HEAD for GET routes. Default false (several anchors answer 405 to HEAD). */
  headForGet?: boolean;
  maxParamLength?: number;
}

export type Match =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Path router for one component, on find-my-way. */
export class Router {
  private readonly fmw;
  private readonly list: Route[] = [];
  readonly middleware: Middleware[] = [];

  constructor(private readonly opts: RouterOptions = {}) {
    this.fmw = FindMyWay({
      ignoreTrailingSlash: opts.ignoreTrailingSlash ?? false,
      maxParamLength: opts.maxParamLength ?? 500,
      caseSensitive: true,
    });
  }

  on(method: string | string[], pattern: string, handler: Handler): Route {
    const methods = Array.isArray(method) ? method : [method];
    let first: Route | undefined;
    for (const m of methods) {
      const route = new Route(m.toUpperCase(), pattern, handler);
      this.fmw.on(route.method as HTTPMethod, pattern, () => undefined, route);
      if (this.opts.headForGet && route.method === 'GET' && !this.fmw.hasRoute('HEAD', pattern)) {
        this.fmw.on('HEAD', pattern, () => undefined, route);
      }
      this.list.push(route);
      first ??= route;
    }
    return first!;
  }

  get(p: string, h: Handler): Route {
    return this.on('GET', p, h);
  }
  post(p: string, h: Handler): Route {
    return this.on('POST', p, h);
  }
  put(p: string, h: Handler): Route {
    return this.on('PUT', p, h);
  }
  patch(p: string, h: Handler): Route {
    return this.on('PATCH', p, h);
  }
  delete(p: string, h: Handler): Route {
    return this.on('DELETE', p, h);
  }

  /** Add component middleware (auth and the like). */
  use(mw: Middleware): this {
    this.middleware.push(mw);
    return this;
  }

  /** Every declared route (for `ctl ratelimit status` and the OpenAPI document). */
  routes(): readonly Route[] {
    return this.list;
  }

  match(method: string, path: string): Match {
    const found = this.fmw.find(method.toUpperCase() as HTTPMethod, path);
    if (found) {
      const params: Record<string, string> = {};
      for (const [k, v] of Object.entries(found.params)) if (v !== undefined) params[k] = v;
      return { kind: 'found', route: found.store as Route, params };
    }
    const allowed = ALL_METHODS.filter((m) => m !== method && this.fmw.find(m, path) !== null);
    if (allowed.length > 0) return { kind: 'method-not-allowed', allowed };
    return { kind: 'not-found' };
  }
}
