import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { ClientIpResolver } from './client-ip.js';
import type { ComponentInstance } from './component.js';
import type { RequestContext } from './context.js';
import { HttpError, toHttpError } from './errors.js';
import type { Route } from './router.js';

/** Runs before component middleware on rate-limited routes; returns false after answering itself. */
export type RouteGuard = (ctx: RequestContext, route: Route) => boolean | Promise<boolean>;

export interface DispatchOptions {
  /** Which component answers this request (fixed on TCP listeners, Host-routed on the socket). */
  target: (req: IncomingMessage) => ComponentInstance;
  listener: string;
  viaSocket: boolean;
  ips: () => ClientIpResolver;
  guard?: () => RouteGuard | undefined;
  log: Logger;
}

const REQUEST_ID = /^[\w.:@-]{1,128}$/;

export function makeContext(req: IncomingMessage, res: ServerResponse, opts: DispatchOptions): RequestContext {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const given = req.headers['x-request-id'];
  return {
    req,
    res,
    params: {},
    url,
    query: url.searchParams,
    routePattern: '',
    requestId: typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID(),
    clientIp: opts.viaSocket ? '' : opts.ips().resolve(req),
    viaSocket: opts.viaSocket,
    listener: opts.listener,
    log: opts.log,
    state: {},
  };
}

/** The `request` listener for a node:http(s) server. */
export function createDispatcher(opts: DispatchOptions) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    void dispatch(req, res, opts);
  };
}

async function dispatch(req: IncomingMessage, res: ServerResponse, opts: DispatchOptions): Promise<void> {
  let component: ComponentInstance | undefined;
  let ctx: RequestContext | undefined;
  try {
    component = opts.target(req);
    ctx = makeContext(req, res, opts);
    if (component.before && component.before(ctx) === false) return;
    const m = component.router.match(req.method ?? 'GET', ctx.url.pathname);
    if (m.kind === 'not-found') throw new HttpError(404, `path ${ctx.url.pathname} was not found`, { code: 'not_found' });
    if (m.kind === 'method-not-allowed') {
      throw new HttpError(405, `method ${req.method} is not allowed, but [${m.allowed.join(',')}] are`, {
        code: 'method_not_allowed',
        headers: { Allow: m.allowed.join(', ') },
        details: { allowed: m.allowed },
      });
    }
    ctx.params = m.params;
    ctx.routePattern = m.route.pattern;
    const route = m.route;
    if (route.rateLimitDecl) {
      const guard = opts.guard?.();
      if (guard && !(await guard(ctx, route))) return;
    }
    const chain = component.router.middleware;
    const c = ctx;
    let i = 0;
    const next = async (): Promise<void> => {
      const mw = chain[i++];
      if (mw) await mw(c, route, next);
      else await route.handler(c);
    };
    await next();
    if (!res.headersSent && !res.writableEnded) {
      // A handler that returned without answering is a bug; never leave the client hanging.
      throw new Error(`handler for ${route.method} ${route.pattern} sent no response`);
    }
  } catch (e) {
    const err = toHttpError(e);
    if (err.status >= 500) (ctx?.log ?? opts.log).error({ err: e, url: req.url }, 'request failed');
    if (res.headersSent) {
      if (!res.writableEnded) res.destroy();
      return;
    }
    if (err.headers) for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
    if (component && ctx) {
      try {
        component.renderError(ctx, err);
        return;
      } catch (renderErr) {
        opts.log.error({ err: renderErr }, 'error renderer failed');
      }
    }
    if (!res.headersSent) {
      res.statusCode = err.status;
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ error: err.message }));
    }
  }
}

/** The `upgrade` listener: hands WebSocket upgrades to the component, or refuses them. */
export function createUpgradeDispatcher(opts: DispatchOptions) {
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    try {
      const component = opts.target(req);
      if (!component.onUpgrade) {
        socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const ctx = makeContext(req, undefined as unknown as ServerResponse, opts);
      component.onUpgrade(req, socket, head, ctx);
    } catch (e) {
      opts.log.error({ err: e }, 'upgrade failed');
      socket.destroy();
    }
  };
}
