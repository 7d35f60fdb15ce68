import { afterAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { buildProgram } from '../../cli/program.js';
import { completionTree, VALUE_SOURCES } from '../../cli/completion.js';

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

  it('every command path and option the daemon values are offered for exists in the command tree', async () => {
    const tree = new Map(completionTree(await buildProgram()).map((n) => [n.path, n]));
    for (const v of VALUE_SOURCES) {
      for (const path of v.paths) {
        const node = tree.get(path);
        expect(node, path).toBeDefined();
        if (v.option) expect(node!.optionValues[v.option], `${path} ${v.option}`).toBe(v.kind);
        if (v.arg) expect(node!.argValues, path).toBe(v.kind);
      }
    }
  });

  it('an unknown shell is a usage error (exit 2)', () => {
    const r = ctl('completion', 'tcsh');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/bash, zsh, fish/);
  });
});

describe('ctl completion: values from the running daemon', () => {
  let d: TestDaemon | undefined;
  afterAll(async () => {
    await d?.cleanup();
  });

  // `ctl` in the completing shell is the built CLI; CTL_SOCKET (or --state-dir on the line) says where the daemon is.
  const complete = async (env: Record<string, string>, ...words: string[]) => {
    const file = script('bash');
    const { stdout } = await promisify(execFile)(
      'bash',
      ['-c', `ctl() { "${process.execPath}" "${join(ROOT, 'bin', 'ctl')}" "$@"; }; source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _ctl_completion; printf "%s\\n" "\${COMPREPLY[@]}"`, 'x', file, ...words],
      // An empty value unsets the variable.
      { env: Object.fromEntries(Object.entries({ ...process.env, ...env }).filter(([, v]) => v !== '')), encoding: 'utf8' },
    );
    return stdout.split('\n').filter(Boolean).sort();
  };

  it('bash: receivers, silence ids and provider ids are asked of the daemon; nothing (and no error) without one', async () => {
    const nowhere = { CTL_SOCKET: join(mkdtempSync(join(tmpdir(), 'ctl-nodaemon-')), 'control.socket') };
    expect(await complete(nowhere, 'ctl', 'alert', 'query', '--receiver', '')).toEqual([]);
    expect(spawnSync(process.execPath, [join(ROOT, 'bin', 'ctl'), '__complete', 'receivers'], { env: { ...process.env, ...nowhere }, encoding: 'utf8' })).toMatchObject({ status: 0, stdout: '', stderr: '' });

    d = await startDaemon({
      files: {
        'alertmanager.yml': 'route:\n  receiver: team-ops\n  routes:\n    - receiver: team-db\n      matchers: [team="db"]\nreceivers:\n  - name: team-ops\n  - name: team-db\n  - name: pager\n',
      },
    });
    const at = { CTL_SOCKET: d.socket };
    const sil = await d.request('alertmanager', 'POST', '/api/v2/silences', {
      matchers: [{ name: 'team', value: 'db', isRegex: false, isEqual: true }],
      startsAt: new Date().toISOString(),
      endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      createdBy: 'test',
      comment: 'completion',
    });
    expect(sil.status, sil.text).toBe(200);
    const silenceId = sil.json.silenceID as string;
    for (const id of ['openai-main', 'ollama-local']) {
      const p = await d.request('gateway', 'POST', '/api/providers', { id, kind: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-test-00000000000', models: ['m1'] });
      expect(p.status, p.text).toBe(201);
    }

    expect(await complete(at, 'ctl', 'alert', 'query', '--receiver', '')).toEqual(['pager', 'team-db', 'team-ops']);
    expect(await complete(at, 'ctl', 'alert', 'groups', '-r', 'team-')).toEqual(['team-db', 'team-ops']);
    expect(await complete(at, 'ctl', 'silence', 'expire', '')).toEqual([silenceId]);
    // After an option that takes some other value, the word is that value: no silence ids.
    expect(await complete(at, 'ctl', 'silence', 'update', '--comment', '')).toEqual([]);
    expect(await complete(at, 'ctl', 'gateway', 'provider', 'rm', 'o')).toEqual(['ollama-local', 'openai-main']);
    expect(await complete(at, 'ctl', 'gateway', 'cooldowns', 'clear', '--provider', 'op')).toEqual(['openai-main']);
    // Options still complete as options; --state-dir on the command line says where the daemon is.
    expect(await complete(at, 'ctl', 'silence', 'expire', '--he')).toEqual(['--help']);
    expect(await complete({ CTL_SOCKET: '', CTL_STATE_DIR: nowhere.CTL_SOCKET }, 'ctl', '--state-dir', d.dir, 'gateway', 'provider', 'get', '')).toEqual(['ollama-local', 'openai-main']);

    // zsh runs the same function through bashcompinit, which calls it with sh emulation (0-based
    // arrays) and leaves the prefix matching to zsh; fish has its own script.
    const bin = mkdtempSync(join(tmpdir(), 'ctl-bin-'));
    writeFileSync(join(bin, 'ctl'), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin', 'ctl')}" "$@"\n`, { mode: 0o755 });
    const shellEnv = { ...process.env, ...at, PATH: `${bin}:${process.env.PATH}` };
    const lines = (out: string) => out.split('\n').filter(Boolean).sort();
    if (has('zsh')) {
      const zsh = script('zsh');
      const run = `autoload -U compinit && compinit -u; source "$1"; emulate sh; setopt kshglob noshglob braceexpand; COMP_WORDS=(ctl alert query --receiver ""); COMP_CWORD=4; _ctl_completion; print -l -- "\${COMPREPLY[@]}"`;
      const { stdout } = await promisify(execFile)('zsh', ['-c', run, 'x', zsh], { env: shellEnv, encoding: 'utf8' });
      expect(lines(stdout)).toEqual(['pager', 'team-db', 'team-ops']);
    } else console.log('zsh not installed: zsh completion run skipped');
    if (has('fish')) {
      const fish = script('fish');
      const { stdout } = await promisify(execFile)('fish', ['-c', `source ${fish}; complete -C 'ctl alert query --receiver team-'; complete -C 'ctl silence expire '`], { env: shellEnv, encoding: 'utf8' });
      expect(lines(stdout)).toEqual([silenceId, 'team-db', 'team-ops'].sort());
    } else console.log('fish not installed: fish completion run skipped');
  });
});
