import { afterEach, describe, expect, it } from 'vitest';
import type { RequestContext } from '../../src/http/context.js';
import { Router } from '../../src/http/router.js';
import { createRateLimiter, type RateLimiter } from '../../src/ratelimit/index.js';
import { silentLog, tempStateDir } from './harness.js';

/** A RequestContext good enough for calling a guard directly. */
function fakeCtx(ip = '192.0.2.1'): RequestContext & { sent: { status?: number; headers: Record<string, unknown>; body?: string } } {
  const sent: { status?: number; headers: Record<string, unknown>; body?: string } = { headers: {} };
  const res = {
    headersSent: false,
    writableEnded: false,
    statusCode: 200,
    setHeader(k: string, v: unknown) {
      sent.headers[k.toLowerCase()] = v;
    },
    hasHeader(k: string) {
      return k.toLowerCase() in sent.headers;
    },
    writeHead(status: number, headers: Record<string, unknown> = {}) {
      this.statusCode = status;
      for (const [k, v] of Object.entries(headers)) this.setHeader(k, v);
      return this;
    },
    end(body?: string) {
      sent.status = this.statusCode;
      sent.body = body;
      this.headersSent = true;
      this.writableEnded = true;
    },
  };
  return {
    req: { socket: { remoteAddress: ip }, headers: {} },
    res,
    params: {},
    url: new URL('http://x/'),
    query: new URLSearchParams(),
    routePattern: '',
    requestId: 'r',
    clientIp: ip,
    viaSocket: false,
    listener: 'srv',
    log: silentLog,
    state: {},
    sent,
  } as unknown as RequestContext & { sent: typeof sent };
}

