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
  { commands: ['completion', '__complete'], load: () => import('./completion.js') },
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
    .exitOverride()
    // Each command parses only the options between its own word and its subcommand's (see shareGroupOptions);
    // set before the groups register so every subcommand inherits it.
    .enablePositionalOptions();

  program.hook('preAction', () => {
    // The program's own values (a subcommand's --url, e.g. a webhook's target, is that subcommand's).
    const g = program.opts<{ stateDir?: string; socket?: string; url?: string; output: OutputFormat }>();
    setClientOptions({ stateDir: g.stateDir, socket: g.socket, url: g.url });
    setOutputFormat(g.output);
  });

  const word = args ? commandWord(args) : undefined;
  const owner = word === undefined ? undefined : GROUPS.find((g) => g.commands.includes(word));
  for (const group of owner ? [owner] : GROUPS) (await group.load()).register(program);
  addConventionalAliases(program);
  shareGroupOptions(program);
  return program;
}

interface OwnedOption {
  owner: Command;
  option: Option;
}

/**
 * A group's options (the global `--url`/`-o`, `gateway --mgmt-key`, `pipeline --token`, ...) are accepted
 * after any of its subcommands too, but a subcommand's own option of the same name wins: `gateway provider
 * add --api-key K` gives K to the provider and `gateway webhook set ID --url U` sets the webhook's URL.
 * Commander alone lets a group take every flag it knows wherever it appears, so a subcommand's option of the
 * same name never reached it. Here every command parses only its own options (positional options) and gets a
 * hidden copy of each ancestor option it does not define itself; the copy hands its value to the owner.
 */
export function shareGroupOptions(cmd: Command, inherited: OwnedOption[] = []): void {
  const offered = [...inherited, ...ownOf(cmd)];
  for (const sub of cmd.commands) {
    const longs = new Set(sub.options.map((o) => o.long));
    const shorts = new Set(sub.options.map((o) => o.short).filter(Boolean));
    const passed = offered.filter((x) => !longs.has(x.option.long));
    for (const { owner, option } of passed) {
      sub.addOption(copyOf(option, shorts));
      const attr = option.attributeName();
      // Runs after commander's own listener has stored (and parsed) the value on the copy.
      sub.on(`option:${option.name()}`, () => owner.setOptionValueWithSource(attr, sub.getOptionValue(attr), 'cli'));
    }
    shareGroupOptions(sub, passed);
  }
}

/** A command's own options that its subcommands may use (not --version: that one only means "print it"). */
function ownOf(cmd: Command): OwnedOption[] {
  return cmd.options.filter((o) => o.long !== '--version' && !(o as Option & { hidden: boolean }).hidden).map((o) => ({ owner: cmd, option: o as Option }));
}

function copyOf(option: Option, takenShorts: Set<string | undefined>): Option {
  const arg = /\s([<[].*[>\]])$/.exec(option.flags)?.[1];
  const names = option.short && !takenShorts.has(option.short) ? `${option.short}, ${option.long}` : option.long!;
  const copy = new Option(arg ? `${names} ${arg}` : names, option.description).hideHelp();
  copy.argChoices = option.argChoices;
  copy.parseArg = option.parseArg;
  copy.variadic = option.variadic;
  return copy;
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
