/** `ctl gateway proxy list|add|rm|assign|test|health` (/api/v1/management/proxies*, /api/settings/proxy/test). */
import type { Command } from 'commander';
import { request } from './client.js';
import { outputFormat, printData, printRows } from './output.js';
import { action, intOption, UsageError } from './run.js';

interface ProxyView {
  id: string;
  name: string;
  url: string;
  enabled: boolean;
  whereUsed?: { scope: string; scopeId: string | null; name: string | null }[];
}

export function registerProxies(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown, query?: Record<string, string | number | undefined>) => request<T>({ host: 'gateway', method, path, body, query, headers: auth() });
  const p = g.command('proxy').description('outbound proxies for provider calls (HTTP, HTTPS, SOCKS5): list, add, rm, assign, test, health');
  p.command('list')
    .description('the proxies and where each is assigned')
    .action(
      action(async () => {
        const r = await api<{ proxies: ProxyView[] }>('GET', '/api/v1/management/proxies', undefined, { where_used: 1 });
        await printRows(
          r.proxies,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'name', get: (x) => x.name },
            { header: 'url', get: (x) => x.url },
            { header: 'enabled', get: (x) => x.enabled },
            { header: 'assigned to', get: (x) => (x.whereUsed ?? []).map((a) => (a.scope === 'global' ? 'global' : `${a.scope}:${a.name ?? a.scopeId}`)).join(', ') },
          ],
          r,
        );
      }),
    );
  p.command('add <url>')
    .description('add a proxy (http://, https://, socks5:// or socks5h://[user:pass@]host:port); prints its id')
    .option('--name <name>', 'a name (default host:port)')
    .action(
      action(async (url: string, o: { name?: string }) => {
        const v = await api<ProxyView>('POST', '/api/v1/management/proxies', { url, ...(o.name ? { name: o.name } : {}) });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`${v.id}\n`);
      }),
    );
  p.command('rm <id>')
    .description('delete a proxy (refused while assigned unless --force, which detaches it)')
    .option('--force', 'detach its assignments first')
    .action(
      action(async (id: string, o: { force?: boolean }) => {
        const r = await api<{ detached: number }>('DELETE', '/api/v1/management/proxies', undefined, { id, ...(o.force ? { force: 1 } : {}) });
        process.stdout.write(`deleted ${id}${r.detached ? ` (${r.detached} assignment(s) detached)` : ''}\n`);
      }),
    );
  p.command('assign <scope> [ids...]')
    .description('assign a proxy to global, provider IDS or connection IDS (provider account ids); --none clears')
    .option('--proxy <id>', 'the proxy to assign')
    .option('--none', 'clear the assignment instead')
    .action(
      action(async (scope: string, ids: string[], o: { proxy?: string; none?: boolean }) => {
        if (!o.proxy === !o.none) throw new UsageError('give --proxy ID or --none');
        const proxyId = o.none ? null : o.proxy!;
        const r = await api<{ changed: number }>('PUT', '/api/v1/management/proxies/bulk-assign', { scope, ...(scope === 'global' ? {} : { scope_ids: ids }), proxy_id: proxyId });
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`${r.changed} assignment(s) changed\n`);
      }),
    );
  p.command('test [id]')
    .description('send one request through a proxy (default: the global one) to --target or the first provider; records the probe')
    .option('--target <url>', 'the URL to reach through the proxy')
    .action(
      action(async (id: string | undefined, o: { target?: string }) => {
        const r = await api<{ ok: boolean; latencyMs: number; status?: number; target: string | null; error?: string }>('POST', '/api/settings/proxy/test', { ...(id ? { proxyId: id } : {}), ...(o.target ? { target: o.target } : {}) });
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(r.ok ? `ok: ${r.target ?? 'proxy reachable'}${r.status ? ` answered ${r.status}` : ''} in ${r.latencyMs} ms\n` : `failed after ${r.latencyMs} ms: ${r.error}\n`);
        if (!r.ok) process.exitCode = 1;
      }),
    );
  p.command('health')
    .description('probe history per proxy')
    .option('--hours <n>', 'how far back (1-168)', intOption('--hours'), 24)
    .action(
      action(async (o: { hours: number }) => {
        const r = await api<{ proxies: { id: string; name: string; probes: number; successRate: number | null; avgLatencyMs: number | null; lastProbeAt: string | null; lastError: string | null }[] }>('GET', '/api/v1/management/proxies/health', undefined, { hours: o.hours });
        await printRows(
          r.proxies,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'name', get: (x) => x.name },
            { header: 'probes', get: (x) => x.probes },
            { header: 'success', get: (x) => (x.successRate === null ? '' : `${Math.round(x.successRate * 100)}%`) },
            { header: 'avg ms', get: (x) => x.avgLatencyMs ?? '' },
            { header: 'last probe', get: (x) => x.lastProbeAt ?? '' },
            { header: 'last error', get: (x) => x.lastError ?? '' },
          ],
          r,
        );
      }),
    );
}
