/**
 * Every option of every `ctl gateway` subcommand reaches the daemon with its value.
 *
 * The list of commands and options comes from the commander program itself, so a new option is exercised
 * without anyone adding a case; one whose value does not reach the request fails here unless LOCAL below
 * says why it never leaves the terminal. Each run talks to a fake daemon on its own unix socket that
 * records what arrives. The Authorization header is left out of the comparison: it carries the group's
 * --mgmt-key, and a subcommand's own option ending up there (as `provider add --api-key` once did) is
 * exactly the bug this guards against.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Command, Option } from 'commander';
import { ROOT } from '../helpers/daemon.js';

type ProgramModule = typeof import('../../cli/program.js');

/** Options whose value stays on this machine by design, with the reason (each must still exist). */
const LOCAL: Record<string, string> = {
  'gateway image --out': 'where the answer is written',
  'gateway speak --out': 'where the answer is written',
  'gateway file content --out': 'where the answer is written',
  'gateway batch wait --out': 'where the results are written',
  'gateway batch wait --errors': 'where the error lines are written',
  'gateway batch wait --interval': 'how often the CLI polls',
  'gateway oauth login --browser': 'picks the flow; would wait for a browser sign-in',
  'gateway assess --show': 'prints the last assessment instead of running one',
  'gateway eval run --no-wait': 'whether the CLI polls for the result',
};

/** Options that only mean something together with another one: that one is given too (@file: a file). */
const NEEDS: Record<string, string[]> = {
  'gateway skill install --version': ['--from', 'registry'],
  'gateway compress preview --command': ['--tool-output'],
  'gateway image --mask': ['--edit', '@file'],
  'gateway usage --limit': ['--logs'],
  'gateway cooldowns clear --model': ['--provider', 'p1'],
};

/** Commands that refuse to send anything without one of several options: the base invocation has this one. */
const BASE: Record<string, string[]> = {
  'gateway agent-skill add': ['--prompt', 'be brief'],
  'gateway proxy assign': ['--none'],
  'gateway eval run': ['--model', 'm1'],
  'gateway budget set': ['--daily', '1'],
  'gateway limits set': ['--value', 'v1'],
};

interface Recorded {
  text: string;
}

interface Outcome {
  requests: Recorded[];
  exitCode: number | undefined;
}

class Exit extends Error {
  constructor(readonly code: number | undefined) {
    super(`exit ${code}`);
  }
}

let dir: string;
let mod: ProgramModule;
let n = 0;
const cwd = process.cwd();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctl-gw-options-'));
  // Commands that write a file (a required --out) write it here.
  process.chdir(dir);
  mod = (await import(join(ROOT, 'dist', 'cli', 'program.js'))) as ProgramModule;
});
afterAll(() => {
  process.chdir(cwd);
  rmSync(dir, { recursive: true, force: true });
});

