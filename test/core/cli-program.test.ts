import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { Command } from 'commander';
import { ROOT } from '../helpers/daemon.js';

type ProgramModule = typeof import('../../cli/program.js');

describe('CLI command groups', async () => {
  // The compiled module, as bin/ctl loads it.
  const { GROUPS, commandWord, buildProgram } = (await import(join(ROOT, 'dist', 'cli', 'program.js'))) as ProgramModule;

  it('each group registers exactly the top-level commands it claims, so lazy loading finds them', async () => {
    const seen = new Set<string>();
    for (const g of GROUPS) {
      const p = new Command();
      (await g.load()).register(p);
      expect(p.commands.map((c) => c.name()).sort()).toEqual([...g.commands].sort());
      for (const c of g.commands) {
        expect(seen.has(c), `${c} claimed twice`).toBe(false);
        seen.add(c);
      }
    }
  });

  it('every list answers to ls, every get/show to both names, every rm/remove to both', async () => {
    const program = await buildProgram();
    const leaves: Command[] = [];
    const walk = (c: Command) => c.commands.forEach((s) => (s.commands.length ? walk(s) : leaves.push(s)));
    walk(program);
    const names = (c: Command) => [c.name(), ...c.aliases()];
    const pairs: [string, string][] = [['list', 'ls'], ['get', 'show'], ['show', 'get'], ['rm', 'remove'], ['remove', 'rm']];
    let checked = 0;
    for (const c of leaves) {
      for (const [name, alias] of pairs) {
        if (c.name() !== name) continue;
        const siblings = (c.parent as Command).commands.filter((s) => s !== c);
        if (siblings.some((s) => s.name() === alias)) continue; // a group that has both keeps both commands
        expect(names(c), `${c.parent?.name()} ${name}`).toContain(alias);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('a group option is taken after its subcommands too, but a subcommand option of the same name is the subcommand’s', async () => {
    const { shareGroupOptions } = (await import(join(ROOT, 'dist', 'cli', 'program.js'))) as ProgramModule;
    const seen: Record<string, unknown>[] = [];
    const program = new Command('ctl').enablePositionalOptions().exitOverride().option('--url <url>').option('-o, --output <f>', 'format', 'table');
    const g = program.command('gateway').option('--mgmt-key <key>');
    g.command('add').option('--api-key <k>').option('--url <u>').action((o) => void seen.push({ ...o }));
    g.command('list').action(() => void seen.push({}));
    shareGroupOptions(program);
    await program.parseAsync(['gateway', 'add', '--api-key', 'K', '--url', 'U', '--mgmt-key', 'M', '-o', 'json'], { from: 'user' });
    expect(seen.pop()).toMatchObject({ apiKey: 'K', url: 'U' });
    expect(program.opts()).toEqual({ output: 'json' });
    expect(g.opts()).toEqual({ mgmtKey: 'M' });
    await program.parseAsync(['--url', 'D', 'gateway', 'list', '--output', 'yaml'], { from: 'user' });
    expect(program.opts()).toEqual({ url: 'D', output: 'yaml' });
    // The copies stay out of the subcommand's help.
    expect(g.commands[0]!.helpInformation()).not.toContain('--mgmt-key');
  });

  it('finds the command word after global options', () => {
    expect(commandWord(['--state-dir', '/x', '-o', 'json', 'status'])).toBe('status');
    expect(commandWord(['--url', 'http://a', 'silence', 'add'])).toBe('silence');
    expect(commandWord(['--state-dir=/x', 'node', 'list'])).toBe('node');
    expect(commandWord(['--help'])).toBeUndefined();
  });

  it('loads one group for a known word and every group otherwise', async () => {
    const one = await buildProgram(['status']);
    expect(one.commands.map((c) => c.name()).sort()).toEqual(['daemon', 'status']);
    const all = await buildProgram(['--help']);
    expect(all.commands.length).toBe(GROUPS.reduce((n, g) => n + g.commands.length, 0));
  });
});
