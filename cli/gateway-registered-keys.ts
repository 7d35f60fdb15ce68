/** `ctl gateway registered-key list|issue|revoke|check` (/api/v1/registered-keys, /v1/quotas/check). */
import type { Command } from 'commander';
import { request } from './client.js';
import { outputFormat, printData, printRows } from './output.js';
import { action, UsageError } from './run.js';

interface RegisteredView {
  id: string;
  name: string | null;
  prefix: string | null;
  provider: string | null;
  accountId: string | null;
  status: string;
  expiresAt: string | null;
  hourlyBudget: number | null;
  dailyBudget: number | null;
  key?: string;
}

const usd = (v: string, flag: string): number => {
  const n = Number(v);
  if (!(n > 0)) throw new UsageError(`${flag} must be a positive number of USD`);
  return n;
};

export function registerRegisteredKeys(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown, query?: Record<string, string | number | undefined>) => request<T>({ host: 'gateway', method, path, body, query, headers: auth() });
  const k = g.command('registered-key').description('keys issued by programs (/api/v1/registered-keys): list, issue, revoke, check');
  k.command('list')
    .description('registered keys (all of them over the control socket or with a management key; else the issuing key\'s own)')
    .action(
      action(async () => {
        const r = await api<{ keys: RegisteredView[] }>('GET', '/api/v1/registered-keys');
        await printRows(
          r.keys,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'name', get: (x) => x.name ?? '' },
            { header: 'prefix', get: (x) => x.prefix ?? '' },
            { header: 'provider', get: (x) => x.provider ?? '(any)' },
            { header: 'account', get: (x) => x.accountId ?? '' },
            { header: 'status', get: (x) => x.status },
            { header: 'expires', get: (x) => x.expiresAt ?? '' },
            { header: 'budget/h', get: (x) => x.hourlyBudget ?? '' },
            { header: 'budget/day', get: (x) => x.dailyBudget ?? '' },
          ],
          r,
        );
      }),
    );
  k.command('issue')
    .description('issue a key; prints the raw key (shown once)')
    .option('--name <name>', 'a name')
    .option('--provider <id>', 'limit it to this provider\'s models')
    .option('--account <id>', 'pin it to this provider account')
    .option('--expires <time>', 'ISO time it stops working')
    .option('--daily-budget <usd>', 'USD per day')
    .option('--hourly-budget <usd>', 'USD per hour')
    .option('--idempotency-key <key>', 'a retried issuance with the same key answers the same key')
    .action(
      action(async (o: { name?: string; provider?: string; account?: string; expires?: string; dailyBudget?: string; hourlyBudget?: string; idempotencyKey?: string }) => {
        const v = await api<RegisteredView>('POST', '/api/v1/registered-keys', {
          ...(o.name ? { name: o.name } : {}),
          ...(o.provider ? { provider: o.provider } : {}),
          ...(o.account ? { accountId: o.account } : {}),
          ...(o.expires ? { expiresAt: o.expires } : {}),
          ...(o.dailyBudget ? { dailyBudget: usd(o.dailyBudget, '--daily-budget') } : {}),
          ...(o.hourlyBudget ? { hourlyBudget: usd(o.hourlyBudget, '--hourly-budget') } : {}),
          ...(o.idempotencyKey ? { idempotencyKey: o.idempotencyKey } : {}),
        });
        if (outputFormat() !== 'table') return printData(v);
        process.stdout.write(`${v.key ?? `(already issued: ${v.id})`}\n`);
      }),
    );
  k.command('revoke <id>')
    .description('revoke (delete) a registered key: it stops working at once')
    .action(
      action(async (id: string) => {
        await api('POST', `/api/v1/registered-keys/${encodeURIComponent(id)}/revoke`);
        process.stdout.write(`revoked ${id}\n`);
      }),
    );
  k.command('check')
    .description('would issuing a key now be allowed (quotas, the account\'s state); exits 1 when not')
    .option('--provider <id>', 'for this provider')
    .option('--account <id>', 'for this provider account')
    .action(
      action(async (o: { provider?: string; account?: string }) => {
        const r = await api<{ allowed: boolean; reasons: string[] }>('GET', '/v1/quotas/check', undefined, { provider: o.provider, accountId: o.account });
        if (outputFormat() !== 'table') await printData(r);
        else process.stdout.write(r.allowed ? 'allowed\n' : `refused: ${r.reasons.join('; ')}\n`);
        if (!r.allowed) process.exitCode = 1;
      }),
    );
}
