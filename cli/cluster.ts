import type { Command } from 'commander';
import { core } from './client.js';
import { action, UsageError } from './run.js';
import { outputFormat, printData, printRows } from './output.js';
import { parseDuration } from '../src/http/duration.js';

interface Member {
  name: string;
  address: string;
  role: string;
  failure_domain: number;
  last_heartbeat: string;
  status: string;
  certificate_fingerprint: string;
}

interface Token {
  name: string;
  token: string;
  expires_at: string;
}

async function showMembers(): Promise<void> {
  const members = await core<Member[]>('GET', '/core/1.0/cluster');
  await printRows(
    members,
    [
      { header: 'name', get: (m) => m.name },
      { header: 'address', get: (m) => m.address },
      { header: 'role', get: (m) => m.role },
      { header: 'failure domain', get: (m) => m.failure_domain },
      { header: 'status', get: (m) => m.status },
      { header: 'last heartbeat', get: (m) => (m.last_heartbeat.startsWith('0001-') ? '-' : m.last_heartbeat) },
      { header: 'fingerprint', get: (m) => m.certificate_fingerprint.slice(0, 16) },
    ],
    members,
  );
}

/** A Go duration (`3h`, `90m`) as the nanoseconds microcluster's API takes; 0 = never expires. */
function nanoseconds(text: string): number {
  const ms = parseDuration(text);
  if (ms === null || ms < 0) throw new UsageError(`--expire-after wants a duration such as 3h or 30m, got ${JSON.stringify(text)}`);
  return ms * 1e6;
}

export function register(program: Command): void {
  const cluster = program.command('cluster').description('the Core API cluster: bootstrap, join tokens, join, members, remove');
  cluster
    .command('bootstrap')
    .description('make this daemon the first member of a new cluster, serving the Core API on ADDRESS')
    .requiredOption('--address <host:port>', 'cluster address (HTTPS with client certificates)')
    .option('--name <name>', 'member name (default: the daemon name in daemon.yaml)')
    .action(
      action(async (o: { address: string; name?: string }) => {
        await core('POST', '/core/control', { bootstrap: true, address: o.address, ...(o.name ? { name: o.name } : {}) });
        await showMembers();
      }),
    );
  cluster
    .command('join')
    .description('join the cluster a token from `ctl cluster token add` names, serving the Core API on ADDRESS')
    .argument('<token>', 'join token')
    .requiredOption('--address <host:port>', 'this member\'s cluster address')
    .option('--name <name>', 'member name (must be the name the token was made for; default: the daemon name)')
    .action(
      action(async (token: string, o: { address: string; name?: string }) => {
        await core('POST', '/core/control', { join_token: token, address: o.address, ...(o.name ? { name: o.name } : {}) });
        await showMembers();
      }),
    );
  cluster.command('members').alias('list').description('members: address, role, failure domain, status, last heartbeat, certificate fingerprint').action(action(showMembers));
  cluster
    .command('remove')
    .description('remove a member: every member stops trusting it and it leaves the cluster (its data stays)')
    .argument('<name>', 'member name')
    .action(action(async (name: string) => void (await core('DELETE', `/core/1.0/cluster/${encodeURIComponent(name)}`))));

  const token = cluster.command('token').description('join tokens');
  token
    .command('add')
    .description('make a join token for member NAME and print it')
    .argument('<name>', 'name the joining member will have')
    .option('--expire-after <duration>', 'token lifetime (e.g. 3h); default never', '0s')
    .action(
      action(async (name: string, o: { expireAfter: string }) => {
        const t = await core<string>('POST', '/core/control/tokens', { name, expire_after: nanoseconds(o.expireAfter) });
        if (outputFormat() !== 'table') return printData({ name, token: t });
        process.stdout.write(`${t}\n`);
      }),
    );
  token
    .command('list')
    .description('join tokens not yet used, revoked or expired')
    .action(
      action(async () => {
        const list = await core<Token[]>('GET', '/core/control/tokens');
        await printRows(
          list,
          [
            { header: 'name', get: (t) => t.name },
            { header: 'expires', get: (t) => (t.expires_at.startsWith('0001-') ? 'never' : t.expires_at) },
            { header: 'token', get: (t) => t.token },
          ],
          list,
        );
      }),
    );
  token
    .command('revoke')
    .description('revoke the join token of NAME')
    .argument('<name>', 'member name the token was made for')
    .action(action(async (name: string) => void (await core('DELETE', `/core/1.0/tokens/${encodeURIComponent(name)}`))));
}
