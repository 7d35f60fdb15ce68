import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { ClientIpResolver, createDispatcher, HttpError, plainPathname, readJson, Router, sendJson, type ComponentInstance, type RouteGuard } from '../../src/http/index.js';
import { compile, assertValid } from '../../src/http/schema.js';
import { Type } from '@sinclair/typebox';

const Body = compile(Type.Object({ name: Type.String({ minLength: 1 }), n: Type.Optional(Type.Integer()) }));

describe('dispatcher + body + schema', () => {
  let server: http.Server;
  let base: string;
  const seen: string[] = [];
  let guardAnswer = true;

  beforeAll(async () => {
    const router = new Router();
    router.post('/echo', async (ctx) => {
      const body = assertValid(Body, await readJson(ctx, { limit: 64 }));
      sendJson(ctx.res, 200, { body, ip: ctx.clientIp, id: ctx.requestId, again: ctx.requestId });
    });
    router.get('/boom', () => {
      throw new Error('secret internals');
    });
    router.get('/teapot', () => {
      throw new HttpError(418, 'short and stout', { headers: { 'X-Why': 'tea' } });
    });
    router.get('/limited', (ctx) => sendJson(ctx.res, 200, { ok: true })).rateLimit(1, 60);
    router.get('/silent', () => undefined);
    router.use(async (ctx, _route, next) => {
      seen.push(ctx.url.pathname);
      await next();
    });
    const component: ComponentInstance = {
      router,
      renderError: (ctx, err) => sendJson(ctx.res, err.status, { oops: err.message }),
    };
    const guard: RouteGuard = (ctx) => {
      if (guardAnswer) return true;
      sendJson(ctx.res, 429, { message: 'Too Many Requests' });
      return false;
    };
    server = http.createServer(
      createDispatcher({ target: () => component, listener: 't', viaSocket: false, ips: () => new ClientIpResolver(['127.0.0.0/8']), guard: () => guard, log: pino({ level: 'silent' }) }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('parses, validates and answers', async () => {
    const r = await fetch(`${base}/echo`, { method: 'POST', body: JSON.stringify({ name: 'x' }), headers: { 'content-type': 'application/json', 'x-request-id': 'abc-1' } });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ body: { name: 'x' }, ip: '127.0.0.1', id: 'abc-1', again: 'abc-1' });
  });

  it('draws a request id when none usable was sent, the same on every read', async () => {
    for (const headers of [{}, { 'x-request-id': 'not usable!' }]) {
      const r = await fetch(`${base}/echo`, { method: 'POST', body: JSON.stringify({ name: 'x' }), headers: { 'content-type': 'application/json', ...headers } });
      const j = await r.json();
      expect(j.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(j.again).toBe(j.id);
    }
  });

  it('rejects schema violations, bad JSON, wrong types and oversize bodies with 4xx', async () => {
    const post = (body: string, type = 'application/json') => fetch(`${base}/echo`, { method: 'POST', body, headers: { 'content-type': type } });
    let r = await post(JSON.stringify({ name: '' }));
    expect(r.status).toBe(400);
    expect((await r.json()).oops).toMatch(/body\/name must NOT have fewer than 1 characters/);
    r = await post(JSON.stringify({ n: 1 }));
    expect((await r.json()).oops).toBe('body/name is required');
    r = await post('{"name":');
    expect(r.status).toBe(400);
    expect((await r.json()).oops).toMatch(/invalid JSON/);
    r = await post('name=x', 'text/plain');
    expect(r.status).toBe(415);
    r = await post(JSON.stringify({ name: 'x'.repeat(200) }));
    expect(r.status).toBe(413);
  });

  it('turns unknown errors into 500 without leaking a crash, and keeps HttpError headers', async () => {
    const r = await fetch(`${base}/boom`);
    expect(r.status).toBe(500);
    const t = await fetch(`${base}/teapot`);
    expect(t.status).toBe(418);
    expect(t.headers.get('x-why')).toBe('tea');
  });

  it('404 and 405 go through the component renderer', async () => {
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    const r = await fetch(`${base}/echo`);
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
  });

  it('the guard runs before middleware on rate-limited routes and can answer', async () => {
    seen.length = 0;
    guardAnswer = false;
    const r = await fetch(`${base}/limited`);
    expect(r.status).toBe(429);
    expect(seen).toEqual([]);
    guardAnswer = true;
    expect((await fetch(`${base}/limited`)).status).toBe(200);
    expect(seen).toEqual(['/limited']);
  });

  it('a handler that sends nothing still gets an answer', async () => {
    expect((await fetch(`${base}/silent`)).status).toBe(500);
  });

  it('believes X-Forwarded-For only from trusted proxies', () => {
    const resolver = new ClientIpResolver(['10.0.0.0/8']);
    const req = (peer: string, xff?: string) =>
      ({ socket: { remoteAddress: peer }, headers: xff ? { 'x-forwarded-for': xff } : {} }) as unknown as http.IncomingMessage;
    expect(resolver.resolve(req('203.0.113.9', '1.2.3.4'))).toBe('203.0.113.9');
    expect(resolver.resolve(req('10.1.1.1', '1.2.3.4, 10.2.2.2'))).toBe('1.2.3.4');
    expect(resolver.resolve(req('::ffff:10.1.1.1', '6.6.6.6, 1.2.3.4'))).toBe('1.2.3.4');
    expect(resolver.resolve(req('::ffff:127.0.0.1'))).toBe('127.0.0.1');
    expect(() => new ClientIpResolver(['nonsense'])).toThrow(/invalid CIDR/);
  });
});

describe('plain request targets', () => {
  it('give the pathname URL parsing gives, or defer to it', () => {
    const targets = ['/api/v2/alerts', '/api/v2/alerts?filter=a%3D%22b%22', '/x//y', '/a:b@c/d', "/!$&'()*+,;=", '/a/./b', '/a/../b', '/a/%2e%2e/b', '//host/x', '/a b', '/a\\b', '/é', '/a#frag', '/.well-known/x', '/a/.', '/a/..', '*', ''];
    for (const t of targets) {
      const fast = plainPathname(t);
      if (fast !== undefined) expect(fast, t).toBe(new URL(t, 'http://localhost').pathname);
    }
    expect(plainPathname('/api/v2/alerts?x=1')).toBe('/api/v2/alerts');
    expect(plainPathname('/a/../b')).toBeUndefined();
    expect(plainPathname('//host/x')).toBeUndefined();
  });
});
