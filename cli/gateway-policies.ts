/** `ctl gateway policy list|add|rm` (/api/policies) and `ctl gateway audit` (/api/compliance/audit-log). */
import type { Command } from 'commander';
import { request } from './client.js';
import { outputFormat, printData, printRows } from './output.js';
import { action, collect, intOption } from './run.js';

interface PolicyView {
  id: string;
  name: string;
  apiKeyId: string | null;
  allowModels: string[];
  denyModels: string[];
  maxTokens: number | null;
  enabled: boolean;
}

export function registerPolicies(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown, query?: Record<string, string | number | undefined>) => request<T>({ host: 'gateway', method, path, body, query, headers: auth() });
  const p = g.command('policy').description('routing policies (/api/policies): list, add, rm');
  p.command('list')
    .description('the policies')
    .action(
      action(async () => {
        const r = await api<{ policies: PolicyView[] }>('GET', '/api/policies');
        await printRows(
          r.policies,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'name', get: (x) => x.name },
            { header: 'key', get: (x) => x.apiKeyId ?? '(all)' },
            { header: 'allow', get: (x) => x.allowModels.join(',') },
            { header: 'deny', get: (x) => x.denyModels.join(',') },
            { header: 'max tokens', get: (x) => x.maxTokens ?? '' },
            { header: 'enabled', get: (x) => x.enabled },
          ],
          r,
        );
      }),
    );
  p.command('add <name>')
    .description('add a policy; prints its id')
    .option('--api-key-id <id>', 'only for this API key (default: every request)')
    .option('--allow <model>', 'allowed model id or glob (repeatable)', collect, [])
    .option('--deny <model>', 'denied model id or glob (repeatable)', collect, [])
    .option('--max-tokens <n>', 'max tokens ceiling', intOption('--max-tokens'))
    .action(
      action(async (name: string, o: { apiKeyId?: string; allow: string[]; deny: string[]; maxTokens?: number }) => {
        const v = await api<PolicyView>('POST', '/api/policies', { name, ...(o.apiKeyId ? { apiKeyId: o.apiKeyId } : {}), allowModels: o.allow, denyModels: o.deny, ...(o.maxTokens ? { maxTokens: o.maxTokens } : {}) });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`${v.id}\n`);
      }),
    );
  p.command('rm <id>')
    .description('delete a policy')
    .action(
      action(async (id: string) => {
        await api('DELETE', `/api/policies/${encodeURIComponent(id)}`);
        process.stdout.write(`deleted ${id}\n`);
      }),
    );
  g.command('audit')
    .description('the compliance audit log of management changes, newest first')
    .option('--actor <who>', 'control-socket, login-session or key:<name>')
    .option('--path <prefix>', 'paths starting with this')
    .option('--limit <n>', 'how many (1-1000)', intOption('--limit'), 50)
    .action(
      action(async (o: { actor?: string; path?: string; limit: number }) => {
        const r = await api<{ entries: { at: string; actor: string; method: string; path: string; status: number }[] }>('GET', '/api/compliance/audit-log', undefined, { actor: o.actor, path: o.path, limit: o.limit });
        await printRows(
          r.entries,
          [
            { header: 'at', get: (x) => x.at },
            { header: 'actor', get: (x) => x.actor },
            { header: 'method', get: (x) => x.method },
            { header: 'path', get: (x) => x.path },
            { header: 'status', get: (x) => x.status },
          ],
          r,
        );
      }),
    );
}
