/** `ctl gateway settings get|set|purge-history`: the gateway's general settings (/api/settings*). */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { request } from './client.js';
import { outputFormat, printData } from './output.js';
import { action, UsageError } from './run.js';

export function registerSettings(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown) => request<T>({ host: 'gateway', method, path, body, headers: auth() });
  const s = g.command('settings').description('general settings (/api/settings*): get, set, purge-history');
  s.command('get')
    .description('every general setting (YAML unless -o json)')
    .action(
      action(async () => {
        const v = await api<Record<string, unknown>>('GET', '/api/settings');
        if (outputFormat() === 'table') return void process.stdout.write(stringify(v));
        await printData(v);
      }),
    );
  s.command('set [patch]')
    .description('change settings: a JSON or YAML object of the fields to change (or --file), e.g. \'{"requireLogin": false}\'')
    .option('--file <file>', 'read the patch from a file')
    .action(
      action(async (patch: string | undefined, o: { file?: string }) => {
        const text = patch ?? (o.file ? readFileSync(o.file, 'utf8') : undefined);
        if (text === undefined) throw new UsageError('give the fields to change, or --file');
        let body: unknown;
        try {
          body = parse(text);
        } catch (e) {
          throw new UsageError(`not JSON or YAML: ${(e as Error).message}`);
        }
        if (!body || typeof body !== 'object' || Array.isArray(body)) throw new UsageError('the patch must be an object');
        const v = await api<Record<string, unknown>>('PATCH', '/api/settings', body);
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`updated ${Object.keys(body).join(', ')}\n`);
      }),
    );
  s.command('purge-history')
    .description('delete the request log (and the compression log), or only rows older than --older-than')
    .option('--older-than <time>', 'ISO time')
    .action(
      action(async (o: { olderThan?: string }) => {
        const r = await api<{ requestLogs: number; compressionLogs: number }>('POST', '/api/settings/purge-request-history', o.olderThan ? { olderThan: o.olderThan } : {});
        if (outputFormat() !== 'table') return printData(r);
        process.stdout.write(`deleted ${r.requestLogs} request-log rows\n`);
      }),
    );
}
