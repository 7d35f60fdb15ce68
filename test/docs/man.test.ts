import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import type { Command } from 'commander';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/daemon.js';

const MAN = join(ROOT, 'man');
const pages = readdirSync(MAN).filter((f) => /\.\d$/.test(f));

/** Every leaf command path, e.g. ['daemon', 'config', 'patch'], from the compiled command tree. */
function leaves(cmd: Command, prefix: string[] = []): string[][] {
  const subs = cmd.commands.filter((c) => c.name() !== 'help');
  if (subs.length === 0) return [prefix];
  return subs.flatMap((c) => leaves(c, [...prefix, c.name()]));
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

  it('every CLI command is documented in a man page', async () => {
    const text = pages.map((p) => readFileSync(join(MAN, p), 'utf8').replace(/\\f[BIRP]|\\-/g, (m) => (m === '\\-' ? '-' : ''))).join('\n');
    const { buildProgram } = (await import(join(ROOT, 'dist', 'cli', 'program.js'))) as { buildProgram: () => Promise<Command> };
    const missing = leaves(await buildProgram())
      .map((path) => path.slice(-2).join(' '))
      .filter((words) => !text.includes(words));
    expect(missing).toEqual([]);
  });
});
