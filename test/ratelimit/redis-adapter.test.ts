import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Egress } from '../../src/egress/index.js';
import type { RedisAdapterConfig } from '../../src/ratelimit/config.js';
import { COMMAND_TIMEOUT_MS, escapeGlob, RedisCounterStore } from '../../src/ratelimit/redis-adapter.js';
import { Router } from '../../src/http/router.js';
import { createRateLimiter } from '../../src/ratelimit/index.js';
import { silentLog, tempStateDir } from './harness.js';
import { REDIS_SERVER, REDIS_SKIP_REASON, RedisServer, sleep } from '../helpers/redis-server.js';

if (!REDIS_SERVER) console.warn(REDIS_SKIP_REASON);

describe.skipIf(!REDIS_SERVER)('redis adapter (real redis-server)', () => {
  let server: RedisServer;
  let raw: Redis;
  let store: RedisCounterStore;
  const egress = new Egress({ loopbackOnly: true });
  const cfg = (over: Partial<RedisAdapterConfig> = {}): RedisAdapterConfig => ({
    host: '127.0.0.1',
    port: server.port,
    db: 0,
    password: '',
    prefix: 't',
    tls: false,
    onStoreError: 'block',
    ...over,
  });

  beforeAll(async () => {
    server = await RedisServer.start();
    raw = new Redis({ host: '127.0.0.1', port: server.port, lazyConnect: true, maxRetriesPerRequest: 1 });
    await raw.connect();
  });
  afterAll(async () => {
    raw.disconnect();
    await server.stop();
    await egress.close();
  });
  beforeEach(async () => {
    if (raw.status !== 'ready') await new Promise((r) => raw.once('ready', r));
    await raw.flushall();
    store = await RedisCounterStore.open(cfg(), egress, silentLog);
  });
  afterEach(async () => {
    await store.close();
  });

  it('counts every hit and sets the window on the first one, atomically', async () => {
    const a = await store.hit('k', 60_000);
    expect(a.count).toBe(1);
    expect(a.ttlMs).toBe(60_000);
    const b = await store.hit('k', 60_000);
    expect(b.count).toBe(2);
    expect(b.ttlMs).toBeGreaterThan(58_000);
    expect(b.ttlMs).toBeLessThanOrEqual(60_000);
    expect(await raw.pttl('k')).toBeGreaterThan(0);
  });

  it('never leaves a key without expiry: an immortal key left by someone else is healed on its next hit', async () => {
    await raw.set('old', '7');
    expect(await raw.pttl('old')).toBe(-1);
    const r = await store.hit('old', 5000);
    expect(r.count).toBe(8);
    expect(r.ttlMs).toBe(5000);
    expect(await raw.pttl('old')).toBeGreaterThan(0);
  });

  it('does not extend the window on later (blocked) hits, and starts a new one when it ends', async () => {
    await store.hit('w', 300);
    await sleep(150);
    const second = await store.hit('w', 300);
    expect(second.ttlMs).toBeLessThanOrEqual(160);
    await sleep(200);
    expect(await store.hit('w', 300)).toEqual({ count: 1, ttlMs: 300 });
  });

  it('counts exactly under 2000 concurrent hits', async () => {
    const results = await Promise.all(Array.from({ length: 2000 }, () => store.hit('burst', 60_000)));
    const counts = results.map((r) => r.count).sort((x, y) => x - y);
    expect(counts).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1));
    expect(await raw.get('burst')).toBe('2000');
    // The first hit went out alone, the rest were batched; every one was answered.
    expect((store as unknown as { inflight: number }).inflight).toBe(0);
  });

  it('selects the configured db and authenticates with the password', async () => {
    await raw.config('SET', 'requirepass', 's3cret');
    try {
      const authed = await RedisCounterStore.open(cfg({ db: 3, password: 's3cret' }), egress, silentLog);
      try {
        await authed.hit('in-db-3', 1000);
      } finally {
        await authed.close();
      }
      await raw.auth('s3cret');
      await raw.select(3);
      expect(await raw.get('in-db-3')).toBe('1');
      await raw.select(0);
    } finally {
      await raw.config('SET', 'requirepass', '');
    }
  });

  it('deletes exact keys and prefixes (route text matched literally, not as a glob)', async () => {
    await store.hit('t:s:GET:/a*:1.1.1.1', 1000);
    await store.hit('t:s:GET:/ab:1.1.1.1', 1000);
    await store.hit('t:s:GET:/a*:2.2.2.2', 1000);
    expect(await store.deleteByPrefix('t:s:GET:/a*:', () => true)).toBe(2);
    expect(await raw.exists('t:s:GET:/ab:1.1.1.1')).toBe(1);
    expect(await store.deleteKeys(['t:s:GET:/ab:1.1.1.1', 't:none'])).toBe(1);
    expect(escapeGlob('a*b?[c]\\')).toBe('a\\*b\\?\\[c\\]\\\\');
  });

  it('fails fast while Redis is down, and works again after it comes back (restart in the middle)', async () => {
    await store.hit('r', 60_000);
    await server.stop();
    const started = Date.now();
    await expect(store.hit('r', 60_000)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(800);
    // Repeated failures stay fast (no offline queue): ten in a row well under a second each.
    for (let i = 0; i < 10; i++) await expect(store.hit('r', 60_000)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(3000);
    expect((store as unknown as { inflight: number }).inflight).toBe(0);
    await server.start();
    const deadline = Date.now() + 5000;
    while (store.client.status !== 'ready' && Date.now() < deadline) await sleep(25);
    expect(store.client.status).toBe('ready');
    // No persistence: the restarted server starts from zero; the script is loaded again by itself (NOSCRIPT fallback).
    expect((await store.hit('r', 60_000)).count).toBe(1);
    await raw.connect().catch(() => undefined);
  });

  it('a frozen Redis (SIGSTOP): 200 concurrent hits all fail within the command timeout, then the circuit fails them at once; it closes after Redis is back', async () => {
    await store.hit('f', 60_000);
    server.freeze();
    try {
      let started = Date.now();
      const first = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => store.hit(`f${i % 7}`, 60_000)));
      const firstMs = Date.now() - started;
      expect(first.every((r) => r.status === 'rejected')).toBe(true);
      expect(firstMs).toBeLessThan(COMMAND_TIMEOUT_MS + 700);
      started = Date.now();
      const open = await Promise.allSettled(Array.from({ length: 200 }, () => store.hit('f', 60_000)));
      expect(open.every((r) => r.status === 'rejected')).toBe(true);
      expect(Date.now() - started).toBeLessThan(100); // the circuit is open: no call waits on Redis
    } finally {
      server.thaw();
    }
    const deadline = Date.now() + 10_000;
    let ok = false;
    while (!ok && Date.now() < deadline) {
      ok = await store.hit('f', 60_000).then(() => true, () => false);
      if (!ok) await sleep(100);
    }
    expect(ok).toBe(true);
    expect((store as unknown as { inflight: number }).inflight).toBe(0);
  });

  it('a full reset with an empty prefix removes counters only, never other keys of the database', async () => {
    const t = tempStateDir(`default: redis\nredis: {port: ${server.port}, prefix: ""}\n`);
    const limiter = await createRateLimiter({ stateDir: t.dir, log: silentLog });
    try {
      const r = new Router();
      const route = r.get('/a', () => undefined).rateLimit(5, 60);
      limiter.register('srv', r.routes());
      await raw.set('session:abc', 'keep me');
      await raw.set('user:42:name', 'keep me too');
      const ctx = { viaSocket: false, clientIp: '2001:db8::1', req: { socket: {}, headers: {} }, res: { setHeader() {} } };
      expect(await limiter.guardFor('srv')(ctx as never, route)).toBe(true);
      expect(await raw.exists('srv:GET:/a:2001:db8::/64')).toBe(1);
      expect(await limiter.reset({})).toBe(1);
      expect(await raw.get('session:abc')).toBe('keep me');
      expect(await raw.get('user:42:name')).toBe('keep me too');
    } finally {
      await limiter.close();
      t.cleanup();
    }
  });

  it('refuses a non-loopback Redis under loopback-only egress instead of contacting it', async () => {
    const outside = await RedisCounterStore.open(cfg({ host: '203.0.113.9', port: 6379 }), egress, silentLog);
    try {
      await expect(outside.hit('x', 1000)).rejects.toThrow();
      expect(outside.client.status).not.toBe('ready');
    } finally {
      await outside.close();
    }
  });

  it('reaches a public-looking address through the egress address map', async () => {
    const mapped = new Egress({ loopbackOnly: true, addressMap: { '203.0.113.9:6379': `127.0.0.1:${server.port}` } });
    const s = await RedisCounterStore.open(cfg({ host: '203.0.113.9', port: 6379 }), mapped, silentLog);
    try {
      expect((await s.hit('via-map', 1000)).count).toBe(1);
    } finally {
      await s.close();
      await mapped.close();
    }
  });
});
