import { afterEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import net from 'node:net';
import { Listener } from '../../src/daemon/listener.js';
import { DEFAULT_CONNECTION_LIMITS, parseConnectionLimits, type ConnectionLimits } from '../../src/daemon/connection-limits.js';

const open: Listener[] = [];
afterEach(async () => {
  for (const l of open.splice(0)) await l.close(0);
});

/** A listener whose handler reads the body, then streams `chunks` answers 200 ms apart. */
async function listen(limits: Partial<ConnectionLimits>, chunks = 1): Promise<number> {
  const l = await Listener.tcp(
    't',
    '127.0.0.1',
    0,
    '127.0.0.1:0',
    {
      request: (req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          let n = 0;
          const tick = () => {
            res.write('x');
            if (++n >= chunks) res.end();
            else setTimeout(tick, 200);
          };
          tick();
        });
      },
      upgrade: (_r, s) => s.destroy(),
    },
    null,
    { ...DEFAULT_CONNECTION_LIMITS, ...limits },
  );
  open.push(l);
  return Number(l.boundAddress.split(':')[1]);
}

/** Open a raw connection, write `first`, then `drip` every `everyMs`; resolve with what came back and when it closed. */
function trickle(port: number, first: string, drip: string, everyMs: number, maxMs = 5000): Promise<{ reply: string; closedAfterMs: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const s = net.connect(port, '127.0.0.1');
    let reply = '';
    let timer: NodeJS.Timeout | undefined;
    s.on('connect', () => {
      s.write(first);
      timer = setInterval(() => s.writable && s.write(drip), everyMs);
    });
    s.on('data', (d) => (reply += d.toString()));
    s.on('error', () => undefined);
    const done = () => {
      clearInterval(timer);
      clearTimeout(guard);
      resolve({ reply, closedAfterMs: Date.now() - t0 });
    };
    s.on('close', done);
    const guard = setTimeout(() => s.destroy(), maxMs);
  });
}

describe('listener limits', () => {
  it('reads durations and counts from ctl.yaml, refusing bad values by key', () => {
    expect(parseConnectionLimits({ 'header-timeout': '2s', 'max-connections-per-ip': 3 }, 'servers.x')).toMatchObject({ headerTimeoutMs: 2000, maxConnectionsPerIp: 3, bodyTimeoutMs: 60_000 });
    expect(() => parseConnectionLimits({ 'idle-timeout': 'soon' }, 'servers.x')).toThrow(/servers\.x\.idle-timeout/);
    expect(() => parseConnectionLimits({ 'max-connections': -1 }, 'servers.x')).toThrow(/servers\.x\.max-connections/);
  });

  it('a client that trickles its headers gets 408 and a full close at header-timeout', async () => {
    const port = await listen({ headerTimeoutMs: 400 });
    const r = await trickle(port, 'GET / HTTP/1.1\r\nHost: x\r\n', 'X-Slow: 1\r\n', 100);
    expect(r.reply).toMatch(/^HTTP\/1\.1 408 /);
    expect(r.closedAfterMs).toBeLessThan(2500);
  });

  it('a body that trickles gets 408 and a close at header-timeout + body-timeout', async () => {
    const port = await listen({ headerTimeoutMs: 300, bodyTimeoutMs: 300 });
    const r = await trickle(port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n', 'a', 100);
    expect(r.reply).toMatch(/^HTTP\/1\.1 408 /);
    expect(r.closedAfterMs).toBeLessThan(3000);
  });

  it('an answer that streams longer than every timeout is not cut', async () => {
    const port = await listen({ headerTimeoutMs: 200, bodyTimeoutMs: 200, idleTimeoutMs: 200 }, 6);
    const body = await new Promise<string>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/', agent: false }, (res) => {
        let b = '';
        res.on('data', (d) => (b += d));
        res.on('end', () => resolve(b));
        res.on('error', reject);
      }).on('error', reject);
    });
    expect(body).toBe('xxxxxx');
  });

  it('an idle keep-alive connection is closed after idle-timeout', async () => {
    const port = await listen({ idleTimeoutMs: 300 });
    const r = await trickle(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', '', 60_000);
    expect(r.reply).toMatch(/^HTTP\/1\.1 200 /);
    expect(r.closedAfterMs).toBeLessThan(2000);
  });

  it('connections past max-connections-per-ip get 503 and a close; the others keep working', async () => {
    const port = await listen({ maxConnectionsPerIp: 3, headerTimeoutMs: 5000 });
    const held = await Promise.all(
      Array.from({ length: 3 }, () => new Promise<net.Socket>((r) => { const s = net.connect(port, '127.0.0.1', () => r(s)); s.on('error', () => undefined); })),
    );
    const refused = await trickle(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', '', 60_000);
    expect(refused.reply).toMatch(/^HTTP\/1\.1 503 /);
    // The held ones still get answers.
    const answered = await new Promise<string>((resolve) => {
      let b = '';
      held[0]!.on('data', (d) => {
        b += d.toString();
        if (b.includes('\r\n\r\n')) resolve(b);
      });
      held[0]!.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    expect(answered).toMatch(/^HTTP\/1\.1 200 /);
    for (const s of held) s.destroy();
    // Once they are gone, the address may connect again.
    await new Promise((r) => setTimeout(r, 100));
    const again = await trickle(port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', '', 60_000);
    expect(again.reply).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('connections past max-connections get 503', async () => {
    const port = await listen({ maxConnections: 2, maxConnectionsPerIp: 0 });
    const held = await Promise.all(
      Array.from({ length: 2 }, () => new Promise<net.Socket>((r) => { const s = net.connect(port, '127.0.0.1', () => r(s)); s.on('error', () => undefined); })),
    );
    const refused = await trickle(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', '', 60_000);
    expect(refused.reply).toMatch(/^HTTP\/1\.1 503 /);
    for (const s of held) s.destroy();
  });
});
