import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/http/clock.js';
import { LOCK_RETRY_MS } from '../../src/ratelimit/file-adapter.js';
import { redisYaml, send, startHarness, statusCounts, tempStateDir, type Harness } from './harness.js';
import { REDIS_SERVER, REDIS_SKIP_REASON, RedisServer, sleep } from '../helpers/redis-server.js';

if (!REDIS_SERVER) console.warn(REDIS_SKIP_REASON);

/**
 * Every rule of the limiter over real HTTP, once per adapter: the kit's dispatcher, a Router with
 * declared limits, a real store (SQLite file / a private redis-server).
 */
const adapters = [
  { name: 'file', yaml: (extra = '') => `default: file\n${extra}`, skip: false },
  { name: 'redis', yaml: (extra = '') => redisYaml(redis!.port, extra), skip: !REDIS_SERVER },
] as const;

let redis: RedisServer | undefined;
beforeAll(async () => {
  if (REDIS_SERVER) redis = await RedisServer.start();
});
afterAll(async () => {
  await redis?.stop();
});

for (const adapter of adapters) {
  describe.skipIf(adapter.skip)(`route limiter over HTTP (${adapter.name} adapter)`, () => {
    let t: ReturnType<typeof tempStateDir>;
    let h: Harness;
    const clock = new ManualClock();

    async function start(extraYaml = '', declare?: Parameters<typeof startHarness>[1]) {
      t = tempStateDir(adapter.yaml(extraYaml));
      h = await startHarness(
        t.dir,
        declare ??
          ((r, handler) => {
            r.get('/limited', handler('GET /limited')).rateLimit(3, 60);
            r.post('/limited', handler('POST /limited')).rateLimit(3, 60);
            r.get('/posts/:id', handler('GET /posts/:id')).rateLimit(2, 60);
            r.get('/free', handler('GET /free'));
            r.get('/short', handler('GET /short')).rateLimit(1, 0.3);
          }),
        { clock },
      );
      // A fresh, unique prefix per test so Redis counters of other tests never interfere.
      await h.limiter.reset({});
    }
    afterEach(async () => {
      await h?.close();
      t?.cleanup();
    });

    it('lets requests up to the limit through with X-RateLimit-Limit only, then answers 429 itself', async () => {
      await start();
      for (let i = 0; i < 3; i++) {
        const r = await send(h, 'GET', '/limited');
        expect(r.status).toBe(200);
        expect(r.headers['x-ratelimit-limit']).toBe('3');
        expect(r.headers['x-ratelimit-remaining']).toBeUndefined();
        expect(r.headers['retry-after']).toBeUndefined();
      }
      const blocked = await send(h, 'GET', '/limited');
      expect(blocked.status).toBe(429);
      expect(blocked.body).toBe('{"message":"Too Many Requests"}');
      expect(blocked.headers['content-type']).toBe('application/json');
      expect(blocked.headers['x-ratelimit-limit']).toBe('3');
      expect(blocked.headers['x-ratelimit-remaining']).toBe('0');
      const retry = Number(blocked.headers['retry-after']);
      expect(retry).toBeGreaterThanOrEqual(59);
      expect(retry).toBeLessThanOrEqual(60);
      // The blocked request reached neither the component middleware nor the handler.
      expect(h.calls.get('GET /limited')).toBe(3);
      expect(h.middlewareRuns.n).toBe(3);
    });

    it('counts blocked hits too and keeps blocking until the window ends', async () => {
      await start();
      const replies = [];
      for (let i = 0; i < 6; i++) replies.push(await send(h, 'GET', '/posts/1'));
      expect(replies.map((r) => r.status)).toEqual([200, 200, 429, 429, 429, 429]);
    });

    it('keys by method: GET /x and POST /x count apart', async () => {
      await start();
      for (let i = 0; i < 3; i++) expect((await send(h, 'GET', '/limited')).status).toBe(200);
      expect((await send(h, 'GET', '/limited')).status).toBe(429);
      expect((await send(h, 'POST', '/limited')).status).toBe(200);
    });

    it('keys by route pattern: /posts/1 and /posts/2 are one bucket', async () => {
      await start();
      expect((await send(h, 'GET', '/posts/1')).status).toBe(200);
      expect((await send(h, 'GET', '/posts/2')).status).toBe(200);
      expect((await send(h, 'GET', '/posts/3')).status).toBe(429);
    });

    it('keys by client IP: another loopback address has its own bucket', async () => {
      await start();
      for (let i = 0; i < 3; i++) await send(h, 'GET', '/limited');
      expect((await send(h, 'GET', '/limited')).status).toBe(429);
      const other = await send(h, 'GET', '/limited', { from: '127.0.0.2' });
      expect(other.status).toBe(200);
      expect(JSON.parse(other.body).ip).toBe('127.0.0.2');
    });

    it('leaves undeclared routes alone (no header, never limited)', async () => {
      await start();
      for (let i = 0; i < 10; i++) {
        const r = await send(h, 'GET', '/free');
        expect(r.status).toBe(200);
        expect(r.headers['x-ratelimit-limit']).toBeUndefined();
      }
    });

    it('puts every unix-socket client in the 0.0.0.0 bucket', async () => {
      await start();
      const sock = { socketPath: h.socketPath };
      for (let i = 0; i < 3; i++) expect((await send(sock, 'GET', '/limited')).status).toBe(200);
      expect((await send(sock, 'GET', '/limited')).status).toBe(429);
      expect((await send(h, 'GET', '/limited')).status).toBe(200); // TCP 127.0.0.1 is another bucket
      expect(await h.limiter.reset({ ip: '0.0.0.0' })).toBe(1);
      expect((await send(sock, 'GET', '/limited')).status).toBe(200);
    });

    it('ignores X-Forwarded-For / X-Real-IP from peers that are not trusted proxies', async () => {
      await start();
      for (let i = 0; i < 3; i++) {
        const spoof = { 'X-Forwarded-For': `10.9.9.${i}`, 'X-Real-IP': `10.8.8.${i}` };
        expect((await send(h, 'GET', '/limited', { headers: spoof })).status).toBe(200);
      }
      expect((await send(h, 'GET', '/limited', { headers: { 'X-Forwarded-For': '10.9.9.99' } })).status).toBe(429);
    });

    it('believes forwarded headers from trusted proxies, and buckets IPv6 clients by /64', async () => {
      await start('trusted-proxies: [127.0.0.3/32]\n');
      const viaProxy = (client: string, header = 'X-Forwarded-For') => send(h, 'GET', '/limited', { from: '127.0.0.3', headers: { [header]: client } });
      for (let i = 0; i < 3; i++) expect((await viaProxy('198.51.100.7')).status).toBe(200);
      expect((await viaProxy('198.51.100.7')).status).toBe(429);
      expect((await viaProxy('198.51.100.8')).status).toBe(200);
      expect((await viaProxy('198.51.100.8', 'X-Real-IP')).status).toBe(200);
      // The right-most untrusted hop is the client, whatever the client wrote to the left.
      expect((await viaProxy('1.2.3.4, 198.51.100.7')).status).toBe(429);
      // One /64: 2001:db8:0:1::a and ::b share a bucket; another /64 does not.
      for (let i = 0; i < 3; i++) expect((await viaProxy(`2001:db8:0:1::${i + 10}`)).status).toBe(200);
      expect((await viaProxy('2001:db8:0:1:ffff::1')).status).toBe(429);
      expect((await viaProxy('2001:db8:0:2::1')).status).toBe(200);
      // A peer outside the trusted range is still just itself.
      expect((await send(h, 'GET', '/limited', { from: '127.0.0.4', headers: { 'X-Forwarded-For': '198.51.100.9' } })).status).toBe(200);
    });

    it('counts exactly under many concurrent requests', async () => {
      await start('', (r, handler) => {
        r.post('/burst', handler('POST /burst')).rateLimit(100, 60);
      });
      const replies = await Promise.all(Array.from({ length: 300 }, () => send(h, 'POST', '/burst')));
      expect(statusCounts(replies)).toEqual({ 200: 100, 429: 200 });
      expect(h.calls.get('POST /burst')).toBe(100);
    });

    it('opens a new window when the old one ends, with Retry-After counting down', async () => {
      await start();
      if (adapter.name === 'file') {
        for (let i = 0; i < 3; i++) await send(h, 'GET', '/limited');
        clock.advance(25_000);
        const blocked = await send(h, 'GET', '/limited');
        expect(blocked.headers['retry-after']).toBe('35');
        clock.advance(35_000);
        expect((await send(h, 'GET', '/limited')).status).toBe(200);
      } else {
        // Redis keeps the window itself (PEXPIRE): a 0.3 s route shows it without a fake clock.
        expect((await send(h, 'GET', '/short')).status).toBe(200);
        const blocked = await send(h, 'GET', '/short');
        expect(blocked.status).toBe(429);
        expect(blocked.headers['retry-after']).toBe('1');
        await sleep(350);
        expect((await send(h, 'GET', '/short')).status).toBe(200);
      }
    });

    it('applies rate_limit.yaml: change, switch off, and add limits; SIGHUP reload; a bad file keeps the old', async () => {
      await start(
        'routes:\n' +
          '  - {server: srv, method: GET, route: /limited, limit: 1, interval: 30}\n' +
          '  - {server: srv, method: POST, route: /limited, limit: 0}\n' +
          '  - {server: srv, method: GET, route: /free, limit: 2, interval: 10}\n' +
          '  - {server: srv, route: "/posts/{id}", limit: 5, interval: 60}\n' +
          '  - {server: other, route: /nothing, limit: 0}\n',
      );
      expect((await send(h, 'GET', '/limited')).headers['x-ratelimit-limit']).toBe('1');
      expect((await send(h, 'GET', '/limited')).status).toBe(429);
      for (let i = 0; i < 5; i++) {
        const r = await send(h, 'POST', '/limited');
        expect(r.status).toBe(200);
        expect(r.headers['x-ratelimit-limit']).toBeUndefined();
      }
      expect((await send(h, 'GET', '/free')).headers['x-ratelimit-limit']).toBe('2');
      await send(h, 'GET', '/free');
      expect((await send(h, 'GET', '/free')).status).toBe(429);
      expect((await send(h, 'GET', '/posts/9')).headers['x-ratelimit-limit']).toBe('5');

      const rows = h.limiter.status();
      const row = (m: string, p: string) => rows.find((r) => r.method === m && r.route === p);
      expect(row('GET', '/limited')).toEqual({
        server: 'srv', method: 'GET', route: '/limited', limit: 1, interval: 30, source: 'file',
        declared: { limit: 3, interval: 60 }, adapter: adapter.name,
      });
      expect(row('POST', '/limited')).toMatchObject({ limit: 0, interval: 60, source: 'off' });
      expect(row('GET', '/free')).toMatchObject({ limit: 2, interval: 10, source: 'file', declared: null });
      expect(row('GET', '/short')).toMatchObject({ limit: 1, interval: 0.3, source: 'code' });

      // A bad file: reload throws, the running configuration stays.
      t.write('default: file\nroutes: [{server: srv, route: /free, limit: 2}]\n');
      await expect(h.limiter.reload()).rejects.toThrow(/interval is required/);
      expect((await send(h, 'GET', '/free')).status).toBe(429);

      // The file dropped: /free is undeclared again, /limited back to its code limit.
      t.write(adapter.yaml());
      await h.limiter.reload();
      await h.limiter.reset({});
      const free = await send(h, 'GET', '/free');
      expect(free.headers['x-ratelimit-limit']).toBeUndefined();
      expect((await send(h, 'GET', '/limited')).headers['x-ratelimit-limit']).toBe('3');
      expect(h.limiter.status().find((r) => r.route === '/free')).toBeUndefined();
    });

    it('resets counters by route, IP and server', async () => {
      await start();
      for (let i = 0; i < 3; i++) {
        await send(h, 'GET', '/limited');
        await send(h, 'GET', '/limited', { from: '127.0.0.2' });
      }
      await send(h, 'POST', '/limited');
      await send(h, 'GET', '/posts/1');
      expect(await h.limiter.reset({ route: '/limited', ip: '127.0.0.2' })).toBe(1);
      expect((await send(h, 'GET', '/limited', { from: '127.0.0.2' })).status).toBe(200);
      expect((await send(h, 'GET', '/limited')).status).toBe(429);
      expect(await h.limiter.reset({ route: 'GET /limited' })).toBe(2);
      expect((await send(h, 'GET', '/limited')).status).toBe(200);
      expect(await h.limiter.reset({ route: '/posts/{id}', server: 'srv' })).toBe(1);
      expect(await h.limiter.reset({ server: 'elsewhere' })).toBe(0);
      expect(await h.limiter.reset({ server: 'srv' })).toBe(2); // GET /limited (sent again above) + POST /limited
      await expect(h.limiter.reset({ ip: 'nope' })).rejects.toMatchObject({ status: 400 });
      await expect(h.limiter.reset({ route: 'limited' })).rejects.toMatchObject({ status: 400 });
      await expect(h.limiter.reset({ route: '/unknown' })).rejects.toMatchObject({ status: 404 });
    });
  });
}

