import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { setClientOptions } from '../../cli/client.js';
import { setOutputFormat } from '../../cli/output.js';
import { register } from '../../cli/ratelimit.js';
import { HttpError } from '../../src/http/errors.js';
import { Router } from '../../src/http/router.js';
import { createRateLimiter, type RateLimiter } from '../../src/ratelimit/index.js';
import { silentLog, tempStateDir } from './harness.js';

/**
 * `ctl ratelimit status|reset` against a stand-in for the Core API's two endpoints (the LXD envelope
 * around a real limiter), so the CLI is tested without the daemon.
 */
describe('ctl ratelimit', () => {
  let t: ReturnType<typeof tempStateDir>;
  let limiter: RateLimiter;
  let core: Server;
  let socket: string;
  const seen: unknown[] = [];

  beforeAll(async () => {
    t = tempStateDir('routes:\n  - {server: pipeline, method: POST, route: /api/auth/login, limit: 0}\n');
    limiter = await createRateLimiter({ stateDir: t.dir, log: silentLog });
    const pipeline = new Router();
    pipeline.post('/api/auth/login', () => undefined).rateLimit(10, 60);
    const nodes = new Router();
    nodes.post('/api', () => undefined).rateLimit(600, 60);
    limiter.register('pipeline', pipeline.routes());
    limiter.register('nodes', nodes.routes());
    socket = join(t.dir, 'control.socket');
    core = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const envelope = (status: number, metadata: unknown, error = '') => {
          res.writeHead(status, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ type: error ? 'error' : 'sync', status: error ? '' : 'Success', status_code: error ? 0 : 200, operation: '', error_code: error ? status : 0, error, metadata }));
        };
        try {
          if (req.headers.host !== 'core') return envelope(404, null, 'wrong host');
          if (req.method === 'GET' && req.url === '/core/1.0/ratelimit') return envelope(200, limiter.status());
          if (req.method === 'POST' && req.url === '/core/1.0/ratelimit/reset') {
            const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
            seen.push(body);
            return envelope(200, { cleared: await limiter.reset(body) });
          }
          envelope(404, null, 'not found');
        } catch (e) {
          envelope(e instanceof HttpError ? e.status : 500, null, (e as Error).message);
        }
      });
    });
    await new Promise<void>((r) => core.listen(socket, r));
  });
  afterAll(async () => {
    await new Promise((r) => core.close(r));
    await limiter.close();
    t.cleanup();
  });

  async function ctl(args: string[], format: 'table' | 'json' = 'table'): Promise<{ out: string; err: string; code: number | undefined }> {
    const program = new Command('ctl').exitOverride();
    register(program);
    setClientOptions({ socket });
    setOutputFormat(format);
    let out = '';
    let err = '';
    let code: number | undefined;
    const w = vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
    const e = vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
    const x = vi.spyOn(process, 'exit').mockImplementation(((c?: number) => {
      code = c;
      throw new Error('exit');
    }) as never);
    try {
      await program.parseAsync(['node', 'ctl', ...args]);
    } catch (ex) {
      if ((ex as Error).message !== 'exit') throw ex;
    } finally {
      w.mockRestore();
      e.mockRestore();
      x.mockRestore();
    }
    return { out, err, code };
  }

  it('status lists every declared route with limit, window, source and adapter', async () => {
    const { out } = await ctl(['ratelimit', 'status']);
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^SERVER\s+METHOD\s+ROUTE\s+LIMIT\s+INTERVAL\s+SOURCE\s+DECLARED\s+ADAPTER$/);
    expect(lines[1]).toMatch(/^pipeline\s+POST\s+\/api\/auth\/login\s+off\s+60s\s+off\s+10\/60s\s+file$/);
    expect(lines[2]).toMatch(/^nodes\s+POST\s+\/api\s+600\s+60s\s+code\s+600\/60s\s+file$/);
  });

  it('status -o json prints the rows', async () => {
    const { out } = await ctl(['ratelimit', 'status'], 'json');
    expect(JSON.parse(out)).toEqual(limiter.status());
  });

  it('reset sends the filter and prints how many counters were cleared', async () => {
    const { out } = await ctl(['ratelimit', 'reset', '--route', 'POST /api', '--ip', '127.0.0.1', '--server', 'nodes']);
    expect(out).toBe('cleared 0 counters\n');
    expect(seen.at(-1)).toEqual({ route: 'POST /api', ip: '127.0.0.1', server: 'nodes' });
    const all = await ctl(['ratelimit', 'reset']);
    expect(all.out).toBe('cleared 0 counters\n');
    expect(seen.at(-1)).toEqual({});
  });

  it('reset with a bad filter prints the API message and exits 1', async () => {
    const r = await ctl(['ratelimit', 'reset', '--ip', 'not-an-ip']);
    expect(r.code).toBe(1);
    expect(r.err).toBe('Error: ip: not-an-ip is not an IP address\n');
  });

  it('exits 3 when the daemon is unreachable', async () => {
    const program = socket;
    socket = join(t.dir, 'absent.socket');
    try {
      const r = await ctl(['ratelimit', 'status']);
      expect(r.code).toBe(3);
      expect(r.err).toMatch(/cannot reach the ctl daemon/);
    } finally {
      socket = program;
    }
  });
});
