import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, Agent, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { ClientIpResolver } from '../../src/http/client-ip.js';
import type { Clock } from '../../src/http/clock.js';
import type { ComponentInstance } from '../../src/http/component.js';
import { createDispatcher } from '../../src/http/dispatch.js';
import { sendJson } from '../../src/http/respond.js';
import { Router } from '../../src/http/router.js';
import { createRateLimiter, type RateLimiter } from '../../src/ratelimit/index.js';

export const silentLog = pino({ level: 'silent' });

export function tempStateDir(rateLimitYaml?: string): { dir: string; cleanup: () => void; write: (yaml: string) => void } {
  const dir = mkdtempSync(join(tmpdir(), 'ctl-rl-'));
  const write = (yaml: string) => writeFileSync(join(dir, 'rate_limit.yaml'), yaml);
  if (rateLimitYaml !== undefined) write(rateLimitYaml);
  return { dir, write, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The YAML for the redis adapter on a test server. */
export function redisYaml(port: number, extra = '', onStoreError: 'block' | 'allow' = 'block'): string {
  return `default: redis\nredis: {host: 127.0.0.1, port: ${port}, prefix: t, on-store-error: ${onStoreError}}\n${extra}`;
}

export interface Harness {
  limiter: RateLimiter;
  router: Router;
  /** How many times each handler ran, by `METHOD pattern`. */
  calls: Map<string, number>;
  /** How many times the component middleware ran. */
  middlewareRuns: { n: number };
  port: number;
  socketPath: string;
  close(): Promise<void>;
}

/**
 * A real HTTP server (TCP on 127.0.0.1 and a unix socket) with the kit's dispatcher, a Router with
 * declared limits, and a limiter on `dir`: no daemon needed.
 */
export async function startHarness(
  dir: string,
  declare: (r: Router, handler: (name: string) => (ctx: import('../../src/http/context.js').RequestContext) => void) => void,
  opts: { clock?: Clock; server?: string } = {},
): Promise<Harness> {
  const server = opts.server ?? 'srv';
  const limiter = await createRateLimiter({ stateDir: dir, log: silentLog, clock: opts.clock });
  const router = new Router();
  const calls = new Map<string, number>();
  const middlewareRuns = { n: 0 };
  router.use(async (_ctx, _route, next) => {
    middlewareRuns.n++;
    await next();
  });
  declare(router, (name) => (ctx) => {
    calls.set(name, (calls.get(name) ?? 0) + 1);
    sendJson(ctx.res, 200, { ok: name, ip: ctx.clientIp });
  });
  limiter.register(server, router.routes());
  const component: ComponentInstance = {
    router,
    renderError: (ctx, err) => sendJson(ctx.res, err.status, { error: err.message }),
  };
  const base = { target: () => component, ips: () => new ClientIpResolver(), guard: () => limiter.guardFor(server), log: silentLog };
  const tcp = createServer(createDispatcher({ ...base, listener: server, viaSocket: false }));
  const unix = createServer(createDispatcher({ ...base, listener: 'unix', viaSocket: true }));
  const socketPath = join(dir, 'test.socket');
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => unix.listen(socketPath, r));
  return {
    limiter,
    router,
    calls,
    middlewareRuns,
    port: (tcp.address() as { port: number }).port,
    socketPath,
    async close() {
      await Promise.all([closeServer(tcp), closeServer(unix)]);
      await limiter.close();
    },
  };
}

function closeServer(s: Server): Promise<void> {
  s.closeAllConnections();
  return new Promise((r) => s.close(() => r()));
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** One HTTP request; `from` picks the loopback source address (127.0.0.2, ...), `socketPath` the unix socket. */
export function send(
  target: { port?: number; socketPath?: string; host?: string },
  method: string,
  path: string,
  opts: { from?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Reply> {
  // A port wins: a Harness carries both, and plain `send(h, ...)` means TCP.
  const viaSocket = target.port === undefined;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: viaSocket ? undefined : (target.host ?? '127.0.0.1'),
        port: viaSocket ? undefined : target.port,
        socketPath: viaSocket ? target.socketPath : undefined,
        localAddress: opts.from,
        method,
        path,
        headers: opts.headers,
        agent: opts.from || target.host ? undefined : agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

export function statusCounts(replies: readonly Reply[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of replies) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}
