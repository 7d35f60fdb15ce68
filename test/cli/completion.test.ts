import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers/daemon.js';

// Runs the built CLI (`npm run build` first), as a user's shell would.
const ctl = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, 'bin', 'ctl'), ...args], { encoding: 'utf8' });
const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

function script(shell: string): string {
  const r = ctl('completion', shell);
  expect(r.status, r.stderr).toBe(0);
  const file = join(mkdtempSync(join(tmpdir(), 'ctl-completion-')), `ctl.${shell}`);
  writeFileSync(file, r.stdout);
  return file;
}

describe('ctl completion', () => {
  it('bash: completes commands, subcommands and options from the command tree', () => {
    const file = script('bash');
    const complete = (...words: string[]) =>
      execFileSync('bash', ['-c', 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _ctl_completion; printf "%s\\n" "${COMPREPLY[@]}"', 'x', file, ...words], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean);
    expect(complete('ctl', 'sil')).toEqual(['silence']);
    expect(complete('ctl', 'silence', 'a')).toEqual(['add']);
    expect(complete('ctl', 'silence', 'add', '--com')).toEqual(['--comment']);
    // Options before the command word do not end the walk; a deeper group works the same way.
    expect(complete('ctl', '-o', 'json', 'gateway', 'prov')).toContain('provider');
    expect(complete('ctl', 'compl')).toEqual(['completion']);
  });

  it('zsh and fish scripts are produced and parse', () => {
    const zsh = script('zsh');
    const fish = script('fish');
    expect(readFileSync(zsh, 'utf8')).toMatch(/^#compdef ctl\n[\s\S]*bashcompinit[\s\S]*'silence add'\) subs=''; opts='[^']*--comment/);
    expect(readFileSync(fish, 'utf8')).toContain("complete -c ctl -n 'test (__ctl_path) = '\\''silence add'\\''' -l 'comment'");
    if (has('zsh')) expect(spawnSync('zsh', ['-n', zsh]).status).toBe(0);
    else console.log('zsh not installed: zsh syntax check skipped');
    if (has('fish')) expect(spawnSync('fish', ['--no-execute', fish]).status).toBe(0);
    else console.log('fish not installed: fish syntax check skipped');
  });

  it('an unknown shell is a usage error (exit 2)', () => {
    const r = ctl('completion', 'tcsh');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/bash, zsh, fish/);
  });
});
