import { Command, Option } from 'commander';
import { setClientOptions } from './client.js';
import { setOutputFormat, type OutputFormat } from './output.js';
import { cliVersion } from './version.js';

/** A module of commands and the top-level command names it registers. */
export interface CommandGroup {
  commands: string[];
  load: () => Promise<{ register(program: Command): void }>;
}

export const GROUPS: CommandGroup[] = [
  { commands: ['serve'], load: () => import('./serve.js') },
  { commands: ['status', 'daemon'], load: () => import('./daemon.js') },
  { commands: ['cluster'], load: () => import('./cluster.js') },
  { commands: ['silence', 'alert', 'config'], load: () => import('./alertmanager.js') },
  { commands: ['ratelimit'], load: () => import('./ratelimit.js') },
  { commands: ['gateway'], load: () => import('./gateway.js') },
  { commands: ['pipeline', 'post', 'source', 'category', 'style', 'proposal'], load: () => import('./pipeline.js') },
  { commands: ['node'], load: () => import('./nodes.js') },
  { commands: ['top'], load: () => import('./top/index.js') },
  { commands: ['backup'], load: () => import('./backup.js') },
];

/** Global options that take a value (their value is not the command word). */
const VALUE_OPTIONS = new Set(['--state-dir', '--socket', '--url', '-o', '--output']);

/** The first operand of argv (the top-level command word), skipping global options and their values. */
export function commandWord(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}

/**
 * The command tree. With `args` (argv after the script), only the group that owns the command word is
 * loaded, so `ctl status` does not load the code of every other command; without a known word (help,
 * a typo) every group is loaded so help and error messages list them all.
 */
export async function buildProgram(args?: readonly string[]): Promise<Command> {
  const program = new Command('ctl')
    .description('one daemon, one CLI: alert manager API, Core API, rate limiter, model gateway, content pipeline, node monitor')
    .version(cliVersion(), '-V, --version')
    .option('--state-dir <dir>', 'state directory (default: $CTL_STATE_DIR, /var/lib/ctl for root, else ~/.local/state/ctl)')
    .option('--socket <path>', 'control socket (default: STATE_DIR/control.socket)')
    .option('--url <url>', 'talk to a TCP listener instead of the socket (e.g. http://127.0.0.1:9093)')
    .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json', 'yaml']).default('table'))
    .showHelpAfterError()
    .exitOverride();

  program.hook('preAction', (_this, cmd) => {
    const g = cmd.optsWithGlobals<{ stateDir?: string; socket?: string; url?: string; output: OutputFormat }>();
    setClientOptions({ stateDir: g.stateDir, socket: g.socket, url: g.url });
    setOutputFormat(g.output);
  });

  const word = args ? commandWord(args) : undefined;
  const owner = word === undefined ? undefined : GROUPS.find((g) => g.commands.includes(word));
  for (const group of owner ? [owner] : GROUPS) (await group.load()).register(program);
  addConventionalAliases(program);
  return program;
}

/** Alternative names every command of that name answers to, so no one has to remember which one a group chose. */
const ALIASES: Record<string, string[]> = { list: ['ls'], get: ['show'], show: ['get'], rm: ['remove'], remove: ['rm'] };

/**
 * `list` answers to `ls`, `get` and `show` to each other, `rm` and `remove` likewise, in every group
 * (existing commands and aliases win: a group that has both names keeps both commands).
 */
export function addConventionalAliases(cmd: Command): void {
  const taken = new Set(cmd.commands.flatMap((c) => [c.name(), ...c.aliases()]));
  for (const sub of cmd.commands) {
    for (const alias of ALIASES[sub.name()] ?? []) {
      if (taken.has(alias)) continue;
      sub.alias(alias);
      taken.add(alias);
    }
    addConventionalAliases(sub);
  }
}
