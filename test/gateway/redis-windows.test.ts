/**
 * Limit windows as reservations (gateway/limits/limit-windows.ts, gateway/limits/redis-windows.ts):
 * in-process and on a private Redis, calls arriving together on one daemon or on three never get
 * more than the limit (20 simultaneous $0.10 calls on $1: exactly 10); a reservation Redis ran
 * after the client gave up (Redis frozen) is released by id; an unreleased one expires with its
 * lease; spending settled while Redis does not answer is sent once when it does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Egress } from '../../src/egress/index.js';
import { SharedRedis } from '../../src/store/redis.js';
import { LocalWindows, type LimitWindows, type ReserveWindow } from '../../src/gateway/limits/limit-windows.js';
import { RedisWindows } from '../../src/gateway/limits/redis-windows.js';
import { REDIS_SERVER, REDIS_SKIP_REASON, RedisServer } from '../helpers/redis-server.js';

const win = (key: string, limit: number): ReserveWindow => ({ key, start: 0, end: Date.now() + 86_400_000, limit, seed: () => 0 });
let ids = 0;
const id = () => `call-${++ids}`;

/** 20 calls of $0.10 at once on a $1 window, none settled yet: the admitted ones. */
async function burst(w: LimitWindows, key: string): Promise<number> {
  const window = win(key, 1);
  const r = await Promise.all(Array.from({ length: 20 }, () => w.reserve([window], 0.1, id(), Date.now())));
  return r.filter((x) => x.ok).length;
}

describe('in-process windows', () => {
  it('20 simultaneous $0.10 calls on a $1 window: exactly 10 admitted, and room comes back as they settle', async () => {
    const w = new LocalWindows();
    expect(await burst(w, 'local')).toBe(10);
    // One call settles under its estimate: room for one more, which crosses the limit.
    const window = win('local2', 1);
    const calls = Array.from({ length: 10 }, () => id());
    for (const c of calls) expect((await w.reserve([window], 0.1, c, Date.now())).ok).toBe(true);
    expect((await w.reserve([window], 0.1, id(), Date.now())).ok).toBe(false);
    await w.settle([window], calls[0]!, 0.05);
    expect((await w.reserve([window], 0.1, id(), Date.now())).ok).toBe(true);
    expect((await w.reserve([window], 0.1, id(), Date.now())).ok).toBe(false);
  });
});

describe.skipIf(!REDIS_SERVER)('shared limit windows in Redis', () => {
  if (!REDIS_SERVER) console.log(REDIS_SKIP_REASON);
  let server: RedisServer;
  let redis: SharedRedis;
  const windows: RedisWindows[] = [];
  const clients: SharedRedis[] = [];

  const connect = async () => {
    const c = await SharedRedis.connect(`redis://${server.host}:${server.port}`, pino({ level: 'silent' }), new Egress({}));
    clients.push(c);
    return c;
  };
  beforeAll(async () => {
    server = await RedisServer.start();
    redis = await connect();
  });
  afterAll(async () => {
    for (const w of windows) await w.close();
    for (const c of clients) await c.close();
    await server?.stop();
  });

  const make = (daemon: string, on = redis, o: { leaseMs?: number } = {}) => {
    const w = new RedisWindows(on, 'test', daemon, o);
    windows.push(w);
    return w;
  };
  const reservations = async (key: string) => redis.client.hlen(`ctl:gw:test:${key}:r`);

  it('one daemon, 20 simultaneous $0.10 calls on a $1 window: exactly 10 admitted', async () => {
    expect(await burst(make('one'), 'burst')).toBe(10);
    expect(await reservations('burst')).toBe(10);
  });

  it('three daemons × 50 concurrent calls never spend more than the limit plus the one call that crosses it', async () => {
    const ds = await Promise.all(['a', 'b', 'c'].map(async (d) => make(d, await connect())));
    const per = 0.0000075;
    const limit = 40 * per; // 0.00030000000000000003: a floating-point sum
    const window = win('tight', limit);
    let admitted = 0;
    await Promise.all(
      ds.flatMap((d) =>
        Array.from({ length: 50 }, async () => {
          for (let i = 0; i < 10; i++) {
            const call = id();
            const r = await d.reserve([window], per, call, Date.now());
            if (!r.ok) return;
            admitted++;
            await new Promise((res) => setTimeout(res, 5));
            await d.settle([window], call, per);
          }
        }),
      ),
    );
    expect(admitted).toBe(40);
    expect(Number(await redis.client.hget('ctl:gw:test:tight', 'spent'))).toBeCloseTo(limit, 12);
    expect(await reservations('tight')).toBe(0);
  });

  it('a reservation Redis runs after the client gave up (Redis frozen) is released by id when it answers again', async () => {
    const w = make('frozen');
    const window = win('frozen', 1);
    server.freeze();
    let thawed = false;
    try {
      await expect(w.reserve([window], 0.5, id(), Date.now())).rejects.toThrow();
      await new Promise((r) => setTimeout(r, 2000));
    } finally {
      server.thaw();
      thawed = true;
    }
    expect(thawed).toBe(true);
    // Redis ran the reservation when it woke; the release queued behind it takes it back.
    for (let i = 0; i < 50 && (await reservations('frozen')) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await reservations('frozen')).toBe(0);
    expect(await burst(w, 'frozen')).toBe(10);
  }, 20_000);

  it('a reservation never settled (its daemon gone) stops counting when its lease ends', async () => {
    const gone = await connect();
    const dead = make('dead', gone, { leaseMs: 1000 });
    const alive = make('alive');
    const window = win('lease', 1);
    expect((await dead.reserve([window], 1, id(), Date.now())).ok).toBe(true);
    await gone.close(); // no release, no renewal from now on
    expect((await alive.reserve([window], 0.1, id(), Date.now())).ok).toBe(false);
    await new Promise((r) => setTimeout(r, 1200));
    expect((await alive.reserve([window], 0.1, id(), Date.now())).ok).toBe(true);
  });

  it('leases of calls in flight are renewed: a long call keeps its reservation', async () => {
    const w = make('long', redis, { leaseMs: 600 });
    const window = win('long', 1);
    expect((await w.reserve([window], 1, id(), Date.now())).ok).toBe(true);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await w.reserve([window], 0.1, id(), Date.now())).ok).toBe(false);
  });

  it('spending settled while Redis does not answer is kept and sent once when it does', async () => {
    const w = make('blip');
    const window = win('blip', 100);
    const call = id();
    expect((await w.reserve([window], 1, call, Date.now())).ok).toBe(true);
    server.freeze();
    const settled = w.settle([window], call, 0.75);
    await new Promise((r) => setTimeout(r, 1500)); // past the command timeout: the first attempt failed
    server.thaw();
    expect(await settled).toEqual([0.75]);
    await new Promise((r) => setTimeout(r, 700)); // a copy sent again is not counted twice
    expect(Number(await redis.client.hget('ctl:gw:test:blip', 'spent'))).toBe(0.75);
    expect(await reservations('blip')).toBe(0);
  }, 15_000);
});
