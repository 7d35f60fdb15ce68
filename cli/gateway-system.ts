/** `ctl gateway init-state|restart|repair`: the gateway's system routes (/api/init, /api/restart, /api/system/env/repair). */
import type { Command } from 'commander';
import { request } from './client.js';
import { outputFormat, printData, printObject, printRows } from './output.js';
import { action } from './run.js';

export function registerSystem(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, query?: Record<string, string | number | undefined>) => request<T>({ host: 'gateway', method, path, query, headers: auth() });
  g.command('init-state')
    .description('first-run state: providers and keys configured, login set, require-login (GET /api/init)')
    .action(
      action(async () => {
        const v = await api<{ initialized: boolean; providers: number; apiKeys: number; loginConfigured: boolean; requireLogin: boolean; version: string }>('GET', '/api/init');
        await printObject(
          [
            ['initialized', v.initialized],
            ['providers', v.providers],
            ['api keys', v.apiKeys],
            ['login configured', v.loginConfigured],
            ['require login', v.requireLogin],
            ['version', v.version],
          ],
          v,
        );
      }),
    );
  g.command('restart')
    .description('restart the gateway component: configuration and database read afresh; the daemon\'s other APIs keep serving')
    .action(
      action(async () => {
        const v = await api<{ restarting: boolean }>('POST', '/api/restart');
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write('restarting the gateway\n');
      }),
    );
  g.command('repair')
    .description('check the state directory and environment and fix what can be fixed (POST /api/system/env/repair); exits 1 while problems remain')
    .option('--dry-run', 'report only')
    .action(
      action(async (o: { dryRun?: boolean }) => {
        const v = await api<{ success: boolean; backupPath: string | null; checks: { check: string; status: string; detail: string }[] }>('POST', '/api/system/env/repair', o.dryRun ? { dryRun: 1 } : undefined);
        await printRows(
          v.checks,
          [
            { header: 'check', get: (x) => x.check },
            { header: 'status', get: (x) => x.status },
            { header: 'detail', get: (x) => x.detail },
          ],
          v,
        );
        if (v.backupPath && outputFormat() === 'table') process.stdout.write(`moved aside into ${v.backupPath}\n`);
        if (!v.success) process.exitCode = 1;
      }),
    );
}
