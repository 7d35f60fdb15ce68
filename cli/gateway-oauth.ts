/** `ctl gateway oauth providers|login|status|refresh|logout` (/api/oauth). */
import type { Command } from 'commander';
import { request } from './client.js';
import { outputFormat, printData, printRows } from './output.js';
import { action, UsageError } from './run.js';

interface AccountStatus {
  id: string;
  label: string;
  expiresAt: string | null;
  lastError: string | null;
}

export function registerOAuth(g: Command, auth: () => Record<string, string>): void {
  const api = <T>(method: string, path: string, body?: unknown) => request<T>({ host: 'gateway', method, path, body, headers: auth() });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const o = g.command('oauth').description('OAuth logins as provider accounts (ctl.yaml gateway.oauth_providers): providers, login, status, refresh, logout');
  o.command('providers')
    .description('the configured OAuth providers and the flows they offer')
    .action(
      action(async () => {
        const r = await api<{ providers: { id: string; name: string; kind: string; flows: string[]; accounts: number }[] }>('GET', '/api/oauth/providers');
        await printRows(
          r.providers,
          [
            { header: 'id', get: (x) => x.id },
            { header: 'name', get: (x) => x.name },
            { header: 'kind', get: (x) => x.kind },
            { header: 'flows', get: (x) => x.flows.join(',') },
            { header: 'accounts', get: (x) => x.accounts },
          ],
          r,
        );
      }),
    );
  o.command('login <provider>')
    .description('sign in: a device code to enter in a browser (or, without device flow, a URL to open); waits until it is done')
    .option('--browser', 'use the authorization-code flow even when a device flow exists')
    .action(
      action(async (provider: string, opt: { browser?: boolean }) => {
        const p = (await api<{ providers: { id: string; flows: string[] }[] }>('GET', '/api/oauth/providers')).providers.find((x) => x.id === provider);
        if (!p) throw new UsageError(`no OAuth provider ${provider} (ctl gateway oauth providers)`);
        if (p.flows.includes('device') && !opt.browser) {
          const d = await api<{ flowId: string; userCode: string; verificationUri: string | null; verificationUriComplete: string | null; expiresIn: number; interval: number }>('POST', `/api/oauth/${encodeURIComponent(provider)}/device`);
          process.stderr.write(`Open ${d.verificationUriComplete ?? d.verificationUri} and enter the code ${d.userCode}\n`);
          let interval = d.interval;
          const end = Date.now() + d.expiresIn * 1000;
          while (Date.now() < end) {
            await sleep(interval * 1000);
            const r = await api<{ status: string; interval?: number; label?: string; accountId?: string }>('POST', `/api/oauth/${encodeURIComponent(provider)}/poll`, { flowId: d.flowId });
            if (r.status === 'pending') {
              interval = r.interval ?? interval;
              continue;
            }
            if (r.status !== 'authorized') throw new UsageError(`sign-in ${r.status}`);
            if (outputFormat() !== 'table') return printData(r);
            return void process.stdout.write(`signed in as ${r.label} (${r.accountId})\n`);
          }
          throw new UsageError('the code expired before sign-in finished');
        }
        const before = (await api<{ accounts: AccountStatus[] }>('GET', `/api/oauth/${encodeURIComponent(provider)}/status`)).accounts.length;
        const a = await api<{ authorizeUrl: string; expiresIn: number }>('POST', `/api/oauth/${encodeURIComponent(provider)}/authorize`);
        process.stderr.write(`Open this address in a browser and sign in:\n${a.authorizeUrl}\n`);
        const end = Date.now() + a.expiresIn * 1000;
        while (Date.now() < end) {
          await sleep(2000);
          const s = await api<{ accounts: AccountStatus[] }>('GET', `/api/oauth/${encodeURIComponent(provider)}/status`);
          if (s.accounts.length > before) return void process.stdout.write(`signed in (${s.accounts.length} account(s))\n`);
        }
        throw new UsageError('sign-in did not finish in time');
      }),
    );
  o.command('status <provider>')
    .description('the provider\'s OAuth accounts: label, token expiry, last error')
    .action(
      action(async (provider: string) => {
        const r = await api<{ accounts: AccountStatus[] }>('GET', `/api/oauth/${encodeURIComponent(provider)}/status`);
        await printRows(
          r.accounts,
          [
            { header: 'account', get: (x) => x.id },
            { header: 'label', get: (x) => x.label },
            { header: 'expires', get: (x) => x.expiresAt ?? '' },
            { header: 'last error', get: (x) => x.lastError ?? '' },
          ],
          r,
        );
      }),
    );
  for (const verb of ['refresh', 'logout'] as const) {
    o.command(`${verb} <provider>`)
      .description(verb === 'refresh' ? 'refresh the tokens now' : 'forget the tokens and the account(s)')
      .option('--account <id>', 'only this account')
      .action(
        action(async (provider: string, opt: { account?: string }) => {
          const r = await api<Record<string, unknown>>('POST', `/api/oauth/${encodeURIComponent(provider)}/${verb}`, opt.account ? { accountId: opt.account } : {});
          if (outputFormat() !== 'table') return printData(r);
          process.stdout.write(verb === 'refresh' ? `refreshed ${(r.accounts as unknown[]).length} account(s)\n` : `logged out ${String(r.loggedOut)} account(s)\n`);
        }),
      );
  }
}
