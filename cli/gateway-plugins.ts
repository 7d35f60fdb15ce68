/** `ctl gateway plugin list|install|rm|activate|deactivate|config` (/api/plugins). */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { request } from './client.js';
import { outputFormat, printData, printRows } from './output.js';
import { action, UsageError } from './run.js';

interface PluginView {
  name: string;
  version: string;
  hooks: string[];
  active: boolean;
  lastError: string | null;
}

export function registerPlugins(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown) => request<T>({ host: 'gateway', method, path, body, headers: auth() });
  const p = g.command('plugin').description('plugins hooking chat requests and answers, run sandboxed (/api/plugins): list, install, rm, activate, deactivate, config');
  p.command('list')
    .description('installed plugins')
    .action(
      action(async () => {
        const r = await api<{ plugins: PluginView[] }>('GET', '/api/plugins');
        await printRows(
          r.plugins,
          [
            { header: 'name', get: (x) => x.name },
            { header: 'version', get: (x) => x.version },
            { header: 'hooks', get: (x) => x.hooks.join(',') },
            { header: 'active', get: (x) => x.active },
            { header: 'last error', get: (x) => x.lastError ?? '' },
          ],
          r,
        );
      }),
    );
  p.command('install <path>')
    .description('install a plugin from a directory or .tgz on the daemon\'s machine (installed inactive)')
    .action(
      action(async (path: string) => {
        const v = await api<PluginView & { upgraded: boolean }>('POST', '/api/plugins/install', { path: resolve(path) });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`${v.upgraded ? 'upgraded' : 'installed'} ${v.name} ${v.version} (${v.active ? 'active' : 'inactive: ctl gateway plugin activate ' + v.name})\n`);
      }),
    );
  p.command('rm <name>')
    .description('uninstall a plugin')
    .action(
      action(async (name: string) => {
        await api('DELETE', `/api/plugins/${encodeURIComponent(name)}`);
        process.stdout.write(`removed ${name}\n`);
      }),
    );
  for (const verb of ['activate', 'deactivate'] as const) {
    p.command(`${verb} <name>`)
      .description(verb === 'activate' ? 'run the plugin\'s hooks on chat requests' : 'stop running its hooks')
      .action(
        action(async (name: string) => {
          const v = await api<PluginView>('POST', `/api/plugins/${encodeURIComponent(name)}/${verb}`);
          if (outputFormat() !== 'table') return printData(v);
          process.stdout.write(`${name} ${v.active ? 'active' : 'inactive'}\n`);
        }),
      );
  }
  p.command('config <name> [json]')
    .description('show the plugin\'s config, or set it to JSON (checked against its schema)')
    .action(
      action(async (name: string, json?: string) => {
        if (json === undefined) return printData(await api('GET', `/api/plugins/${encodeURIComponent(name)}/config`));
        let body: unknown;
        try {
          body = JSON.parse(json);
        } catch {
          throw new UsageError('config must be a JSON object');
        }
        await printData(await api('PUT', `/api/plugins/${encodeURIComponent(name)}/config`, body));
      }),
    );
}
