/** `ctl gateway tools status|settings|apply|restore|backups` (/api/cli-tools) and `ctl gateway acp list|add|rm` (/api/acp/agents). */
import type { Command } from 'commander';
import { request } from './client.js';
import { outputFormat, printData, printRows } from './output.js';
import { action, collect } from './run.js';

interface Status {
  id: string;
  name: string;
  installed: boolean;
  runnable: boolean;
  version: string | null;
  runtimeMode: string | null;
  commandPath: string | null;
  reason: string | null;
}

export function registerLocalTools(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown, query?: Record<string, string | number | undefined>) => request<T>({ host: 'gateway', method, path, body, query, headers: auth() });
  const t = g.command('tools').description('AI coding CLIs on the daemon\'s machine and their gateway settings (/api/cli-tools): status, settings, apply, restore, backups');
  t.command('status')
    .description('which tools are installed, runnable, their versions and how they run')
    .action(
      action(async () => {
        const r = await api<{ tools: Record<string, Status> }>('GET', '/api/cli-tools/all-statuses');
        await printRows(
          Object.values(r.tools),
          [
            { header: 'tool', get: (x) => x.id },
            { header: 'installed', get: (x) => x.installed },
            { header: 'runnable', get: (x) => x.runnable },
            { header: 'version', get: (x) => x.version ?? '' },
            { header: 'runtime', get: (x) => x.runtimeMode ?? '' },
            { header: 'path / reason', get: (x) => x.reason ?? x.commandPath ?? '' },
          ],
          r,
        );
      }),
    );
  t.command('settings <tool>')
    .description('what the tool\'s settings file says about its model API (keys masked)')
    .action(action(async (tool: string) => printData(await api('GET', `/api/cli-tools/${encodeURIComponent(tool)}-settings`))));
  t.command('apply <tool>')
    .description('point the tool at this gateway (its file backed up first, its other settings kept)')
    .requiredOption('--key <key>', 'the gateway API key the tool will send')
    .option('--base-url <url>', 'the gateway address as the tool reaches it (needed over the control socket)')
    .option('--model <id>', 'the model the tool asks for')
    .action(
      action(async (tool: string, o: { key: string; baseUrl?: string; model?: string }) => {
        const r = await api<{ path: string; backup: { id: string } }>('POST', '/api/cli-tools/apply', { tool, apiKey: o.key, ...(o.baseUrl ? { baseUrl: o.baseUrl } : {}), ...(o.model ? { model: o.model } : {}) });
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`wrote ${r.path} (backup ${r.backup.id})\n`);
      }),
    );
  t.command('restore <tool>')
    .description('put the tool\'s settings file back as a backup has it (default: the newest)')
    .option('--backup <id>', 'which backup')
    .action(
      action(async (tool: string, o: { backup?: string }) => {
        const r = await api<{ path: string; restoredFrom: { id: string } }>('POST', `/api/cli-tools/${encodeURIComponent(tool)}/restore`, o.backup ? { backupId: o.backup } : {});
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`restored ${r.path} from ${r.restoredFrom.id}\n`);
      }),
    );
  t.command('backups')
    .description('backups of the tools\' settings files')
    .option('--tool <id>', 'only this tool\'s')
    .action(
      action(async (o: { tool?: string }) => {
        const r = await api<{ backups: { id: string; tool: string; path: string; absent: boolean; createdAt: string }[] }>('GET', '/api/cli-tools/backups', undefined, { tool: o.tool });
        await printRows(
          r.backups,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'tool', get: (x) => x.tool },
            { header: 'file', get: (x) => (x.absent ? `${x.path} (absent)` : x.path) },
            { header: 'created', get: (x) => x.createdAt },
          ],
          r,
        );
      }),
    );

  const a = g.command('acp').description('Agent Client Protocol agents on the daemon\'s machine (/api/acp/agents): list, add, rm');
  a.command('list')
    .description('known and custom agents: installed, version, how an editor starts them')
    .option('--refresh', 'detect again instead of using the 60 s cache')
    .action(
      action(async (o: { refresh?: boolean }) => {
        const r = await (o.refresh ? api<{ agents: { id: string; name: string; installed: boolean; version: string | null; binary: string; spawnArgs: string[]; isCustom: boolean }[] }>('POST', '/api/acp/agents', { action: 'refresh' }) : api<{ agents: { id: string; name: string; installed: boolean; version: string | null; binary: string; spawnArgs: string[]; isCustom: boolean }[] }>('GET', '/api/acp/agents'));
        await printRows(
          r.agents,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'name', get: (x) => x.name },
            { header: 'installed', get: (x) => x.installed },
            { header: 'version', get: (x) => x.version ?? '' },
            { header: 'command', get: (x) => [x.binary, ...x.spawnArgs].join(' ') },
            { header: 'custom', get: (x) => x.isCustom },
          ],
          r,
        );
      }),
    );
  a.command('add <id> <binary>')
    .description('add a custom agent (BINARY: a program name found on PATH; detection runs BINARY --version)')
    .option('--name <name>', 'a display name (default: the id)')
    .option('--provider-alias <alias>', 'the gateway provider it uses')
    .option('--arg <arg>', 'an argument that starts it as an ACP server (repeatable)', collect, [])
    .action(
      action(async (id: string, binary: string, o: { name?: string; providerAlias?: string; arg: string[] }) => {
        const r = await api<{ agent: { installed: boolean; version: string | null } }>('POST', '/api/acp/agents', { id, name: o.name ?? id, binary, ...(o.providerAlias ? { providerAlias: o.providerAlias } : {}), spawnArgs: o.arg });
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`added ${id}: ${r.agent.installed ? `installed${r.agent.version ? ` (${r.agent.version})` : ''}` : 'not found on PATH'}\n`);
      }),
    );
  a.command('rm <id>')
    .description('remove a custom agent')
    .action(
      action(async (id: string) => {
        await api('DELETE', '/api/acp/agents', undefined, { id });
        process.stdout.write(`removed ${id}\n`);
      }),
    );
}