/** One ctl invocation in-process against a fresh recording fake daemon. */
async function run(argv: string[]): Promise<Outcome> {
  const sock = join(dir, `d${n++}.sock`);
  const requests: Recorded[] = [];
  let last = Date.now();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.entries(req.headers)
        .filter(([k]) => k !== 'authorization')
        .map(([k, v]) => `${k}: ${String(v)}`)
        .join('\n');
      let url = req.url ?? '';
      try {
        url = decodeURIComponent(url.replace(/\+/g, ' '));
      } catch {
        /* keep it raw */
      }
      requests.push({ text: `${req.method} ${url}\n${headers}\n\n${Buffer.concat(chunks).toString('utf8')}` });
      last = Date.now();
      res.setHeader('content-type', 'application/json');
      // Commands that look an API key up by name or id first find every value given on the command line.
      if (req.method === 'GET' && req.url === '/api/keys') res.end(JSON.stringify({ keys: argv.map((v) => ({ id: `id-${v}`, name: v })) }));
      // Anything that polls for an end state (batch wait) sees one at once.
      else res.end(JSON.stringify({ status: 'cancelled' }));
    });
  });
  await new Promise<void>((r) => server.listen(sock, r));
  const program = await mod.buildProgram(['gateway']);
  let exitCode: number | undefined;
  const exit = vi.spyOn(process, 'exit').mockImplementation(((code?: number) => {
    exitCode ??= code ?? 0;
    throw new Exit(code);
  }) as never);
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  const stdin = Object.getOwnPropertyDescriptor(process, 'stdin')!;
  Object.defineProperty(process, 'stdin', { value: Readable.from([Buffer.from(`Stdin${n}x`)]), configurable: true });
  let settled = false;
  const parse = program
    .parseAsync(['node', 'ctl', '--socket', sock, ...argv])
    .catch((e: unknown) => {
      if (e instanceof Exit) return;
      const c = (e as { exitCode?: number }).exitCode;
      exitCode ??= typeof c === 'number' ? (c === 0 ? 0 : 2) : (e as Error).constructor.name === 'UsageError' ? 2 : 1;
    })
    .finally(() => (settled = true));
  // Commands that wait (poll, stream) are left once the requests have been quiet for a moment.
  const started = Date.now();
  while (!settled && Date.now() - started < 5000 && !(requests.length > 0 && Date.now() - last > 400)) await new Promise((r) => setTimeout(r, 20));
  exit.mockRestore();
  out.mockRestore();
  err.mockRestore();
  Object.defineProperty(process, 'stdin', stdin);
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  void parse;
  return { requests, exitCode };
}

function leaves(c: Command, path: string[] = []): { path: string[]; cmd: Command }[] {
  if (c.commands.length === 0) return [{ path, cmd: c }];
  return c.commands.flatMap((s) => leaves(s, [...path, s.name()]));
}

/** Own options (not the hidden copies of the group's and the program's options). */
const ownOptions = (c: Command): Option[] => (c.options as Option[]).filter((o) => !o.hidden);

/** Values to try for an option or argument, each with the text that must then appear in a request. */
function candidates(id: number, choices?: readonly string[], defaultValue?: unknown, parsed = false): { value: string; marker: string }[] {
  if (choices?.length) return choices.filter((c) => c !== defaultValue).map((c) => ({ value: c, marker: c }));
  // An option with its own parser most likely wants a number: try one first.
  if (parsed) return [{ value: String(7300 + id), marker: String(7300 + id) }, ...candidates(id)];
  const token = `Zq${id}x`;
  const file = join(dir, `f${id}.json`);
  writeFileSync(file, JSON.stringify({ model: token, input: token, text: token }) + '\n');
  return [
    { value: token, marker: token },
    { value: String(7300 + id), marker: String(7300 + id) },
    { value: `0.${37 + id}`, marker: `0.${37 + id}` },
    { value: `k${id}=${token}`, marker: token },
    { value: file, marker: token },
    { value: '07:41', marker: '07:41' },
    { value: JSON.stringify({ zq: token }), marker: token },
    { value: 'gpt-zq', marker: 'gpt-zq' },
  ];
}

/** The CLI refused the invocation: a usage error, or a failure before sending anything. */
const usageFailure = (o: Outcome) => o.exitCode === 2 || (o.requests.length === 0 && o.exitCode !== undefined && o.exitCode !== 0);
const joined = (o: Outcome) => o.requests.map((r) => r.text).join('\n----\n');

