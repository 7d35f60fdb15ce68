import { Argument, type Command, type Option } from 'commander';

/**
 * `ctl completion bash|zsh|fish`: a shell completion script for commands, subcommands and options.
 * The script is generated from the command tree itself (every group loaded), so a new command or
 * option is completed without touching this file.
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
}

const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

/** One command path ('' for ctl itself, 'silence add', ...) with the words that may follow it. */
export interface CompletionNode {
  path: string;
  commands: string[];
  options: string[];
}

/** Every command of the tree with its subcommand names (and aliases) and visible option flags. */
export function completionTree(program: Command): CompletionNode[] {
  const nodes: CompletionNode[] = [];
  const walk = (cmd: Command, path: string[]) => {
    const visible = cmd.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden);
    const options = cmd.options
      .filter((o) => !(o as Option & { hidden: boolean }).hidden)
      .flatMap((o) => [o.short, o.long].filter((f): f is string => !!f));
    nodes.push({ path: path.join(' '), commands: visible.flatMap((c) => [c.name(), ...c.aliases()]), options: [...options, '--help'] });
    // Aliases reach the same node: bash and fish look the path up by the typed word, so list each name.
    for (const c of visible) for (const name of [c.name(), ...c.aliases()]) walk(c, [...path, name]);
  };
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
  return `# ctl completion for bash: source <(ctl completion bash)
_ctl_completion() {
  local cur path word i subs opts next
  cur="\${COMP_WORDS[COMP_CWORD]}"
  path=""
  # Walk the words before the cursor; a word that names a subcommand of the path so far extends it.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    [[ "$word" == -* ]] && continue
    _ctl_completion_node "$path"
    if [[ " $subs " == *" $word "* ]]; then
      path="\${path:+$path }$word"
    fi
  done
  _ctl_completion_node "$path"
  if [[ "$cur" == -* ]]; then next="$opts"; else next="$subs"; fi
  COMPREPLY=($(compgen -W "$next" -- "$cur"))
}
_ctl_completion_node() {
  subs=""; opts=""
  case "$1" in
${subs}
  esac
}
complete -F _ctl_completion ctl
`;
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
  for (const n of tree) {
    const cond = `test (__ctl_path) = ${q(n.path)}`;
    if (n.commands.length) lines.push(`complete -c ctl -n ${q(cond)} -a ${q(n.commands.join(' '))}`);
    for (const o of n.options) {
      const flag = o.startsWith('--') ? `-l ${q(o.slice(2))}` : `-s ${q(o.slice(1))}`;
      lines.push(`complete -c ctl -n ${q(cond)} ${flag}`);
    }
  }
  return lines.join('\n') + '\n';
}
