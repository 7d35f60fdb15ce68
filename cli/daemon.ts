import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ApiError, core } from './client.js';
import { action, collect, EXIT, intOption, UsageError } from './run.js';
import { outputFormat, printData, printObject, printRows } from './output.js';

interface ServerStatus {
  name: string;
  address: string;
  bound_address: string;
  state: string;
  tls: boolean;
  component?: string;
  error?: string;
  component_error?: string;
}
interface Info {
  name: string;
  version: string;
  uptime_seconds: number;
  ready: boolean;
  state_dir: string;
  pid: number;
  servers: Record<string, ServerStatus>;
  storage?: Record<string, { url: string; available: boolean; leases?: string[] }>;
}
type DaemonConfig = { name: string; address: string; servers: Record<string, { address: string }>; 'failure-domain': number };

function duration(s: number): string {
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return [d ? `${d}d` : '', h ? `${h}h` : '', m ? `${m}m` : '', `${s % 60}s`].filter(Boolean).join('');
}

/** What is down in a daemon that is ready: components, listeners, shared storage servers. */
function downParts(info: Info): string[] {
  const down: string[] = [];
  for (const s of Object.values(info.servers)) {
    if (s.component === 'down') down.push(`component ${s.name} is down: ${s.component_error ?? 'no reason given'}`);
    if (s.state === 'failed') down.push(`server ${s.name} cannot listen on ${s.address}: ${s.error ?? 'no reason given'}`);
  }
  for (const [name, st] of Object.entries(info.storage ?? {})) if (!st.available) down.push(`storage ${name} (${st.url}) does not answer`);
  return down;
}

/**
 * `ctl status`: prints the daemon's state, then exits 0 when all is up, 4 (EXIT.notReady) when the
 * daemon is not ready (starting, stopping, no listener up) and 5 (EXIT.degraded) when it is ready
 * but something is down, each with one line per reason on stderr.
 */
async function status(): Promise<void> {
  const info = await core<Info>('GET', '/core/1.0');
  await showStatus(info);
  if (!info.ready) {
    let reason = 'not ready';
    try {
      await core('GET', '/core/1.0/ready');
    } catch (e) {
      if (e instanceof ApiError) reason = e.message;
      else throw e;
    }
    process.stderr.write(`ctl: daemon not ready: ${reason}\n`);
    process.exit(EXIT.notReady);
  }
  const down = downParts(info);
  if (down.length > 0) {
    for (const d of down) process.stderr.write(`ctl: ${d}\n`);
    process.exit(EXIT.degraded);
  }
}

async function showStatus(info: Info): Promise<void> {
  if (outputFormat() !== 'table') return printData(info);
  await printObject(
    [
      ['name', info.name],
      ['version', info.version],
      ['uptime', duration(info.uptime_seconds)],
      ['ready', info.ready],
      ['state dir', info.state_dir],
      ['pid', info.pid],
      ...Object.entries(info.storage ?? {}).map(([k, v]): [string, unknown] => [`storage.${k}`, `${v.url} (${v.available ? 'reachable' : 'UNREACHABLE'})`]),
      ...(info.storage?.postgres ? [['scheduled jobs here', info.storage.postgres.leases?.length ? info.storage.postgres.leases.join(', ') : 'none'] as [string, unknown]] : []),
    ],
    info,
  );
  process.stdout.write('\n');
  await printRows(Object.values(info.servers), [
    { header: 'server', get: (s) => s.name },
    { header: 'address', get: (s) => s.address || '-' },
    { header: 'bound', get: (s) => s.bound_address || '-' },
    { header: 'state', get: (s) => s.state },
    { header: 'tls', get: (s) => (s.tls ? 'yes' : 'no') },
    { header: 'component', get: (s) => s.component ?? '' },
    { header: 'error', get: (s) => [s.error, s.component_error].filter(Boolean).join('; ') },
  ]);
}

async function showConfig(cfg: DaemonConfig): Promise<void> {
  if (outputFormat() !== 'table') return printData(cfg);
  await printObject(
    [
      ['name', cfg.name],
      ['address', cfg.address || '-'],
      ['failure-domain', cfg['failure-domain']],
    ],
    cfg,
  );
  const rows = Object.entries(cfg.servers).map(([name, s]) => ({ name, address: s.address }));
  process.stdout.write('\n');
  await printRows(rows, [
    { header: 'server', get: (s) => s.name },
    { header: 'address', get: (s) => s.address || '-' },
  ]);
}

/** NAME=ADDR → [name, addr]. */
function splitServer(spec: string): [string, string] {
  const i = spec.indexOf('=');
  if (i <= 0) throw new UsageError(`--server wants NAME=ADDR (e.g. gateway=127.0.0.1:20128), got ${JSON.stringify(spec)}`);
  return [spec.slice(0, i), spec.slice(i + 1)];
}

