import { describe, expect, it } from 'vitest';
import { Router } from '../../src/http/router.js';

describe('Router', () => {
  const noop = () => undefined;

  it('matches patterns and decodes params', () => {
    const r = new Router();
    r.get('/posts/:id', noop);
    const m = r.match('GET', '/posts/a%20b');
    expect(m.kind).toBe('found');
    if (m.kind === 'found') {
      expect(m.params).toEqual({ id: 'a b' });
      expect(m.route.pattern).toBe('/posts/:id');
    }
  });

  it('tells 405 (with the allowed methods) from 404', () => {
    const r = new Router();
    r.get('/x', noop);
    r.post('/x', noop);
    expect(r.match('PUT', '/x')).toEqual({ kind: 'method-not-allowed', allowed: ['GET', 'POST'] });
    expect(r.match('GET', '/y')).toEqual({ kind: 'not-found' });
  });

  it('keeps trailing slashes distinct unless asked', () => {
    const strict = new Router();
    strict.get('/x', noop);
    expect(strict.match('GET', '/x/').kind).toBe('not-found');
    const lenient = new Router({ ignoreTrailingSlash: true });
    lenient.get('/x', noop);
    expect(lenient.match('GET', '/x/').kind).toBe('found');
  });

  it('answers HEAD for GET only when asked', () => {
    const a = new Router();
    a.get('/x', noop);
    expect(a.match('HEAD', '/x').kind).toBe('method-not-allowed');
    const b = new Router({ headForGet: true });
    b.get('/x', noop);
    expect(b.match('HEAD', '/x').kind).toBe('found');
  });

  it('rateLimit() needs limit and interval > 0', () => {
    const r = new Router();
    expect(() => r.get('/a', noop).rateLimit(0, 60)).toThrow(/must be > 0/);
    expect(() => r.get('/b', noop).rateLimit(5, 0)).toThrow(/must be > 0/);
    expect(() => r.get('/c', noop).rateLimit(-1, 10)).toThrow(/must be > 0/);
    const ok = r.get('/d', noop).rateLimit(5, 60);
    expect(ok.rateLimitDecl).toEqual({ limit: 5, interval: 60 });
    expect(r.routes().map((x) => x.pattern)).toEqual(['/a', '/b', '/c', '/d']);
  });
});
