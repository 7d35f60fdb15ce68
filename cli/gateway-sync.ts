/** `ctl gateway sync status|push|pull|init` (/api/sync/cloud, /api/sync/initialize). */
import type { Command } from 'commander';
import { request } from './client.js';
import { outputFormat, printData } from './output.js';
import { action } from './run.js';

export function registerSync(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown) => request<T>({ host: 'gateway', method, path, body, headers: auth() });
  const s = g.command('sync').description('the gateway configuration kept at a remote (ctl.yaml gateway.sync: an HTTP endpoint or an S3 bucket): status, push, pull, init');
  s.command('status')
    .description('the remote, last push and pull, last error')
    .action(action(async () => printData(await api('GET', '/api/sync/cloud'))));
  s.command('push')
    .description('write this gateway\'s configuration to the remote')
    .action(
      action(async () => {
        const r = await api<{ remote: string; counts: Record<string, number> }>('POST', '/api/sync/cloud', { action: 'push' });
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`pushed to ${r.remote}: ${Object.entries(r.counts).map(([k, v]) => `${v} ${k}`).join(', ')}\n`);
      }),
    );
  s.command('pull')
    .description('merge the remote configuration into this gateway (what it has is created or replaced; local extras stay)')
    .action(
      action(async () => {
        const r = await api<{ remote: string; providers: number; combos: number; aliases: number; mappings: number; prices: number; skipped: string[] }>('POST', '/api/sync/cloud', { action: 'pull' });
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`pulled from ${r.remote}: ${r.providers} providers, ${r.combos} combos, ${r.aliases} aliases, ${r.mappings} mappings, ${r.prices} prices${r.skipped.length ? `; skipped ${r.skipped.join(', ')}` : ''}\n`);
      }),
    );
  s.command('init')
    .description('the first push (refused when the remote already has a configuration, unless --force)')
    .option('--force', 'overwrite what the remote has')
    .action(
      action(async (o: { force?: boolean }) => {
        const r = await api<{ remote: string }>('POST', '/api/sync/initialize', o.force ? { force: true } : {});
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`initialized ${r.remote}\n`);
      }),
    );
}