async function readBodyFile(file: string): Promise<Record<string, unknown>> {
  const text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  const YAML = (await import('yaml')).default; // YAML is a superset of JSON: one parser reads both
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (e) {
    throw new UsageError(`${file}: not valid YAML or JSON: ${(e as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new UsageError(`${file}: must hold an object`);
  return doc as Record<string, unknown>;
}

interface ChangeOpts {
  file?: string;
  server?: string[];
  removeServer?: string[];
  failureDomain?: number;
  restart?: boolean;
}

/** Build the request body from -f and the flags; --server/--remove-server edit the current servers map. */
async function buildBody(opts: ChangeOpts, full: boolean): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = opts.file ? await readBodyFile(opts.file) : {};
  const editsServers = (opts.server?.length ?? 0) + (opts.removeServer?.length ?? 0) > 0;
  let current: DaemonConfig | undefined;
  if (editsServers || (full && !opts.file)) current = await core<DaemonConfig>('GET', '/core/1.0/daemon/config');
  if (full && !opts.file && current) {
    body.servers = current.servers;
    body['failure-domain'] = current['failure-domain'];
  }
  if (editsServers) {
    const servers = { ...((body.servers as Record<string, { address: string }> | undefined) ?? current!.servers) };
    for (const spec of opts.server ?? []) {
      const [name, address] = splitServer(spec);
      servers[name] = { address };
    }
    for (const name of opts.removeServer ?? []) delete servers[name];
    body.servers = servers;
  }
  if (opts.failureDomain !== undefined) body['failure-domain'] = opts.failureDomain;
  return body;
}

function changeOptions(cmd: Command): Command {
  return cmd
    .option('-f, --file <file>', 'request body from a YAML or JSON file (- for stdin)')
    .option('--server <name=addr>', 'set a server address (repeatable; empty address = socket only)', collect)
    .option('--remove-server <name>', 'remove a server (repeatable)', collect)
    .option('--failure-domain <n>', 'failure domain', intOption('--failure-domain'))
    .option('--restart', 'restart the databases after persisting (the reply waits for it)');
}

export function register(program: Command): void {
  program
    .command('status')
    .description('daemon name, version, uptime and every listener with its state; exits 4 when the daemon is not ready, 5 when something is down')
    .action(action(status));

  const daemon = program.command('daemon').description('the Core API: daemon configuration and listeners');
  const config = daemon.command('config').description('daemon.yaml through the Core API');
  config
    .command('get')
    .description('show the daemon configuration')
    .action(action(async () => showConfig(await core<DaemonConfig>('GET', '/core/1.0/daemon/config'))));
  changeOptions(config.command('put').description('replace the mutable configuration (omitted servers are cleared, omitted failure-domain resets to 0)')).action(
    action(async (opts: ChangeOpts) => {
      const body = await buildBody(opts, true);
      await core('PUT', '/core/1.0/daemon/config', body, opts.restart ? { restart: true } : undefined);
      await showConfig(await core<DaemonConfig>('GET', '/core/1.0/daemon/config'));
    }),
  );
  changeOptions(config.command('patch').description('change part of the configuration (omitted fields stay)')).action(
    action(async (opts: ChangeOpts) => {
      const body = await buildBody(opts, false);
      await core('PATCH', '/core/1.0/daemon/config', body, opts.restart ? { restart: true } : undefined);
      await showConfig(await core<DaemonConfig>('GET', '/core/1.0/daemon/config'));
    }),
  );

  const servers = daemon.command('servers').description('the legacy servers endpoint');
  servers
    .command('get')
    .description('show the servers map')
    .action(
      action(async () => {
        const map = await core<Record<string, { address: string }>>('GET', '/core/1.0/daemon/servers');
        await printRows(
          Object.entries(map).map(([name, s]) => ({ name, address: s.address })),
          [
            { header: 'server', get: (s) => s.name },
            { header: 'address', get: (s) => s.address || '-' },
          ],
          map,
        );
      }),
    );
  servers
    .command('set')
    .description('replace the servers map: NAME=ADDR ... (servers not named are removed)')
    .argument('[servers...]', 'NAME=ADDR pairs')
    .action(
      action(async (specs: string[]) => {
        const map: Record<string, { address: string }> = {};
        for (const s of specs) {
          const [name, address] = splitServer(s);
          map[name] = { address };
        }
        await core('PUT', '/core/1.0/daemon/servers', map);
        const after = await core<Record<string, { address: string }>>('GET', '/core/1.0/daemon/servers');
        await printRows(
          Object.entries(after).map(([name, s]) => ({ name, address: s.address })),
          [
            { header: 'server', get: (s) => s.name },
            { header: 'address', get: (s) => s.address || '-' },
          ],
          after,
        );
      }),
    );
}
