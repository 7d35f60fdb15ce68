import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ApiError, request } from './client.js';
import { outputFormat, printData, printObject, printRows, renderTable, type Column } from './output.js';
import { action, UsageError } from './run.js';

/**
 * `ctl node ...`: the node monitor (nkn.ovh-style API) through POST /api on the `nodes` server.
 * Table output by default; `-o json|yaml` prints the API's reply envelope as is.
 */

interface Envelope<V = any> {
  Method: string;
  Code: number;
  Error: boolean;
  ErrMessage?: string;
  Value: V;
}

interface NodeEntry {
  NodeId: number;
  Name: string;
  Ip: string;
  SyncState: string;
  Err?: number;
  Height?: number;
  Uptime?: number;
  RelaysPerHour?: number;
  RelaysPerHour10?: number;
  RelaysPerHour60?: number;
  ProposalSubmitted?: number;
  Version?: string;
  LatestUpdate: string;
}

interface GroupOpts {
  hash?: string;
}

/** One API call; an envelope with Error:true becomes an ApiError (exit 1) with its message and code. */
async function call<V = any>(method: string, value: Record<string, unknown> = {}): Promise<Envelope<V>> {
  let env: Envelope<V>;
  try {
    env = await request<Envelope<V>>({ host: 'nodes', method: 'POST', path: '/api', body: { Method: method, Value: value } });
  } catch (e) {
    if (e instanceof ApiError && isEnvelope(e.body)) throw new ApiError(e.status, `${e.body.ErrMessage ?? 'request failed'} (code ${e.body.Code})`, e.body);
    throw e;
  }
  if (!isEnvelope(env)) throw new ApiError(200, 'the nodes server did not answer with an envelope', env);
  if (env.Error) throw new ApiError(200, `${env.ErrMessage ?? 'request failed'} (code ${env.Code})`, env);
  return env;
}

function isEnvelope(v: unknown): v is Envelope {
  return typeof v === 'object' && v !== null && 'Code' in v && 'Method' in v;
}

function hashOf(cmd: Command): string {
  const opts = cmd.optsWithGlobals<GroupOpts>();
  const hash = opts.hash ?? process.env.CTL_NODE_HASH;
  if (!hash) throw new UsageError('no account ID: pass --hash ID or set CTL_NODE_HASH (`ctl node genid` creates one)');
  return hash;
}

/** Human state of a node: the SyncState, with the Err meaning spelled out. */
export function stateOf(n: NodeEntry): string {
  if (n.Err === 1) return 'OFFLINE';
  if (n.Err === 2) return 'waiting';
  if (n.Err === 3) return 'OUT OF NETWORK';
  return n.SyncState;
}

function duration(seconds: number | undefined): string {
  if (!seconds) return '-';
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return d > 0 ? `${d}d${h}h` : h > 0 ? `${h}h${m}m` : `${m}m`;
}

function rate(v: number | undefined): string {
  if (v === undefined) return '-';
  return v < 0 ? 'restart' : String(v);
}

export const NODE_COLUMNS: Column<NodeEntry>[] = [
  { header: 'id', get: (n) => n.NodeId },
  { header: 'name', get: (n) => n.Name },
  { header: 'ip', get: (n) => n.Ip },
  { header: 'state', get: stateOf },
  { header: 'height', get: (n) => n.Height || '-' },
  { header: 'uptime', get: (n) => duration(n.Uptime) },
  { header: 'relays/h', get: (n) => rate(n.RelaysPerHour) },
  { header: '10m', get: (n) => rate(n.RelaysPerHour10) },
  { header: '60m', get: (n) => rate(n.RelaysPerHour60) },
  { header: 'version', get: (n) => n.Version || '-' },
  { header: 'updated', get: (n) => n.LatestUpdate },
];

function readAddresses(args: string[], file: string | undefined): string {
  const parts = [...args];
  if (file) parts.push(readFileSync(file === '-' ? 0 : file, 'utf8'));
  const text = parts.join('\n').trim();
  if (!text) throw new UsageError('give at least one address (arguments or --file)');
  return text;
}

