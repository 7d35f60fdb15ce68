/**
 * The web consoles: a component mounts one on its router with `mountConsole`. It serves an HTML
 * shell at `base` (and the extra paths given) and the console's esbuild bundle
 * (`dist/console/<name>.js` and `.css`, built by scripts/bundle.mjs from src/console/<name>/main.tsx)
 * from memory under `<base>/assets/`, with content-hashed names served as immutable, gzip when the
 * client takes it, and a strict Content-Security-Policy: everything from the page's own origin, no
 * inline script or style, no framing.
 *
 * The files are read on the first request (a daemon whose console nobody opens keeps nothing in
 * memory); a missing bundle answers 404 saying how to build it, and is looked for again on the next
 * request.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { ServerResponse } from 'node:http';
import type { RequestContext } from './context.js';
import type { Route, Router } from './router.js';

/** The policy every console page and asset is served with. */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

export interface ConsoleOptions {
  /** The bundle's name: src/console/<name>/main.tsx, built to dist/console/<name>.js. */
  name: string;
  /** Path of the page: '' or '/' for the root, else e.g. '/dashboard' (no trailing slash). */
  base?: string;
  /** Page title. */
  title: string;
  /**
   * More paths answering with the shell (find-my-way patterns, e.g. '/dashboard/*' for a console
   * that routes on the path rather than on the hash).
   */
  paths?: string[];
  /** `<meta name="ctl-KEY" content="VALUE">` in the shell, for the page to read (no inline script). */
  meta?: Record<string, string>;
  /** Directory holding <name>.js/.css; default: dist/console found from this module upwards. */
  dir?: string;
  /** Called with each route declared, e.g. to tag it for the component's auth middleware. */
  onRoute?: (route: Route) => void;
}

/** Where the bundles may be, relative to an ancestor of this module (tsc output, the bundle's chunks). */
const PLACES = ['console', join('dist', 'console')];

/** dist/console, found upwards from this module; undefined when no build made one. */
export function consoleDir(name: string): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    for (const place of PLACES) {
      const d = join(dir, place);
      if (existsSync(join(d, `${name}.js`))) return d;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return undefined;
}

interface Asset {
  body: Buffer;
  gzip?: Buffer;
  type: string;
  etag: string;
  /** Content-hashed name: cached for a year as immutable. */
  immutable: boolean;
}

interface Loaded {
  shell: Asset;
  assets: Map<string, Asset>;
}

function hash(body: Buffer | string): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 16);
}

function asset(body: Buffer, type: string, immutable: boolean): Asset {
  const gz = body.length > 1024 ? gzipSync(body, { level: 9 }) : undefined;
  return { body, gzip: gz && gz.length < body.length ? gz : undefined, type, etag: `"${hash(body)}"`, immutable };
}

const FAVICON = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#3b6fd4"/>' +
    '<path d="M4 11V5h2l2 3 2-3h2v6h-2V8l-2 3-2-3v3z" fill="#fff"/></svg>',
);

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function load(opts: ConsoleOptions, base: string): Loaded | string {
  const dir = opts.dir ?? consoleDir(opts.name);
  const jsFile = dir && join(dir, `${opts.name}.js`);
  if (!jsFile || !existsSync(jsFile)) {
    return `The ${opts.name} web console is not built (dist/console/${opts.name}.js is missing): run npm run build.\n`;
  }
  const assets = new Map<string, Asset>();
  const js = readFileSync(jsFile);
  const jsName = `${opts.name}-${hash(js)}.js`;
  assets.set(jsName, asset(js, 'text/javascript; charset=utf-8', true));
  let cssName: string | undefined;
  const cssFile = join(dir, `${opts.name}.css`);
  if (existsSync(cssFile)) {
    const css = readFileSync(cssFile);
    cssName = `${opts.name}-${hash(css)}.css`;
    assets.set(cssName, asset(css, 'text/css; charset=utf-8', true));
  }
  const iconName = `favicon-${hash(FAVICON)}.svg`;
  assets.set(iconName, asset(FAVICON, 'image/svg+xml', true));
  // At the root, relative links: the page also works behind a proxy that serves it under a prefix.
  const at = base === '' ? 'assets/' : `${base}/assets/`;
  const meta = { base, ...opts.meta };
  const html =
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    '<meta name="color-scheme" content="light dark">' +
    Object.entries(meta)
      .map(([k, v]) => `<meta name="ctl-${escapeHtml(k)}" content="${escapeHtml(v)}">`)
      .join('') +
    `<title>${escapeHtml(opts.title)}</title>` +
    `<link rel="icon" href="${at}${iconName}">` +
    (cssName ? `<link rel="stylesheet" href="${at}${cssName}">` : '') +
    `<script type="module" src="${at}${jsName}"></script>` +
    '</head><body><div id="app"></div>' +
    '<noscript>This console needs JavaScript.</noscript></body></html>\n';
  return { shell: asset(Buffer.from(html), 'text/html; charset=utf-8', false), assets };
}

