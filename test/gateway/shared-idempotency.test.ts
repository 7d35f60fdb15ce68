/**
 * Idempotency keys across daemons (gateway/cache/redis-idempotency.ts) on a private Redis that freezes
 * (SIGSTOP): a claim made while Redis does not answer fails at once (503 for the client) and is given
 * up by its token, so the client's retry is served as soon as Redis answers again instead of waiting
 * for the stale claim to expire; a claim whose daemon is gone ends with IN_FLIGHT_MS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Egress } from '../../src/egress/index.js';
import { SharedRedis } from '../../src/store/redis.js';
import { IN_FLIGHT_MS, SharedIdempotency } from '../../src/gateway/cache/redis-idempotency.js';
import { REDIS_SERVER, REDIS_SKIP_REASON, RedisServer } from '../helpers/redis-server.js';

describe.skipIf(!REDIS_SERVER)('idempotency claims across daemons while Redis stalls', () => {
  if (!REDIS_SERVER) console.log(REDIS_SKIP_REASON);
  let server: RedisServer;
  const clients: SharedRedis[] = [];
  const connect = async () => {
    const c = await SharedRedis.connect(`redis://${server.host}:${server.port}`, pino({ level: 'silent' }), new Egress({}));
    clients.push(c);
    return c;
  };
  beforeAll(async () => {
    server = await RedisServer.start();
  });
  afterAll(async () => {
    server?.thaw();
    for (const c of clients) await c.close();
    await server?.stop();
  });

  it('a claim made during a freeze does not hold the key: the retry is served once Redis answers', async () => {
    const a = new SharedIdempotency(await connect(), 'a', 5000);
    const b = new SharedIdempotency(await connect(), 'b', 5000);
    server.freeze();
    let thawedAt = 0;
    try {
      const t0 = Date.now();
      await expect(a.claim('key-1', 'body')).rejects.toThrow();
      expect(Date.now() - t0).toBeLessThan(3000); // the client hears 503 within the command timeout
      await new Promise((r) => setTimeout(r, 2500));
    } finally {
      server.thaw();
      thawedAt = Date.now();
    }
    // The retry (sent to another daemon) gets the key, not a wait for a claim nobody holds.
    let claim = await b.claim('key-1', 'body');
    while (claim.kind === 'wait' && Date.now() - thawedAt < IN_FLIGHT_MS) {
      await claim.settled;
      claim = await b.claim('key-1', 'body');
    }
    expect(claim.kind).toBe('leader');
    const waited = Date.now() - thawedAt;
    console.log(`retry served ${waited} ms after Redis answered again`);
    expect(waited).toBeLessThan(1500);
    if (claim.kind === 'leader') await claim.complete(undefined);
  }, 20_000);

  it('a claim whose daemon is gone ends within IN_FLIGHT_MS', async () => {
    const gone = await connect();
    const a = new SharedIdempotency(gone, 'gone', 5000);
    const b = new SharedIdempotency(await connect(), 'b2', 5000);
    expect((await a.claim('key-2', 'body')).kind).toBe('leader');
    await gone.close();
    const t0 = Date.now();
    const claim = await b.claim('key-2', 'body');
    expect(claim.kind).toBe('wait');
    if (claim.kind === 'wait') await claim.settled;
    expect((await b.claim('key-2', 'body')).kind).toBe('leader');
    expect(Date.now() - t0).toBeLessThan(IN_FLIGHT_MS + 1000);
  }, 20_000);
});