describe('ctl gateway: every subcommand option reaches the daemon', () => {
  let cases: { name: string; path: string[]; cmd: Command }[] = [];

  beforeAll(async () => {
    const program = await mod.buildProgram(['gateway']);
    const gw = program.commands.find((c) => c.name() === 'gateway')!;
    cases = leaves(gw, ['gateway']).map((l) => ({ name: l.path.join(' '), ...l }));
  });

  it('knows the gateway commands and their options', () => {
    expect(cases.length).toBeGreaterThan(100);
    const all = new Set(cases.flatMap((c) => ownOptions(c.cmd).map((o) => `${c.name} ${o.long}`)));
    for (const key of [...Object.keys(LOCAL), ...Object.keys(NEEDS)]) expect(all, `${key} is listed but does not exist`).toContain(key);
    for (const key of Object.keys(BASE)) expect(cases.map((c) => c.name), `${key} is listed but does not exist`).toContain(key);
  });

  it('sends each option value (and not as the management key)', { timeout: 600_000 }, async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const c of cases) {
      const opts = ownOptions(c.cmd);
      if (opts.length === 0) continue;
      const required = opts.filter((o) => o.mandatory);
      const requiredArgv = required.flatMap((o, i) => [o.long!, candidates(2000 + i, o.argChoices, o.defaultValue, !!o.parseArg)[0]!.value]);
      // Base invocations: every argument (or only the required ones: an option may stand in for an optional
      // one, as --file for the text) and every required option, with values the CLI accepts.
      // Base invocations: every argument or only the required ones (an option may stand in for an optional
      // one, as --file for the text), with and without BASE's options, values the CLI accepts. One the CLI
      // refuses (it wants one of the options under test) counts as having sent nothing.
      const bases: { argv: string[]; out: Outcome }[] = [];
      const file = candidates(900).find((x) => x.value.endsWith('.json'))!.value;
      for (const extra of [BASE[c.name] ?? [], []]) {
        for (const onlyRequired of [false, true]) {
          const argDefs = c.cmd.registeredArguments.filter((a) => !onlyRequired || a.required);
          if (onlyRequired && argDefs.length === c.cmd.registeredArguments.length) continue;
          let first: string[] | undefined;
          const pick = async (i: number, acc: string[]): Promise<{ argv: string[]; out: Outcome } | undefined> => {
            if (i === argDefs.length) {
              const argv = [...c.path, ...acc, ...requiredArgv, ...extra];
              first ??= argv;
              const out = await run(argv);
              return usageFailure(out) ? undefined : { argv, out };
            }
            for (const cand of candidates(1000 + i, argDefs[i]!.argChoices).slice(0, 5)) {
              const r = await pick(i + 1, [...acc, cand.value]);
              if (r) return r;
            }
            return undefined;
          };
          bases.push((await pick(0, [])) ?? { argv: first!, out: { requests: [], exitCode: 2 } });
        }
        if (!BASE[c.name]) break;
      }
      for (const [i, o] of opts.entries()) {
        const key = `${c.name} ${o.long}`;
        if (LOCAL[key]) continue;
        checked++;
        const extra = (NEEDS[key] ?? []).map((v) => (v === '@file' ? file : v));
        let ok = false;
        let seen = '';
        for (const b of bases) {
          const without = o.mandatory ? b.argv.filter((_, j) => b.argv[j] !== o.long && b.argv[j - 1] !== o.long) : b.argv;
          if (o.required || o.optional) {
            for (const cand of candidates(3000 + checked * 10 + i, o.argChoices, o.defaultValue, !!o.parseArg)) {
              const out = await run([...without, ...extra, o.long!, cand.value]);
              if (usageFailure(out)) continue;
              const text = joined(out);
              seen = `${cand.value} -> ${text.slice(0, 300) || '(no request)'}`;
              if (text.includes(cand.marker) && (o.mandatory || text !== joined(b.out))) ok = true;
              break;
            }
          } else {
            // A flag: the request must change with it.
            const out = await run([...without, ...extra, o.long!]);
            seen = joined(out).slice(0, 300);
            if (!usageFailure(out) && joined(out) !== joined(b.out)) ok = true;
          }
          if (ok) break;
        }
        if (!ok) failures.push(`${key}: the value did not reach the daemon (${seen || 'no value accepted'})`);
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(150);
  });
});
