import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CTL, ROOT } from '../helpers/daemon.js';

const MAN = join(ROOT, 'man');
const pages = readdirSync(MAN).filter((f) => /\.\d$/.test(f));

function help(path: string[]): string {
  return execFileSync(process.execPath, [CTL, ...path, '--help'], { encoding: 'utf8' });
}

/** Sub-command names listed under "Commands:" in commander's help. */
function subcommands(text: string): string[] {
  const i = text.indexOf('\nCommands:\n');
  if (i < 0) return [];
  return text
    .slice(i + 11)
    .split('\n')
    .map((l) => /^ {2}([a-z][\w-]*)/.exec(l)?.[1])
    .filter((n): n is string => !!n && n !== 'help');
}

/** Every leaf command path, e.g. ['daemon', 'config', 'patch']. */
function leaves(prefix: string[] = []): string[][] {
  const subs = subcommands(help(prefix));
  if (subs.length === 0) return [prefix];
  return subs.flatMap((s) => leaves([...prefix, s]));
}

describe('man pages', () => {
  it('every page renders with man -l without warnings', () => {
    const probe = spawnSync('man', ['--version']);
    if (probe.error) {
      console.log('man is not installed: skipping the rendering check');
      return;
    }
    for (const p of pages) {
      const r = spawnSync('man', ['--warnings', '-l', join(MAN, p)], { encoding: 'utf8', env: { ...process.env, MANWIDTH: '80', MAN_KEEP_FORMATTING: '0' } });
      expect(r.status, `${p}: ${r.stderr}`).toBe(0);
      expect(r.stderr, p).toBe('');
      expect(r.stdout.length, p).toBeGreaterThan(200);
    }
  });

  it('every CLI command is documented in a man page', () => {
    const text = pages.map((p) => readFileSync(join(MAN, p), 'utf8').replace(/\\f[BIRP]|\\-/g, (m) => (m === '\\-' ? '-' : ''))).join('\n');
    const missing = leaves()
      .map((path) => path.slice(-2).join(' '))
      .filter((words) => !text.includes(words));
    expect(missing).toEqual([]);
  });
});