export function register(program: Command): void {
  const node = program
    .command('node')
    .description('the node monitor: NKN nodes of an account, network status, wallets (nkn.ovh-style API)')
    .option('--hash <id>', 'account ID (default: $CTL_NODE_HASH)');

  node
    .command('genid')
    .description('create a new account ID (at most 3 per client per 30 minutes)')
    .action(
      action(async () => {
        const env = await call<{ Hash: string }>('genid');
        if (outputFormat() !== 'table') return printData(env.Value);
        process.stdout.write(`${env.Value.Hash}\n`);
      }),
    );

  node
    .command('add')
    .description('add nodes by public IPv4 address; several addresses, or lines of "IP,name", add in one request')
    .argument('[addresses...]', 'IPv4 addresses (or "IP,name" pairs)')
    .option('--name <name>', 'node name (one address) or name prefix (several)', '')
    .option('--file <file>', 'read addresses from a file, one per line ("-" for stdin)')
    .action(
      action(async (args: string[], opts: { name: string; file?: string }, cmd: Command) => {
        const Hash = hashOf(cmd);
        const text = readAddresses(args, opts.file);
        // One "IP,name" line is a single named node; anything else with a separator is a list.
        const one = /^([^\s,]+)\s*,\s*([^\s,]+)$/.exec(text);
        const multiple = !one && /[\s,]/.test(text);
        const value = one ? { Multiple: false, Name: one[2], Ip: one[1] } : { Multiple: multiple, Name: opts.name, Ip: text };
        const env = await call('addnodes', { Hash, ...value });
        if (outputFormat() !== 'table') return printData(env.Value);
        process.stdout.write(env.Code === 2 ? 'added; some addresses were already in the account\n' : `${env.Value?.Info ?? 'added'}\n`);
      }),
    );

  node
    .command('list')
    .description("list the account's nodes with their last polled state")
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const env = await call<{ List: NodeEntry[] }>('getmynodes', { Hash: hashOf(cmd) });
        if (outputFormat() !== 'table') return printData(env.Value);
        if (env.Code === 3) return void process.stdout.write('no nodes in this account\n');
        await printRows(env.Value.List, NODE_COLUMNS);
      }),
    );

  node
    .command('rm')
    .description('remove nodes by id or by address (all or nothing)')
    .argument('<targets...>', 'node ids, or IPv4 addresses')
    .action(
      action(async (targets: string[], _opts: unknown, cmd: Command) => {
        const Hash = hashOf(cmd);
        const ids = targets.every((t) => /^\d+$/.test(t));
        const ips = targets.every((t) => /^\d+\.\d+\.\d+\.\d+$/.test(t));
        if (!ids && !ips) throw new UsageError('give either node ids or IPv4 addresses, not a mix');
        const env = ids
          ? await call<{ NodesId: number[] }>('rmnodes', { Hash, NodesId: targets.map(Number) })
          : await call<{ NodesId: number[] }>('rmnodesbyip', { Hash, NodesIp: targets });
        if (outputFormat() !== 'table') return printData(env.Value);
        process.stdout.write(`removed ${env.Value.NodesId.length} node(s): ${env.Value.NodesId.join(', ')}\n`);
      }),
    );

  node
    .command('details')
    .description('ask one node live for its state and neighbours')
    .argument('<id>', 'node id (see `ctl node list`)')
    .action(
      action(async (id: string, _opts: unknown, cmd: Command) => {
        if (!/^\d+$/.test(id)) throw new UsageError(`node id must be a number, got ${JSON.stringify(id)}`);
        const env = await call('getnodedetails', { Hash: hashOf(cmd), NodeId: Number(id) });
        if (outputFormat() !== 'table') return printData(env.Value);
        const st = env.Value.NodeStats;
        const r = st.NodeState?.result ?? {};
        await printObject(
          [
            ['node', env.Value.NodeId],
            ['state', r.syncState],
            ['height', r.height],
            ['uptime', duration(r.uptime)],
            ['version', r.version],
            ['public key', r.publicKey],
            ['relays/h', st.RelaysPerHour],
            ['neighbours', `${st.NeighborCount} (${st.NeighborPersist} PERSIST_FINISHED)`],
            ['ping ms', `min ${st.MinPing} / avg ${st.AvgPing} / max ${st.MaxPing}`],
            ['timing', `state ${env.Value.DebugInfo.GetnodestateTime}, neighbours ${env.Value.DebugInfo.GetneighborTime}`],
          ],
          env,
        );
      }),
    );

  node
    .command('netstatus')
    .description('NKN network statistics (last crawl, or the monitored nodes when no crawl is configured)')
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const env = await call('getnetstatus', { Hash: hashOf(cmd) });
        if (outputFormat() !== 'table') return printData(env.Value);
        if (env.Code === 3) return void process.stdout.write('no network status yet\n');
        const v = env.Value;
        await printObject(
          [
            ['nodes', v.nodes_count],
            ['persist finished', v.persist_nodes_count],
            ['last height', v.last_height],
            ['relays', v.relays],
            ['relays/h', v.relays_per_hour],
            ['average relays/h', v.average_relays],
            ['average uptime', duration(v.average_uptime)],
            ['proposals', v.proposalSubmitted],
            ['block time', `${v.average_blockTime} s (${v.average_blocksPerDay}/day)`],
            ['updated', v.latest_update],
          ],
          env,
        );
      }),
    );

  const wallets = node.command('wallets').description('wallets tracked for the account (at most 3)');
  wallets
    .command('list')
    .description('the wallets and their balances')
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const env = await call<{ Wallets: { Id: number; NetWallet: string; Balance: number }[] }>('getmywallets', { Hash: hashOf(cmd) });
        if (outputFormat() !== 'table') return printData(env.Value);
        if (env.Code === 3) return void process.stdout.write('no wallets\n');
        await printRows(env.Value.Wallets, [
          { header: 'id', get: (w) => w.Id },
          { header: 'wallet', get: (w) => w.NetWallet },
          { header: 'balance', get: (w) => (w.Balance === -100 ? 'waiting for update' : w.Balance) },
        ]);
      }),
    );
  wallets
    .command('set')
    .description('replace the wallet list (NKN addresses); --clear removes every wallet')
    .argument('[addresses...]', 'NKN wallet addresses')
    .option('--clear', 'remove all wallets')
    .action(
      action(async (addresses: string[], opts: { clear?: boolean }, cmd: Command) => {
        if (addresses.length === 0 && !opts.clear) throw new UsageError('give wallet addresses, or --clear to remove them all');
        if (addresses.length > 0 && opts.clear) throw new UsageError('--clear takes no addresses');
        const env = await call('savemysettings', { Hash: hashOf(cmd), Wallets: addresses });
        if (outputFormat() !== 'table') return printData(env.Value);
        process.stdout.write(`${env.Value.Data}\n`);
      }),
    );

  node
    .command('watch')
    .description("a live table of the account's nodes (q to quit)")
    .option('--interval <seconds>', 'refresh interval', '2')
    .option('--count <n>', 'stop after n refreshes (default: run until q or Ctrl-C)')
    .action(
      action(async (opts: { interval: string; count?: string }, cmd: Command) => {
        const interval = Number(opts.interval);
        if (!(interval >= 0.2)) throw new UsageError('--interval must be a number of seconds >= 0.2');
        const count = opts.count === undefined ? Infinity : Number(opts.count);
        if (!(count >= 1) || !Number.isInteger(count === Infinity ? 1 : count)) throw new UsageError('--count must be a positive integer');
        const Hash = hashOf(cmd);
        await watch(Hash, interval, count);
      }),
    );
}

