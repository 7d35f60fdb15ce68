/**
 * The shared limit windows (gateway/shared/redis-windows.ts) on a private Redis: slices admit calls
 * without a round trip, three daemons never let a window be overspent by more than the crossing call
 * (also when floating-point sums leave a residue), and idle slices go back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Egress } from '../../src/egress/index.js';
import { SharedRedis } from '../../src/store/redis.js';
import { RedisWindows, type ReserveWindow } from '../../src/gateway/shared/redis-windows.js';
import { REDIS_SERVER, REDIS_SKIP_REASON, RedisServer } from '../helpers/redis-server.js';

describe.skipIf(!REDIS_SERVER)('shared limit windows in Redis', () => {
  if (!REDIS_SERVER) console.log(REDIS_SKIP_REASON);
  let server: RedisServer;
  let redis: SharedRedis;
  const windows: RedisWindows[] = [];

  beforeAll(async () => {
    server = await RedisServer.start();
    redis = await SharedRedis.connect(`redis://${server.host}:${server.port}`, pino({ level: 'silent' }), new Egress({}));
  });
  afterAll(async () => {
    for (const w of windows) await w.close();
    await redis?.close();
    await server?.stop();
  });

  const make = (daemon: string) => {
    const w = new RedisWindows(redis, 'test', daemon);
    windows.push(w);
    return w;
  };
  const win = (key: string, limit: number): ReserveWindow => ({ key, start: 0, end: Date.now() + 86_400_000, limit, seed: () => 0 });
  const scripts = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await redis.client.info('commandstats'))?.[1] ?? 0) + Number(/cmdstat_eval:calls=(\d+)/.exec(await redis.client.info('commandstats'))?.[1] ?? 0);

  it('a slice admits many calls with one round trip', async () => {
    const w = make('one');
    const window = win('ample', 1000);
    const before = await scripts();
    for (let i = 0; i < 20; i++) {
      const r = await w.reserve([window], 1, Date.now());
      expect(r.ok).toBe(true);
    }
    // One grant (a slice of 5 % = 50 calls of 1), nothing else yet.
    expect((await scripts()) - before).toBe(1);
    await Promise.all(Array.from({ length: 20 }, () => w.reconcile([window], 1, 0.5)));
    expect(Number(await redis.client.hget('ctl:gw:test:ample', 'spent'))).toBeCloseTo(10, 9);
  });

  it('three daemons × 50 concurrent calls never overspend a window whose limit is a floating-point sum', async () => {
    const ds = [make('a'), make('b'), make('c')];
    const per = 0.0000075;
    const limit = 40 * per; // 0.00030000000000000003
    const window = win('tight', limit);
    let admitted = 0;
    await Promise.all(
      ds.flatMap((d) =>
        Array.from({ length: 50 }, async () => {
          for (let i = 0; i < 10; i++) {
            const r = await d.reserve([window], 0.0000213, Date.now());
            if (!r.ok) return;
            admitted++;
            await new Promise((res) => setTimeout(res, 5));
            await d.reconcile([window], 0.0000213, per);
          }
        }),
      ),
    );
    expect(admitted * per).toBeLessThanOrEqual(limit + ds.length * per + 1e-12);
    expect(admitted).toBeGreaterThanOrEqual(38);
  });

  it('spending settled while Redis does not answer is kept and sent when it does', async () => {
    const w = make('blip');
    const window = win('blip', 100);
    expect((await w.reserve([window], 1, Date.now())).ok).toBe(true);
    server.freeze();
    const settled = w.reconcile([window], 1, 0.75);
    await new Promise((r) => setTimeout(r, 1500)); // past the command timeout: the first attempt failed
    server.thaw();
    expect(await settled).toEqual([0.75]);
    expect(Number(await redis.client.hget('ctl:gw:test:blip', 'spent'))).toBe(0.75);
  }, 15_000);

  it('a slice nobody uses goes back to the window', async () => {
    const w = make('idle');
    expect((await w.reserve([win('idle', 100)], 1, Date.now())).ok).toBe(true);
    await w.reconcile([win('idle', 100)], 1, 1);
    expect(await redis.client.hget('ctl:gw:test:idle', 'r:idle')).not.toBeNull();
    await new Promise((r) => setTimeout(r, 1500));
    expect(await redis.client.hget('ctl:gw:test:idle', 'r:idle')).toBeNull();
    expect(Number(await redis.client.hget('ctl:gw:test:idle', 'spent'))).toBe(1);
  }, 10_000);
});