describe('limiter: registration, reload, status', () => {
  let t: ReturnType<typeof tempStateDir>;
  let limiter: RateLimiter | undefined;
  afterEach(async () => {
    await limiter?.close();
    limiter = undefined;
    t?.cleanup();
  });

  /** A limiter on `t` with one route limited to 1 hit a minute, registered on server `srv`. */
  async function limitedRoute() {
    limiter = await createRateLimiter({ stateDir: t.dir, log: silentLog });
    const r = new Router();
    const route = r.get('/a', () => undefined).rateLimit(1, 60);
    limiter.register('srv', r.routes());
    return route;
  }

  it('starts with defaults when rate_limit.yaml is absent (file adapter, ratelimit.db in the state dir)', async () => {
    t = tempStateDir();
    limiter = await createRateLimiter({ stateDir: t.dir, log: silentLog });
    const r = new Router();
    r.get('/a', () => undefined).rateLimit(2, 5);
    limiter.register('srv', r.routes());
    expect(limiter.status()).toEqual([
      { server: 'srv', method: 'GET', route: '/a', limit: 2, interval: 5, source: 'code', declared: { limit: 2, interval: 5 }, adapter: 'file' },
    ]);
    const { existsSync } = await import('node:fs');
    expect(existsSync(`${t.dir}/ratelimit.db`)).toBe(true);
  });

  it('refuses a declaration that is not > 0 at registration (start-up fails clearly)', async () => {
    t = tempStateDir();
    limiter = await createRateLimiter({ stateDir: t.dir, log: silentLog });
    const r = new Router();
    expect(() => r.get('/bad', () => undefined).rateLimit(0, 10)).toThrow(/must be > 0/);
    r.get('/sneaky', () => undefined).rateLimitDecl = { limit: 5, interval: -1 };
    expect(() => limiter!.register('srv', r.routes())).toThrow('srv: GET /sneaky: rate limit interval must be > 0');
    const r2 = new Router();
    r2.get('/frac', () => undefined).rateLimitDecl = { limit: 1.5, interval: 1 };
    expect(() => limiter!.register('srv', r2.routes())).toThrow(/integer > 0/);
  });

  it('guards by route identity on shared listeners (limiter.guard), and per server with guardFor', async () => {
    t = tempStateDir();
    limiter = await createRateLimiter({ stateDir: t.dir, log: silentLog });
    const a = new Router();
    const b = new Router();
    const ra = a.get('/same', () => undefined).rateLimit(1, 60);
    const rb = b.get('/same', () => undefined).rateLimit(1, 60);
    limiter.register('a', a.routes());
    limiter.register('b', b.routes());
    expect(await limiter.guard(fakeCtx(), ra)).toBe(true);
    // Same pattern, method and client on another server: its own counter.
    expect(await limiter.guard(fakeCtx(), rb)).toBe(true);
    const blocked = fakeCtx();
    expect(await limiter.guard(blocked, ra)).toBe(false);
    expect(blocked.sent.status).toBe(429);
    expect(blocked.sent.body).toBe('{"message":"Too Many Requests"}');
    expect(await limiter.guardFor('b')(fakeCtx(), rb)).toBe(false);
    // A listener that names another server (the control socket says 'unix') still counts the route under its own server.
    expect(await limiter.guardFor('unix')(fakeCtx(), rb)).toBe(false);
    expect(await limiter.reset({ server: 'b' })).toBe(1);
    expect(await limiter.guardFor('unix')(fakeCtx(), rb)).toBe(true);
    // An unregistered route counts under the listener's name.
    const loose = new Router().get('/loose', () => undefined).rateLimit(1, 60);
    expect(await limiter.guardFor('x')(fakeCtx(), loose)).toBe(true);
    expect(await limiter.guardFor('y')(fakeCtx(), loose)).toBe(true);
    expect(await limiter.guardFor('x')(fakeCtx(), loose)).toBe(false);
  });

  it('an unknown adapter on reload throws the original message and keeps the running one', async () => {
    t = tempStateDir('default: file\n');
    const route = await limitedRoute();
    expect(await limiter.guardFor('srv')(fakeCtx(), route)).toBe(true);
    t.write('default: dynamo\n');
    await expect(limiter.reload()).rejects.toThrow('Rate limit adapter `dynamo` is not supported.');
    expect(await limiter.guardFor('srv')(fakeCtx(), route)).toBe(false);
    expect(limiter.status()[0]!.adapter).toBe('file');
  });

  it('moves to a new counter file when the path changes on reload', async () => {
    t = tempStateDir('file: {path: one.db}\n');
    const route = await limitedRoute();
    expect(await limiter.guardFor('srv')(fakeCtx(), route)).toBe(true);
    expect(await limiter.guardFor('srv')(fakeCtx(), route)).toBe(false);
    t.write('file: {path: sub/two.db}\n');
    await limiter.reload();
    expect(await limiter.guardFor('srv')(fakeCtx(), route)).toBe(true);
  });

  it('keeps its locked counter file when a reload changes only the prefix (new keys, no lock wait)', async () => {
    t = tempStateDir('file: {path: one.db, prefix: a}\n');
    const route = await limitedRoute();
    expect(await limiter.guardFor('srv')(fakeCtx(), route)).toBe(true);
    expect(await limiter.guardFor('srv')(fakeCtx(), route)).toBe(false);
    t.write('file: {path: one.db, prefix: b}\n');
    await limiter.reload();
    expect(await limiter.guardFor('srv')(fakeCtx(), route)).toBe(true); // a fresh counter under b:
    expect(await limiter.guardFor('srv')(fakeCtx(), route)).toBe(false);
    t.write('file: {path: one.db, prefix: a}\n');
    await limiter.reload();
    expect(await limiter.guardFor('srv')(fakeCtx(), route)).toBe(false); // a:'s window is still on
  });

  it('a file entry for a method-less route applies to every method; one naming the method wins', async () => {
    t = tempStateDir(
      'routes:\n  - {server: srv, route: /m, limit: 7, interval: 9}\n  - {server: srv, method: DELETE, route: /m, limit: 0}\n',
    );
    limiter = await createRateLimiter({ stateDir: t.dir, log: silentLog });
    const r = new Router();
    r.get('/m', () => undefined);
    r.post('/m', () => undefined);
    r.delete('/m', () => undefined).rateLimit(1, 1);
    limiter.register('srv', r.routes());
    expect(limiter.status().map((s) => [s.method, s.limit, s.source])).toEqual([
      ['GET', 7, 'file'],
      ['POST', 7, 'file'],
      ['DELETE', 0, 'off'],
    ]);
    expect(r.routes().map((x) => x.rateLimitDecl)).toEqual([
      { limit: 7, interval: 9 },
      { limit: 7, interval: 9 },
      { limit: 1, interval: 1 },
    ]);
  });

  it('blocks when the counters cannot be written (state failure), with Retry-After = interval', async () => {
    t = tempStateDir();
    limiter = await createRateLimiter({ stateDir: t.dir, log: silentLog });
    const r = new Router();
    const route = r.get('/a', () => undefined).rateLimit(3, 11);
    limiter.register('srv', r.routes());
    const ctx0 = fakeCtx();
    expect(await limiter.guardFor('srv')(ctx0, route)).toBe(true);
    // The hit journal's file descriptor goes bad under the running limiter (as on an I/O error).
    const { closeSync, readdirSync, readlinkSync } = await import('node:fs');
    const fd = readdirSync('/proc/self/fd').find((n) => {
      try {
        return readlinkSync(`/proc/self/fd/${n}`) === `${t.dir}/ratelimit.db-hits`;
      } catch {
        return false;
      }
    });
    expect(fd).toBeDefined();
    closeSync(Number(fd));
    const ctx = fakeCtx();
    expect(await limiter.guardFor('srv')(ctx, route)).toBe(false);
    expect(ctx.sent.status).toBe(429);
    expect(ctx.sent.headers['retry-after']).toBe(11);
  });
});