describe.skipIf(!REDIS_SERVER)('redis adapter outage over HTTP', () => {
  it('blocks (on-store-error: block) or allows (allow) while Redis is down, fast, and recovers after a restart', async () => {
    const own = await RedisServer.start();
    const block = tempStateDir(redisYaml(own.port, '', 'block'));
    const allow = tempStateDir(redisYaml(own.port, '', 'allow'));
    const declare: Parameters<typeof startHarness>[1] = (r, handler) => {
      r.get('/x', handler('GET /x')).rateLimit(5, 42);
    };
    const hb = await startHarness(block.dir, declare);
    const ha = await startHarness(allow.dir, declare);
    try {
      expect((await send(hb, 'GET', '/x')).status).toBe(200);
      await own.stop();
      const started = Date.now();
      const down = await send(hb, 'GET', '/x');
      expect(down.status).toBe(429);
      expect(down.body).toBe('{"message":"Too Many Requests"}');
      expect(down.headers['retry-after']).toBe('42'); // the store cannot tell: the interval
      const open = await send(ha, 'GET', '/x');
      expect(open.status).toBe(200);
      expect(open.headers['x-ratelimit-limit']).toBe('5');
      expect(Date.now() - started).toBeLessThan(1500);
      expect(hb.calls.get('GET /x')).toBe(1);

      await own.start();
      const deadline = Date.now() + 5000;
      let r = await send(hb, 'GET', '/x');
      while (r.status !== 200 && Date.now() < deadline) {
        await sleep(50);
        r = await send(hb, 'GET', '/x');
      }
      expect(r.status).toBe(200);
      // Counting is exact again after the restart.
      const replies = await Promise.all(Array.from({ length: 20 }, () => send(hb, 'GET', '/x')));
      expect(statusCounts(replies)).toEqual({ 200: 4, 429: 16 });
    } finally {
      await hb.close();
      await ha.close();
      block.cleanup();
      allow.cleanup();
      await own.stop();
    }
  });
});

describe('file adapter failure over HTTP', () => {
  it('blocks the hit (429, Retry-After = interval) while another process holds the counter file, and counts once it is free', async () => {
    const t = tempStateDir('default: file\n');
    const Database = (await import('better-sqlite3')).default;
    const other = new Database(`${t.dir}/ratelimit.db`);
    other.exec('BEGIN EXCLUSIVE');
    const h = await startHarness(t.dir, (r, handler) => {
      r.get('/x', handler('GET /x')).rateLimit(5, 17);
    });
    try {
      const r = await send(h, 'GET', '/x');
      expect(r.status).toBe(429);
      expect(r.headers['retry-after']).toBe('17');
      expect(h.calls.get('GET /x') ?? 0).toBe(0);
      other.exec('COMMIT');
      other.close();
      await new Promise((res) => setTimeout(res, LOCK_RETRY_MS + 50));
      expect((await send(h, 'GET', '/x')).status).toBe(200);
      expect(h.calls.get('GET /x')).toBe(1);
    } finally {
      if (other.open) other.close();
      await h.close();
      t.cleanup();
    }
  });
});
