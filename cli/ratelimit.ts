import type { Command } from 'commander';
import { core } from './client.js';
import { outputFormat, printData, printRows } from './output.js';
import { action } from './run.js';

/** A row of GET /core/1.0/ratelimit (src/ratelimit RateLimitStatusRow). */
interface StatusRow {
  server: string;
  method: string;
  route: string;
  limit: number;
  interval: number;
  source: 'code' | 'file' | 'off';
  declared: { limit: number; interval: number } | null;
  adapter: string;
}

interface ResetOpts {
  route?: string;
  ip?: string;
  server?: string;
}

function declared(r: StatusRow): string {
  return r.declared ? `${r.declared.limit}/${r.declared.interval}s` : '-';
}

/** `ctl ratelimit status|reset`: the route rate limiter through the Core API. */
export function register(program: Command): void {
  const rl = program
    .command('ratelimit')
    .description('the route rate limiter: declared limits and counters (DIR/rate_limit.yaml; SIGHUP reloads it)');

  rl.command('status')
    .description('every rate-limited route with its limit, window, where the limit comes from, and the adapter')
    .action(
      action(async () => {
        const rows = await core<StatusRow[]>('GET', '/core/1.0/ratelimit');
        if (outputFormat() !== 'table') return printData(rows);
        if (rows.length === 0) {
          process.stdout.write('no rate-limited routes\n');
          return;
        }
        await printRows(rows, [
          { header: 'server', get: (r) => r.server },
          { header: 'method', get: (r) => r.method },
          { header: 'route', get: (r) => r.route },
          { header: 'limit', get: (r) => (r.source === 'off' ? 'off' : r.limit) },
          { header: 'interval', get: (r) => `${r.interval}s` },
          { header: 'source', get: (r) => r.source },
          { header: 'declared', get: declared },
          { header: 'adapter', get: (r) => r.adapter },
        ]);
      }),
    );

  rl.command('reset')
    .description('clear counters; with no option every counter, else those of the route, client IP and/or server given')
    .option('--route <route>', 'route pattern, /posts/{id} or /posts/:id, optionally with a method: "POST /api/auth/login"')
    .option('--ip <ip>', 'client address (an IPv6 address clears its whole /64 bucket; 0.0.0.0 is the unix socket)')
    .option('--server <name>', 'only this server (alertmanager, core, gateway, pipeline, nodes)')
    .action(
      action(async (opts: ResetOpts) => {
        const body: ResetOpts = {};
        if (opts.route !== undefined) body.route = opts.route;
        if (opts.ip !== undefined) body.ip = opts.ip;
        if (opts.server !== undefined) body.server = opts.server;
        const res = await core<{ cleared: number }>('POST', '/core/1.0/ratelimit/reset', body);
        if (outputFormat() !== 'table') return printData(res);
        process.stdout.write(`cleared ${res.cleared} counter${res.cleared === 1 ? '' : 's'}\n`);
      }),
    );
}
