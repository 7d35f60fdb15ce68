import { Argument, type Command, type Option } from 'commander';
import { clientOptions, request, setClientOptions } from './client.js';

/**
 * `ctl completion bash|zsh|fish`: a shell completion script for commands, subcommands and options.
 * The script is generated from the command tree itself (every group loaded), so a new command or
 * option is completed without touching this file. Values that live in the daemon (receiver names,
 * silence ids, provider ids) are asked for when completing, by the hidden `ctl __complete KIND`.
 */
export function register(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action(async (shell: Shell) => {
      // Imported here: program.ts lists this module among its lazily loaded groups.
      const { buildProgram } = await import('./program.js');
      process.stdout.write(completionScript(shell, await buildProgram()));
    });
  program
    .command('__complete', { hidden: true })
    .description('print completion values from the running daemon, one a line (silent when there is none)')
    .addArgument(new Argument('<kind>').choices(Object.keys(VALUE_KINDS)))
    .action(async (kind: ValueKind) => {
      setClientOptions({ ...clientOptions(), timeoutMs: COMPLETE_TIMEOUT_MS });
      try {
        const values = await VALUE_KINDS[kind]();
        if (values.length) process.stdout.write(values.join('\n') + '\n');
      } catch {
        // No daemon, an old one, a slow one: complete nothing rather than print into the command line.
      }
    });
}

/** How long a completion waits for the daemon: a shell's TAB must not hang. */
const COMPLETE_TIMEOUT_MS = 1000;

/** What `ctl __complete KIND` prints, each read from the daemon over the control socket (or --url). */
const VALUE_KINDS = {
  receivers: async () => (await request<{ name: string }[]>({ host: 'alertmanager', path: '/api/v2/receivers' })).map((r) => r.name),
  // Silences that can still be updated or expired.
  silences: async () => (await request<{ id: string; status: { state: string } }[]>({ host: 'alertmanager', path: '/api/v2/silences' })).filter((s) => s.status.state !== 'expired').map((s) => s.id),
  providers: async () => (await request<{ providers: { id: string }[] }>({ host: 'gateway', path: '/api/providers', headers: gatewayKey() })).providers.map((p) => p.id),
};
type ValueKind = keyof typeof VALUE_KINDS;

function gatewayKey(): Record<string, string> {
  const key = process.env.CTL_GATEWAY_KEY || process.env.CTL_GATEWAY_API_KEY;
  return key ? { Authorization: `Bearer ${key}` } : {};
}

/**
 * Which options and operands take daemon values: by command path, the option flags (long and short)
 * or `arg` for the command's operands. test/cli/completion.test.ts checks every path and flag exists.
 */
export const VALUE_SOURCES: { paths: string[]; option?: string; arg?: true; kind: ValueKind }[] = [
  { paths: ['alert query', 'alert groups'], option: '--receiver', kind: 'receivers' },
  { paths: ['silence update', 'silence expire'], arg: true, kind: 'silences' },
  { paths: ['gateway provider get', 'gateway provider rm', 'gateway provider test'], arg: true, kind: 'providers' },
  {
    paths: ['gateway assess', 'gateway registered-key issue', 'gateway registered-key check', 'gateway resilience reset', 'gateway cooldowns clear', 'gateway cache reasoning'],
    option: '--provider',
    kind: 'providers',
  },
];

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

/** One command path ('' for ctl itself, 'silence add', ...) with the words that may follow it. */
export interface CompletionNode {
  path: string;
  commands: string[];
  options: string[];
  /** Flags (long and short) whose value is a daemon value, with its kind. */
  optionValues: Record<string, ValueKind>;
  /** The kind of daemon value the command's operands are. */
  argValues?: ValueKind;
  /** Flags that take a value (the word after one is its value). */
  valueFlags: string[];
}

/** Every command of the tree with its subcommand names (and aliases) and visible option flags. */
export function completionTree(program: Command): CompletionNode[] {
  const nodes: CompletionNode[] = [];
  const walk = (cmd: Command, path: string[]) => {
    const visible = cmd.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden);
    const shown = cmd.options.filter((o) => !(o as Option & { hidden: boolean }).hidden);
    const flags = (o: Option) => [o.short, o.long].filter((f): f is string => !!f);
    const node: CompletionNode = {
      path: path.join(' '),
      commands: visible.flatMap((c) => [c.name(), ...c.aliases()]),
      options: [...shown.flatMap(flags), '--help'],
      optionValues: {},
      valueFlags: shown.filter((o) => o.required || o.optional).flatMap(flags),
    };
    const canonical = canonicalPath.get(cmd) ?? node.path;
    for (const v of VALUE_SOURCES) {
      if (!v.paths.includes(canonical)) continue;
      if (v.arg) node.argValues = v.kind;
      const o = v.option ? cmd.options.find((x) => x.long === v.option) : undefined;
      if (o) for (const f of [o.short, o.long]) if (f) node.optionValues[f] = v.kind;
    }
    nodes.push(node);
    // Aliases reach the same node: bash and fish look the path up by the typed word, so list each name.
    for (const c of visible) {
      canonicalPath.set(c, canonical ? `${canonical} ${c.name()}` : c.name());
      for (const name of [c.name(), ...c.aliases()]) walk(c, [...path, name]);
    }
  };
  const canonicalPath = new Map<Command, string>();
  walk(program, []);
  return nodes;
}

export function completionScript(shell: Shell, program: Command): string {
  const tree = completionTree(program);
  if (shell === 'bash') return bashScript(tree);
  if (shell === 'zsh') return zshScript(tree);
  return fishScript(tree);
}