function acceptsGzip(ctx: RequestContext): boolean {
  const ae = ctx.req.headers['accept-encoding'];
  return typeof ae === 'string' && /\bgzip\b(?!;q=0(?:\.0*)?(?:,|$))/.test(ae);
}

function send(ctx: RequestContext, a: Asset): void {
  const res: ServerResponse = ctx.res;
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
  res.setHeader('Cache-Control', a.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  res.setHeader('ETag', a.etag);
  if (a.gzip) res.setHeader('Vary', 'Accept-Encoding');
  const inm = ctx.req.headers['if-none-match'];
  if (typeof inm === 'string' && inm.split(/\s*,\s*/).some((t) => t === a.etag || t === `W/${a.etag}` || t === '*')) {
    res.statusCode = 304;
    res.end();
    return;
  }
  const gz = a.gzip && acceptsGzip(ctx);
  const body = gz ? a.gzip! : a.body;
  res.statusCode = 200;
  res.setHeader('Content-Type', a.type);
  if (gz) res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Content-Length', body.length);
  res.end(ctx.req.method === 'HEAD' ? undefined : body);
}

function missing(ctx: RequestContext, why: string): void {
  const res = ctx.res;
  res.statusCode = 404;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Length', Buffer.byteLength(why));
  res.end(ctx.req.method === 'HEAD' ? undefined : why);
}

/**
 * Declare the console's routes on `router`: GET/HEAD `base` (and `base/` and `opts.paths`) answer
 * the shell, GET/HEAD `base/assets/:file` the bundle's files.
 */
export function mountConsole(router: Router, opts: ConsoleOptions): void {
  const base = (opts.base ?? '').replace(/\/+$/, '');
  let loaded: Loaded | undefined;
  const get = (): Loaded | string => {
    if (loaded) return loaded;
    const l = load(opts, base);
    if (typeof l !== 'string') loaded = l;
    return l;
  };
  const shell = (ctx: RequestContext) => {
    const l = get();
    if (typeof l === 'string') return missing(ctx, l);
    send(ctx, l.shell);
  };
  const addRoute = (path: string, h: (ctx: RequestContext) => void) => {
    for (const m of ['GET', 'HEAD']) {
      try {
        const route = router.on(m, path, h);
        opts.onRoute?.(route);
      } catch (e) {
        // `base` and `base/` are one route on a router that ignores trailing slashes, and a
        // router with headForGet declared HEAD with GET.
        if (!/already declared/i.test((e as Error).message)) throw e;
      }
    }
  };
  const shellPaths = new Set([base === '' ? '/' : base, ...(base === '' ? [] : [`${base}/`]), ...(opts.paths ?? [])]);
  for (const p of shellPaths) addRoute(p, shell);
  addRoute(`${base}/assets/:file`, (ctx) => {
    const l = get();
    if (typeof l === 'string') return missing(ctx, l);
    const a = l.assets.get(ctx.params.file ?? '');
    if (!a) return missing(ctx, '404 page not found\n');
    send(ctx, a);
  });
}
