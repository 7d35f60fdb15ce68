/**
 * `ctl backup create|list|restore|export|export-all|import`: backups of the gateway's database, and an
 * archive of the whole state. Over the
 * control socket no key is needed; with --url pass --api-key (or CTL_GATEWAY_API_KEY), a
 * management-scoped key. Exports and imports are streamed.
 */
import type { Command } from 'commander';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { request } from './client.js';
import { check, sendStream, text } from './gateway-media.js';
import { outputFormat, printData, printRows } from './output.js';
import { action, UsageError } from './run.js';

interface BackupView {
  id: string;
  bytes: number;
  createdAt: string;
  schemaVersion: number | null;
}

export function register(program: Command): void {
  const b = program.command('backup').description('backups of the gateway database: create, list, restore, export, import; export-all: the whole state').option('--api-key <key>', 'management API key (with --url)');
  const auth = (): Record<string, string> => {
    const key = (b.opts() as { apiKey?: string }).apiKey ?? process.env.CTL_GATEWAY_API_KEY;
    return key ? { Authorization: `Bearer ${key}` } : {};
  };
  const api = <T>(method: string, path: string, body?: unknown) => request<T>({ host: 'gateway', method, path, body, headers: auth() });
  const restoring = (r: { restoring: string; schemaVersion: number }) => {
    if (outputFormat() !== 'table') return printData(r);
    process.stdout.write(`restoring ${r.restoring} (schema version ${r.schemaVersion}); the gateway restarts on it, the data it replaces is kept as a backup\n`);
  };

  b.command('create')
    .description('back up the gateway database now (consistent while it serves); prints the backup id')
    .option('--label <text>', 'a word added to the id')
    .action(
      action(async (o: { label?: string }) => {
        const v = await api<BackupView>('PUT', '/api/db-backups', o.label ? { label: o.label } : {});
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`${v.id}\n`);
      }),
    );
  b.command('list')
    .description('the backups, newest first')
    .action(
      action(async () => {
        const r = await api<{ backups: BackupView[] }>('GET', '/api/db-backups');
        await printRows(
          r.backups,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'created', get: (x) => x.createdAt },
            { header: 'bytes', get: (x) => x.bytes },
            { header: 'schema', get: (x) => x.schemaVersion ?? '?' },
          ],
          r,
        );
      }),
    );
  b.command('restore <id>')
    .description('restore a backup: the gateway restarts on it (the other APIs keep serving)')
    .action(action(async (id: string) => restoring(await api('POST', '/api/db-backups', { id }))));
  b.command('export')
    .description('download a consistent copy of the live gateway database')
    .option('--out <file>', 'where to write it', `gateway-${new Date().toISOString().slice(0, 10)}.db`)
    .action(
      action(async (o: { out: string }) => {
        const res = await sendStream('GET', '/api/db-backups/export', { ...auth() }, (req) => req.end());
        await check(res);
        await pipeline(res, createWriteStream(o.out, { mode: 0o600 }));
        process.stderr.write(`wrote ${o.out} (${statSync(o.out).size} bytes)\n`);
      }),
    );
  b.command('export-all')
    .description('download a .tar.gz of every component database and configuration file (credentials left out unless --secrets)')
    .option('--out <file>', 'where to write it', `ctl-state-${new Date().toISOString().slice(0, 10)}.tar.gz`)
    .option('--secrets', 'include API keys, passwords, private keys and DIR/secrets (admin)')
    .action(
      action(async (o: { out: string; secrets?: boolean }) => {
        const res = await sendStream('GET', `/api/db-backups/exportAll${o.secrets ? '?secrets=1' : ''}`, { ...auth() }, (req) => req.end());
        await check(res);
        await pipeline(res, createWriteStream(o.out, { mode: 0o600 }));
        process.stderr.write(`wrote ${o.out} (${statSync(o.out).size} bytes)\n`);
      }),
    );
  b.command('import <file>')
    .description('upload a gateway database and restore it (refused, nothing changed, unless it is a valid gateway database)')
    .action(
      action(async (file: string) => {
        let size: number;
        try {
          size = statSync(file).size;
        } catch {
          throw new UsageError(`cannot read ${file}`);
        }
        const res = await sendStream('POST', '/api/db-backups/import', { 'Content-Type': 'application/vnd.sqlite3', 'Content-Length': size, ...auth() }, (req) => void pipeline(createReadStream(file), req).catch(() => undefined));
        await check(res);
        restoring(JSON.parse(await text(res)) as { restoring: string; schemaVersion: number });
      }),
    );
}