// Every word is a command name or a flag ([A-Za-z0-9-]), so single quotes need no escaping; checked anyway.
function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The shell function shared by bash and zsh (zsh runs it through bashcompinit). */
function bashScript(tree: CompletionNode[]): string {
  const subs = tree.map((n) => `    ${q(n.path)}) subs=${q(n.commands.join(' '))}; opts=${q(n.options.join(' '))} ;;`).join('\n');
  const values = tree
    .filter((n) => n.argValues || Object.keys(n.optionValues).length)
    .map((n) => {
      const arms = Object.entries(groupBy(n.optionValues)).map(([kind, flags]) => `${flags.join('|')}) echo ${kind} ;;`);
      // After an option that takes some other value, the word is that value, not an operand.
      const others = n.valueFlags.filter((f) => !(f in n.optionValues));
      if (others.length) arms.push(`${others.join('|')}) ;;`);
      if (n.argValues) arms.push(`*) echo ${n.argValues} ;;`);
      return `    ${q(n.path)}) case "$2" in ${arms.join(' ')} esac ;;`;
    })
    .join('\n');
  return `# ctl completion for bash: source <(ctl completion bash)
_ctl_completion() {
  # (not \`path\`: in zsh that is PATH, and a local one empties it)
  local cur prev cmdpath word i subs opts next kind
  local -a global=()
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev=""
  ((COMP_CWORD > 1)) && prev="\${COMP_WORDS[COMP_CWORD - 1]}"
  cmdpath=""
  # Walk the words before the cursor; a word that names a subcommand of the path so far extends it.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    # Where the daemon is, for the values asked of it (a --url after a command word may be that command's).
    if [[ ( "$word" == --state-dir || "$word" == --socket || ( "$word" == --url && -z "$cmdpath" ) ) ]] && ((i + 1 < COMP_CWORD)); then
      global+=("$word" "\${COMP_WORDS[i + 1]}")
    fi
    [[ "$word" == -* ]] && continue
    _ctl_completion_node "$cmdpath"
    if [[ " $subs " == *" $word "* ]]; then
      cmdpath="\${cmdpath:+$cmdpath }$word"
    fi
  done
  _ctl_completion_node "$cmdpath"
  # Receiver names, silence ids, provider ids: asked of the running daemon (nothing when there is none).
  kind="$(_ctl_completion_value "$cmdpath" "$prev")"
  if [[ -n "$kind" && "$cur" != -* ]]; then
    COMPREPLY=($(compgen -W "$(ctl "\${global[@]}" __complete "$kind" 2>/dev/null)" -- "$cur"))
    return
  fi
  if [[ "$cur" == -* ]]; then next="$opts"; else next="$subs"; fi
  COMPREPLY=($(compgen -W "$next" -- "$cur"))
}
_ctl_completion_node() {
  subs=""; opts=""
  case "$1" in
${subs}
  esac
}
_ctl_completion_value() {
  case "$1" in
${values}
  esac
}
complete -F _ctl_completion ctl
`;
}

function groupBy(values: Record<string, ValueKind>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [flag, kind] of Object.entries(values)) (out[kind] ??= []).push(flag);
  return out;
}

function zshScript(tree: CompletionNode[]): string {
  return `#compdef ctl
# ctl completion for zsh: source <(ctl completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bashScript(tree).split('\n').slice(1).join('\n')}`;
}

function fishScript(tree: CompletionNode[]): string {
  const lines = ['# ctl completion for fish: ctl completion fish | source', 'complete -c ctl -e', 'complete -c ctl -f'];
  lines.push(`function __ctl_path
    set -l words (commandline -opc)
    set -e words[1]
    set -l path ''
    for w in $words
        string match -q -- '-*' $w; and continue
        if contains -- $w (__ctl_subs $path)
            if test -z "$path"; set path $w; else; set path "$path $w"; end
        end
    end
    echo $path
end`);
  lines.push('function __ctl_subs\n    switch "$argv[1]"');
  for (const n of tree) lines.push(`        case ${q(n.path)}\n            printf '%s\\n' ${n.commands.map(q).join(' ')}`.trimEnd());
  lines.push('    end\nend');
  // Receiver names, silence ids, provider ids from the running daemon (where --state-dir, --socket or
  // --url on the command line say it is); nothing when there is none.
  lines.push(`function __ctl_values
    set -l words (commandline -opc)
    set -l global
    for i in (seq (count $words))
        if contains -- $words[$i] --state-dir --socket --url; and test $i -lt (count $words)
            set -a global $words[$i] $words[(math $i + 1)]
        end
    end
    ctl $global __complete $argv 2>/dev/null
end`);
  for (const n of tree) {
    const cond = `test (__ctl_path) = ${q(n.path)}`;
    if (n.commands.length) lines.push(`complete -c ctl -n ${q(cond)} -a ${q(n.commands.join(' '))}`);
    if (n.argValues) lines.push(`complete -c ctl -n ${q(cond)} -a ${q(`(__ctl_values ${n.argValues})`)}`);
    for (const o of n.options) {
      const flag = o.startsWith('--') ? `-l ${q(o.slice(2))}` : `-s ${q(o.slice(1))}`;
      const kind = n.optionValues[o];
      lines.push(`complete -c ctl -n ${q(cond)} ${flag}${kind ? ` -x -a ${q(`(__ctl_values ${kind})`)}` : ''}`);
    }
  }
  return lines.join('\n') + '\n';
}
