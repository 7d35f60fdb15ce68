import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import pino from 'pino';
import { Router } from '../../src/http/router.js';
import { createDispatcher } from '../../src/http/dispatch.js';
import { ClientIpResolver } from '../../src/http/client-ip.js';
import { readBody } from '../../src/http/body.js';
import { sendJson } from '../../src/http/respond.js';
import { DEFAULT_BODY_BUDGET, bodyBytesHeld, setBodyBudget } from '../../src/http/body-budget.js';
import type { ComponentInstance } from '../../src/http/component.js';

let server: Server | undefined;
afterEach(async () => {
  setBodyBudget(DEFAULT_BODY_BUDGET);
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

/** A server whose one route reads the body (limit 1 MiB), waits `holdMs`, and answers its size. */
async function serve(holdMs = 0): Promise<number> {
  const router = new Router();
  router.post('/body', async (ctx) => {
    const b = await readBody(ctx, 1 << 20);
    await new Promise((r) => setTimeout(r, holdMs));
    sendJson(ctx.res, 200, { size: b.length });
  });
  const instance: ComponentInstance = { router, renderError: (ctx, err) => sendJson(ctx.res, err.status, { error: err.message }, err.headers) };
  server = createServer(createDispatcher({ target: () => instance, listener: 't', viaSocket: false, ips: () => new ClientIpResolver(), log: pino({ level: 'silent' }) }));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return (server!.address() as AddressInfo).port;
}

/** Send a chunked body of `size` bytes on a raw socket; the status line the client reads, or `reset`. */
function chunked(port: number, size: number): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let reply = '';
    s.on('connect', async () => {
      s.write('POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      for (let sent = 0; sent < size && !s.destroyed; sent += chunk.length) {
        if (!s.write(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]))) await new Promise((r) => s.once('drain', r));
      }
      if (!s.destroyed) s.write('0\r\n\r\n');
    });
    s.on('data', (d) => {
      reply += d.toString();
      const m = /^HTTP\/1\.1 (\d{3})/.exec(reply);
      if (m) {
        s.destroy();
        resolve(m[1]!);
      }
    });
    s.on('error', () => resolve(reply ? reply.slice(0, 12) : 'reset'));
  });
}

describe('request bodies', () => {
  it('a chunked body past the limit gets a 413 the client reads (not a reset), and nothing stays held', async () => {
    const port = await serve();
    expect(await chunked(port, 4 << 20)).toBe('413');
    expect(await chunked(port, 512 << 10)).toBe('200');
    await new Promise((r) => setTimeout(r, 50));
    expect(bodyBytesHeld()).toBe(0);
  });

  it('bodies held at once are bounded daemon-wide: past the budget, 503 with Retry-After; room comes back after', async () => {
    setBodyBudget(2 << 20);
    // Each answered body is held 1.5 s, so the five uploads overlap even on a slow machine.
    const port = await serve(1500);
    const statuses = await Promise.all(Array.from({ length: 5 }, () => chunked(port, 900 << 10)));
    expect(statuses.filter((s) => s === '200').length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s === '200').length).toBeLessThanOrEqual(2);
    expect(statuses.filter((s) => s === '503').length).toBeGreaterThanOrEqual(3);
    await new Promise((r) => setTimeout(r, 1700));
    expect(bodyBytesHeld()).toBe(0);
    expect(await chunked(port, 900 << 10)).toBe('200');
  });
});