/** `ctl node watch`: an ink app that refreshes getmynodes every interval. */
async function watch(Hash: string, interval: number, count: number): Promise<void> {
  const React = (await import('react')).default;
  const { render, Box, Text, useApp, useInput, useStdin } = await import('ink');
  const h = React.createElement;

  interface ViewState {
    nodes: NodeEntry[];
    error: string;
    at: string;
    refreshes: number;
  }

  function Watch(): React.ReactElement {
    const { exit } = useApp();
    const { isRawModeSupported } = useStdin();
    const [state, setState] = React.useState<ViewState>({ nodes: [], error: '', at: '', refreshes: 0 });
    useInput(
      (input, key) => {
        if (input === 'q' || (key.ctrl && input === 'c')) exit();
      },
      { isActive: isRawModeSupported === true },
    );
    React.useEffect(() => {
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      let done = 0;
      const tick = async () => {
        let next: Partial<ViewState>;
        try {
          const env = await call<{ List: NodeEntry[] }>('getmynodes', { Hash });
          next = { nodes: env.Code === 3 ? [] : env.Value.List, error: '' };
        } catch (e) {
          next = { error: e instanceof Error ? e.message : String(e) };
        }
        if (stopped) return;
        done++;
        setState((s) => ({ ...s, ...next, at: new Date().toLocaleTimeString(), refreshes: done }));
        if (done >= count) {
          setTimeout(() => exit(), 0);
          return;
        }
        timer = setTimeout(() => void tick(), interval * 1000);
      };
      void tick();
      return () => {
        stopped = true;
        clearTimeout(timer);
      };
    }, []);

    const mining = state.nodes.filter((n) => !n.Err).length;
    const offline = state.nodes.filter((n) => n.Err === 1).length;
    const relays = state.nodes.reduce((a, n) => a + (n.Err ? 0 : (n.RelaysPerHour ?? 0)), 0);
    const table = state.nodes.length ? renderTable(state.nodes, NODE_COLUMNS).trimEnd() : 'no nodes in this account';
    return h(
      Box,
      { flexDirection: 'column' },
      h(Text, { bold: true }, `nodes ${state.nodes.length}  mining ${mining}  offline ${offline}  relays/h ${relays}`),
      h(Text, { dimColor: true }, `updated ${state.at || '...'} every ${interval}s${isRawModeSupported ? '  (q to quit)' : ''}`),
      state.error ? h(Text, { color: 'red' }, state.error) : null,
      ...table.split('\n').map((line, i) => {
        const n = i > 0 ? state.nodes[i - 1] : undefined;
        const color = i === 0 ? undefined : n?.Err === 1 ? 'red' : n?.Err ? 'yellow' : 'green';
        return h(Text, { key: i, color, bold: i === 0 }, line);
      }),
    );
  }

  const app = render(h(Watch));
  await app.waitUntilExit();
}
