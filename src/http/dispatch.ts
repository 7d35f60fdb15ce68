import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { ClientIpResolver } from './client-ip.js';
import type { ComponentInstance } from './component.js';
import type { RequestContext } from './context.js';
import { HttpError, toHttpError } from './errors.js';
import { discardBody } from './body-budget.js';
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

/**
 * A path that WHATWG URL parsing leaves as it is: only unreserved, sub-delim, `:`, `@` and `/`
 * characters (nothing it percent-encodes or decodes, no backslash, no `%`), not starting with
 * `//` (an authority), no `.` or `..` segment.
 */
const PLAIN_PATH = /^\/(?!\/)[A-Za-z0-9\-._~!$&'()*+,;=:@/]*$/;
const DOT_SEGMENT = /\/\.\.?(?:\/|$)/;

/** The pathname of a request target without building a URL, when that is safe; else undefined. */
export function plainPathname(target: string): string | undefined {
  const q = target.indexOf('?');
  const path = q < 0 ? target : target.slice(0, q);
  return PLAIN_PATH.test(path) && !DOT_SEGMENT.test(path) ? path : undefined;
}

/**
 * The per-request context; the URL is parsed and a request id drawn on first use (most requests
 * only need the path, and only the gateway's routes and error logs read the id).
 */
class Context implements RequestContext {
  params: Record<string, string> = {};
  routePattern = '';
  state: Record<string, unknown> = {};
  rawBody?: Buffer;
  private parsed?: URL;
  private id?: string;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly clientIp: string,
    readonly viaSocket: boolean,
    readonly listener: string,
    readonly log: Logger,
    readonly path: string | undefined,
  ) {}

  /** X-Request-Id when the client sent a usable one, else a random UUID (the same on every read). */
  get requestId(): string {
    if (this.id === undefined) {
      const given = this.req.headers['x-request-id'];
      this.id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    }
    return this.id;
  }

  get url(): URL {
    return (this.parsed ??= parseTarget(this.req.url ?? '/'));
  }

  get query(): URLSearchParams {
    return this.url.searchParams;
  }
}

/**
 * The request target as a URL. An origin-form target (`/path?q`) is a path even when it starts with
 * `//` (`//%00` is not a scheme-relative URL with host `%00`); a target no URL can be made of is the
 * client's mistake: 400.
 */
function parseTarget(target: string): URL {
  try {
    return target.startsWith('/') ? new URL(`http://localhost${target}`) : new URL(target, 'http://localhost');
  } catch {
    throw new HttpError(400, 'malformed request target', { code: 'bad_request' });
  }
}

/** The URL's pathname, from the plain fast path when the target allows it. */
export function pathnameOf(ctx: RequestContext): string {
  return ctx.path ?? ctx.url.pathname;
}

export function makeContext(req: IncomingMessage, res: ServerResponse, opts: DispatchOptions): RequestContext {
  const target = req.url ?? '/';
  const ctx = new Context(
    req,
    res,
    opts.viaSocket ? '' : opts.ips().resolve(req),
    opts.viaSocket,
    opts.listener,
    opts.log,
    plainPathname(target),
  );
  return ctx;
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/**
 * An answer given while the request body is still coming (refused, or never read) waits until the
 * rest is read and thrown away: answering and closing while the client is still sending makes the
 * kernel reset the connection, and the client loses the answer (a 413 used to arrive as a reset).
 * discardBody bounds the wait (bytes and time) and cuts the connection past it.
 */
function answerAfterBody(req: IncomingMessage, res: ServerResponse): void {
  const end = res.end;
  res.end = function (this: ServerResponse, ...args: unknown[]) {
    if (req.complete || !req.readable || answered.has(this)) return end.apply(this, args as Parameters<typeof end>);
    answered.add(this);
    void discardBody(req).then(() => end.apply(this, args as Parameters<typeof end>));
    return this;
  } as typeof res.end;
}

/** Answers given, waiting for the rest of their request body before they go out (answerAfterBody). */
const answered = new WeakSet<ServerResponse>();

/** The handler answered (or its answer is waiting for the body to be read). */
function hasAnswered(res: ServerResponse): boolean {
  return res.headersSent || res.writableEnded || answered.has(res);
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
    if (hasBody(req)) answerAfterBody(req, res);
    component = opts.target(req);
    ctx = makeContext(req, res, opts);
    if (component.before && component.before(ctx) === false) return;
    const path = pathnameOf(ctx);
    const m = component.router.match(req.method ?? 'GET', path);
    if (m.kind === 'not-found') throw new HttpError(404, `path ${path} was not found`, { code: 'not_found' });
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
    if (!hasAnswered(res)) {
      // A handler that returned without answering is a bug; never leave the client hanging.
      throw new Error(`handler for ${route.method} ${route.pattern} sent no response`);
    }
  } catch (e) {
    const own = component?.toHttpError?.(e);
    const err = own ?? toHttpError(e);
    // A bug (anything but an HttpError or the component's own error) is logged with its stack. An
    // answer a handler chose (a 4xx for the client's mistake, a 502/503 for an upstream or a component
    // that is down) is not a failure of ctl: 5xx ones are logged as a one-line warning, 4xx ones not at all.
    if (!own && !(e instanceof HttpError)) (ctx?.log ?? opts.log).error({ err: e, url: req.url }, 'request failed');
    else if (err.status >= 500) (ctx?.log ?? opts.log).warn({ status: err.status, reason: err.message, url: req.url }, 'request answered with an error');
    if (hasAnswered(res)) {
      if (!res.writableEnded && !answered.has(res)) res.destroy();
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
