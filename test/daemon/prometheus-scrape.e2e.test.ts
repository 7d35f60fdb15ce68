/**
 * The real Prometheus (Debian's `prometheus`) scrapes every TCP listener of one daemon: each
 * `/metrics` must parse, and `up` must be 1 for every target; with basic auth on a web-config
 * listener, the right password scrapes and a wrong one does not. Prometheus runs on a free loopback
 * port with a private storage dir and a 1 s scrape interval.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { findBinary, freePort } from '../alertmanager/real-alertmanager.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

const bin = findBinary(['prometheus']);
const COMPONENTS = ['alertmanager', 'gateway', 'pipeline', 'nodes'];

async function startPrometheus(dir: string, scrapeConfigs: string): Promise<{ url: string; proc: ChildProcess }> {
  writeFileSync(join(dir, 'prometheus.yml'), `global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n${scrapeConfigs}\n`);
  const port = await freePort();
  const proc = spawn(bin!, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: 'ignore' });
  return { url: `http://127.0.0.1:${port}`, proc };
}

async function stopPrometheus(proc: ChildProcess | undefined): Promise<void> {
  if (proc && proc.exitCode === null) {
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (proc.exitCode === null) proc.kill('SIGKILL');
  }
}

/** `up` per job once every job in `jobs` reports `want` (or what it reports after 30 s). */
async function upByJob(promUrl: string, jobs: string[], want = '1'): Promise<Record<string, string>> {
  let ups: Record<string, string> = {};
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`${promUrl}/api/v1/query?query=up`);
      const body = (await r.json()) as { data: { result: { metric: { job: string }; value: [number, string] }[] } };
      ups = Object.fromEntries(body.data.result.map((x) => [x.metric.job, x.value[1]]));
      if (jobs.every((c) => ups[c] === want)) break;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return ups;
}

describe.skipIf(!bin)('Prometheus with basic auth against a web-config listener', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ctl-prom-auth-'));
  let d: TestDaemon;
  let prom: { url: string; proc: ChildProcess } | undefined;
  afterAll(async () => {
    await stopPrometheus(prom?.proc);
    await d?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('scrapes the alert manager with the right password (up == 1) and not with a wrong one (up == 0)', async () => {
    writeFileSync(join(dir, 'web.yml'), `basic_auth_users:\n  prom: ${bcrypt.hashSync('s3cret', 4)}\n`);
    d = await startDaemon({ ctlYaml: { servers: { alertmanager: { 'web-config-file': join(dir, 'web.yml') } } } });
    const target = new URL(await d.baseUrl('alertmanager')).host;
    prom = await startPrometheus(
      dir,
      `  - job_name: right\n    basic_auth: {username: prom, password: s3cret}\n    static_configs: [{targets: ['${target}']}]\n  - job_name: wrong\n    basic_auth: {username: prom, password: nope}\n    static_configs: [{targets: ['${target}']}]`,
    );
    expect(await upByJob(prom.url, ['right'])).toMatchObject({ right: '1' });
    expect(await upByJob(prom.url, ['wrong'], '0')).toMatchObject({ wrong: '0' });
  }, 60_000);
});

describe.skipIf(!bin)('Prometheus scrapes every listener', () => {
  let d: TestDaemon;
  let prom: ChildProcess;
  let promUrl: string;
  const dir = mkdtempSync(join(tmpdir(), 'ctl-prom-'));

  beforeAll(async () => {
    d = await startDaemon({});
    const targets: string[] = [];
    for (const c of COMPONENTS) targets.push(`  - job_name: ${c}\n    static_configs: [{targets: ['${new URL(await d.baseUrl(c)).host}']}]`);
    const p = await startPrometheus(dir, targets.join('\n'));
    prom = p.proc;
    promUrl = p.url;
  }, 60_000);

  afterAll(async () => {
    await stopPrometheus(prom);
    await d?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('up == 1 for the alert manager, gateway, pipeline and node monitor', async () => {
    const ups = await upByJob(promUrl, COMPONENTS);
    expect(ups).toEqual(Object.fromEntries(COMPONENTS.map((c) => [c, '1'])));
    // A component metric made it through the parser, not only the scrape.
    const r = await fetch(`${promUrl}/api/v1/query?query=ctl_nodes_accounts`);
    const body = (await r.json()) as { data: { result: { value: [number, string] }[] } };
    expect(body.data.result[0]?.value[1]).toBe('0');
  }, 60_000);
});
