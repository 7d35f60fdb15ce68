/**
 * Runs the real Prometheus Alertmanager 0.25 (Debian `prometheus-alertmanager`) on a free loopback
 * port with clustering off and a private storage dir, for differential tests and benchmarks.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/free-port.js';

export { freePort };

export function findBinary(names: string[]): string | undefined {
  for (const n of names) {
    const r = spawnSync('sh', ['-c', `command -v ${n}`], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  }
  return undefined;
}

export const alertmanagerBinary = () => findBinary(['prometheus-alertmanager', 'alertmanager']);
export const amtoolBinary = () => findBinary(['amtool']);


export interface RealAlertmanager {
  url: string;
  dir: string;
  proc: ChildProcess;
  /** Replace the configuration and POST /-/reload; returns the reload response. */
  reload(config: string): Promise<{ status: number; text: string }>;
  stop(): Promise<void>;
}

export async function startRealAlertmanager(config: string, args: string[] = [], readyHeaders: Record<string, string> = {}): Promise<RealAlertmanager> {
  const bin = alertmanagerBinary();
  if (!bin) throw new Error('alertmanager binary not installed');
  const dir = mkdtempSync(join(tmpdir(), 'real-am-'));
  const file = join(dir, 'alertmanager.yml');
  writeFileSync(file, config);
  const port = await freePort();
  const proc = spawn(
    bin,
    [
      `--config.file=${file}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
      '--log.level=warn',
      ...args,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  proc.stderr!.on('data', (d) => (stderr += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`alertmanager exited: ${stderr}`);
    try {
      const r = await fetch(`${url}/-/ready`, { headers: readyHeaders });
      if (r.status === 200) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`alertmanager did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    dir,
    proc,
    async reload(text: string) {
      writeFileSync(file, text);
      const r = await fetch(`${url}/-/reload`, { method: 'POST' });
      return { status: r.status, text: await r.text() };
    },
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (proc.exitCode === null) proc.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
