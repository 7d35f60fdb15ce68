import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, parseConfig } from '../../src/ratelimit/config.js';
import { createRateLimiter, RateLimitException } from '../../src/ratelimit/index.js';
import { silentLog, tempStateDir } from './harness.js';

const ISSUE_EXAMPLE = `
default: file                  # or redis
file: {path: ratelimit.db, prefix: rl}
redis: {host: 127.0.0.1, port: 6379, db: 0, password: "", prefix: rl, tls: false, on-store-error: block}
trusted-proxies: []            # CIDRs whose X-Forwarded-For / X-Real-IP is believed
ipv6-prefix: 64
routes:
  - {server: alertmanager, method: GET, route: /api/v2/status, limit: 100, interval: 60}
  - {server: pipeline, method: POST, route: /api/auth/login, limit: 0}   # 0 switches a declared limit off
`;

describe('rate_limit.yaml', () => {
  it('reads the shape the issue shows', () => {
    const c = parseConfig(ISSUE_EXAMPLE);
    expect(c.default).toBe('file');
    expect(c.file).toEqual({ path: 'ratelimit.db', prefix: 'rl' });
    expect(c.redis).toEqual({ host: '127.0.0.1', port: 6379, db: 0, password: '', prefix: 'rl', tls: false, onStoreError: 'block' });
    expect(c.routes).toEqual([
      { server: 'alertmanager', method: 'GET', route: '/api/v2/status', limit: 100, interval: 60 },
      { server: 'pipeline', method: 'POST', route: '/api/auth/login', limit: 0, interval: null },
    ]);
  });

  it('reads examples/rate_limit.yaml', () => {
    const c = parseConfig(readFileSync(new URL('../../examples/rate_limit.yaml', import.meta.url), 'utf8'));
    expect(c.default).toBe('file');
    expect(c.routes.map((r) => `${r.server} ${r.method} ${r.route} ${r.limit}`)).toEqual([
      'pipeline POST /api/auth/login 5',
      'alertmanager GET /api/v2/status 600',
    ]);
  });

  it('uses the defaults for an empty file and for missing sections', () => {
    expect(parseConfig('')).toEqual(DEFAULT_CONFIG);
    expect(parseConfig('redis: {port: 6380}').redis.port).toBe(6380);
    expect(parseConfig('redis: {port: 6380}').redis.host).toBe('127.0.0.1');
  });

  it('normalises route patterns and methods', () => {
    const c = parseConfig('routes:\n  - {server: s, method: post, route: "/posts/{id}", limit: 3, interval: 10}\n  - {server: s, route: /x, limit: 0}');
    expect(c.routes[0]).toMatchObject({ method: 'POST', route: '/posts/:id' });
    expect(c.routes[1]).toMatchObject({ method: null, route: '/x' });
  });

  it('accepts {param} in block style and empty (null) keys', () => {
    const c = parseConfig('trusted-proxies:\nroutes:\n  - server: s\n    route: /posts/{id}\n    limit: 0\nredis:\n  password:\n');
    expect(c.routes[0]!.route).toBe('/posts/:id');
    expect(c.trustedProxies).toEqual([]);
    expect(c.redis.password).toBe('');
  });

  it('names an unknown adapter with the original message', () => {
    expect(() => parseConfig('default: memcached')).toThrow(new RateLimitException('Rate limit adapter `memcached` is not supported.'));
  });

  it.each([
    ['unknown key', 'defualt: file', /unknown property defualt/],
    ['bad port', 'redis: {port: 70000}', /port/],
    ['bad on-store-error', 'redis: {on-store-error: maybe}', /on-store-error/],
    ['limit without interval', 'routes: [{server: s, route: /x, limit: 5}]', /interval is required/],
    ['negative limit', 'routes: [{server: s, route: /x, limit: -1, interval: 5}]', /limit/],
    ['zero interval', 'routes: [{server: s, route: /x, limit: 1, interval: 0}]', /interval/],
    ['route without slash', 'routes: [{server: s, route: x, limit: 1, interval: 1}]', /route/],
    ['duplicate entry', 'routes: [{server: s, route: /x, limit: 0}, {server: s, route: /x, limit: 0}]', /duplicate/],
    ['bad CIDR', 'trusted-proxies: [10.0.0.0/33]', /trusted-proxies/],
    ['ipv6-prefix out of range', 'ipv6-prefix: 0', /ipv6-prefix/],
    ['YAML syntax', 'routes: [', /rate_limit.yaml/],
    ['not a mapping', '- a', /mapping/],
  ])('rejects %s with a clear message', (_name, text, message) => {
    expect(() => parseConfig(text)).toThrow(message);
  });

  it('fails start-up for an unknown adapter, naming it', async () => {
    const t = tempStateDir('default: mongo\n');
    try {
      await expect(createRateLimiter({ stateDir: t.dir, log: silentLog })).rejects.toThrow('Rate limit adapter `mongo` is not supported.');
    } finally {
      t.cleanup();
    }
  });

  it('fails start-up for a malformed file', async () => {
    const t = tempStateDir('routes: [{server: s, route: /x, limit: 2}]\n');
    try {
      await expect(createRateLimiter({ stateDir: t.dir, log: silentLog })).rejects.toThrow(/interval is required/);
    } finally {
      t.cleanup();
    }
  });
});
