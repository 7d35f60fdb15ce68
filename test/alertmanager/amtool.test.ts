/**
 * The real amtool 0.25 as a client: every command of the behaviour notes' §7 runs against ctl
 * (through the daemon) and against the real Alertmanager 0.25, and must exit and print the same
 * after ids and times are normalised. Skipped with one line when amtool is not installed; when
 * only the real Alertmanager is missing, ctl is still checked for exit codes.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { NOTES_CONFIG } from './harness.js';
import { alertmanagerBinary, amtoolBinary, startRealAlertmanager, type RealAlertmanager } from './real-alertmanager.js';

const amtool = amtoolBinary();
const realBin = alertmanagerBinary();
if (!amtool) console.log('SKIP amtool tests: amtool is not installed (apt-get install prometheus-alertmanager)');
else if (!realBin) console.log('NOTE amtool tests: real alertmanager missing, checking ctl alone');

interface Out {
  code: number;
  stdout: string;
  stderr: string;
}

function run(url: string, args: string[]): Promise<Out> {
  return new Promise((resolve) => {
    execFile(amtool!, [`--alertmanager.url=${url}`, ...args], { timeout: 20_000, env: { ...process.env, USER: 'tester' } }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
    });
  });
}

const norm = (s: string) =>
  s
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
    .replace(/\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?( UTC|Z)?/g, '<time>')
    .replace(/"(startsAt|endsAt|updatedAt|uptime)":"[^"]*"/g, '"$1":"<time>"')
    .replace(/"versionInfo":\{[^}]*\}/g, '"versionInfo":{}')
    .replace(/,"mutedBy":\[\]/g, '');

let d: TestDaemon;
let real: RealAlertmanager | undefined;
let dir: string;

describe.skipIf(!amtool)('amtool 0.25 against ctl', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'amtool-'));
    d = await startDaemon({ files: { 'alertmanager.yml': NOTES_CONFIG } });
    if (realBin) real = await startRealAlertmanager(NOTES_CONFIG);
  });
  afterAll(async () => {
    await d?.cleanup();
    await real?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Run on both; compare; return ctl's output and the real one's. */
  async function both(args: (side: 'ours' | 'real') => string[], opts: { code?: number } = {}): Promise<{ ours: Out; real?: Out }> {
    const ours = await run(await d.baseUrl('alertmanager'), args('ours'));
    const expected = opts.code ?? 0;
    expect(ours.code, `amtool ${args('ours').join(' ')}\n${ours.stderr}`).toBe(expected);
    expect(ours.stderr).not.toMatch(/Warning: amtool version/);
    if (!real) return { ours };
    const theirs = await run(real.url, args('real'));
    expect(ours.code, `exit code of amtool ${args('real').join(' ')}`).toBe(theirs.code);
    expect(norm(ours.stdout), `stdout of amtool ${args('real').join(' ')}`).toBe(norm(theirs.stdout));
    expect(norm(ours.stderr), `stderr of amtool ${args('real').join(' ')}`).toBe(norm(theirs.stderr));
    return { ours, real: theirs };
  }

  it('alerts: add and query', async () => {
    await both(() => ['alert', 'add', 'R1', 'team=a', 'job=j', '--annotation=summary=first one']);
    await both(() => ['alert', 'add', 'R2', 'severity=critical', '--generator-url=http://127.0.0.1/graph']);
    await both(() => ['alert', 'add', 'R2', 'severity=warning', `--end=${new Date(Date.now() + 3_600_000).toISOString()}`]);
    await both(() => ['alert', 'query']);
    await both(() => ['alert', 'query', '-a', '-s', '-i']);
    await both(() => ['alert', 'query', '-i']);
    await both(() => ['alert', 'query', 'R1']);
    await both(() => ['alert', 'query', 'team=a']);
    await both(() => ['alert', 'query', '-r', 'team-.*']);
    await both(() => ['alert', 'query', '-o', 'json']);
    await both(() => ['alert', 'query', '-o', 'extended']);
    await both(() => ['alert', 'query', '{alertname="R1"}'], { code: 1 });
  });

  it('silences: add, query, update, expire, import', async () => {
    const add = await both(() => ['silence', 'add', 'alertname=R1', '-c', 'maintenance', '-d', '1h']);
    const ids = { ours: add.ours.stdout.trim(), real: add.real?.stdout.trim() ?? '' };
    await both(() => ['silence', 'add', 'team=~"a|b"', 'job!=x', '-c', 'second', '-a', 'someone', '-d', '2h']);
    await both(() => ['silence', 'query']);
    await both(() => ['silence', 'query', '-q']);
    await both(() => ['silence', 'query', 'alertname=R1']);
    await both(() => ['silence', 'query', '-o', 'json']);
    await both(() => ['alert', 'query', '-a', '-s']);
    await both((s) => ['silence', 'update', ids[s], '-c', 'longer', '-d', '3h']);
    await both(() => ['silence', 'query']);
    await both((s) => ['silence', 'expire', ids[s]]);
    await both(() => ['silence', 'query', '--expired']);
    // import: the expired silence (recreated with a new id) and an unknown id (404 → recreated)
    const exported = await both(() => ['silence', 'query', '--expired', '-o', 'json']);
    for (const side of ['ours', 'real'] as const) {
      const out = side === 'ours' ? exported.ours : exported.real;
      if (!out) continue;
      const list = JSON.parse(out.stdout) as { id: string; endsAt: string }[];
      for (const s of list) {
        s.endsAt = new Date(Date.now() + 3_600_000).toISOString();
      }
      list.push({ ...list[0]!, id: '00000000-0000-4000-8000-000000000001' });
      writeFileSync(join(dir, `${side}.json`), JSON.stringify(list));
    }
    await both((s) => ['silence', 'import', join(dir, `${s}.json`)]);
    await both(() => ['silence', 'query']);
  });

  it('config and cluster', async () => {
    await both(() => ['config', 'show']);
    await both(() => ['config', 'show', '-o', 'json']);
    await both(() => ['config', 'routes', 'show']);
    await both(() => ['config', 'routes', 'test', 'team=a']);
    await both(() => ['config', 'routes', 'test', '--tree', 'severity=critical', 'service=db1']);
    await both(() => ['config', 'routes', 'test', '--verify.receivers=team-a,team-ab', 'team=a']);
    await both(() => ['config', 'routes', 'test', '--verify.receivers=pager', 'team=a'], { code: 1 });
    await both(() => ['cluster', 'show']);
    await both(() => ['cluster', 'show', '-o', 'json']);
  });
});
