/** Alertmanager's HTTP conventions around the handlers: error bodies, CORS, content negotiation, path cleaning. */
import type { RequestContext } from '../../http/context.js';
import type { HttpError } from '../../http/errors.js';
import type { Middleware } from '../../http/router.js';
import { pathnameOf } from '../../http/dispatch.js';
import { checkJsonContentType, frameworkError } from './bodies.js';
import { goJsonString } from './json.js';

const API_PREFIX = '/api/v2/';

/** Render errors: JSON strings for handler errors, `{code,message}` for framework errors, text outside /api/v2. */
export function renderAmError(ctx: RequestContext, err: HttpError): void {
  const res = ctx.res;
  const path = pathnameOf(ctx);
  res.statusCode = err.status;
  if (err.status === 405) {
    const allowed = (err.details as { allowed?: string[] } | undefined)?.allowed ?? [];
    if (path.startsWith(API_PREFIX)) res.setHeader('Allow', allowed.join(','));
    else res.setHeader('Allow', [...allowed, 'OPTIONS'].sort().join(', '));
  }
  let body: string;
  if (!path.startsWith(API_PREFIX)) {
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    body = err.status === 404 ? '404 page not found\n' : err.status === 405 ? 'Method Not Allowed\n' : `${err.message}\n`;
  } else if (err.code === 'am_string' || err.status >= 500) {
    res.setHeader('Content-Type', 'application/json');
    body = goJsonString(err.message) + '\n';
  } else {
    res.setHeader('Content-Type', 'application/json');
    const code = typeof err.code === 'number' ? err.code : err.status;
    body = '{"code":' + code + ',"message":' + goJsonString(err.message) + '}';
  }
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

const PREFLIGHT_METHODS = new Set(['GET', 'POST', 'HEAD']);

/** Paths path.Clean could change: empty, `.` or `..` segments. */
const UNCLEAN = /\/\/|\/\.\.?(?:\/|$)/;

/** Go's path.Clean, used by net/http's mux to redirect unclean paths. */
function cleanPath(p: string): string {
  if (p.startsWith('/') && !UNCLEAN.test(p)) return p;
  const parts: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') parts.pop();
    else parts.push(seg);
  }
  let out = '/' + parts.join('/');
  if (p.endsWith('/') && out !== '/') out += '/';
  return out;
}

/**
 * Runs before routing: 301 for unclean paths and `/api/v2`, CORS as rs/cors does it for the
 * API (`Vary: Origin`, `Access-Control-Allow-Origin: *`, preflight for GET/POST/HEAD only).
 */
export function beforeAm(ctx: RequestContext): boolean {
  const { req, res } = ctx;
  const path = pathnameOf(ctx);
  const cleaned = cleanPath(path);
  if (cleaned !== path || path === '/api/v2') {
    const location = (path === '/api/v2' ? '/api/v2/' : cleaned) + ctx.url.search;
    const body = `<a href="${location.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;')}">Moved Permanently</a>.\n\n`;
    res.statusCode = 301;
    res.setHeader('Location', location);
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(req.method === 'HEAD' ? undefined : body);
    return false;
  }
  if (!path.startsWith(API_PREFIX)) return true;
  res.setHeader('Vary', 'Origin');
  const origin = req.headers.origin;
  if (req.method === 'OPTIONS' && origin && req.headers['access-control-request-method']) {
    res.appendHeader('Vary', 'Access-Control-Request-Method');
    res.appendHeader('Vary', 'Access-Control-Request-Headers');
    const want = String(req.headers['access-control-request-method']).toUpperCase();
    if (PREFLIGHT_METHODS.has(want)) {
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Access-Control-Allow-Methods', want);
    }
    res.statusCode = 200;
    res.setHeader('Content-Length', 0);
    res.end();
    return false;
  }
  if (origin) res.setHeader('Access-Control-Allow-Origin', '*');
  return true;
}

/** Does an Accept header admit application/json? */
export function acceptsJson(accept: string | undefined): boolean {
  if (!accept || accept.trim() === '') return true;
  for (const part of accept.split(',')) {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    if (q && Number(q.slice(2)) === 0) continue;
    if (type === 'application/json' || type === 'application/*' || type === '*/*' || type === '*') return true;
  }
  return false;
}

/** go-openapi's binding order for API routes: request media type (415), then Accept (406). */
export const negotiate: Middleware = async (ctx, route, next) => {
  if (route.pattern.startsWith(API_PREFIX)) {
    if (route.method === 'POST') checkJsonContentType(ctx);
    if (!acceptsJson(ctx.req.headers.accept)) {
      throw frameworkError(406, 406, 'unsupported media type requested, only [application/json] are available');
    }
  }
  await next();
};
