import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import http from 'node:http';

/** Repository root, from src (test/bench) or compiled (dist/test/bench). */
export const ROOT = (() => {
  const here = dirname(fileURLToPath(import.meta.url));
  return here.includes(`${'/'}dist${'/'}`) ? resolve(here, '../../..') : resolve(here, '../..');
})();
export const CTL = join(ROOT, 'bin', 'ctl');

/** The port a bench child process prints as `listening N` on its stdout (a pipe). */
export function listeningPort(child: ChildProcess, describeExit: (code: number | null) => string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c) => {
      out += c;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(describeExit(code))));
  });
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export const median = (v: number[]) => percentile(v, 50);

export function fmt(ms: number, digits = 2): string {
  return `${ms.toFixed(digits)} ms`;
}

/** One line of the report: `name  value  (note)`. */
export function report(name: string, value: string, note = ''): void {
  process.stdout.write(`  ${name.padEnd(58)} ${value.padStart(14)}${note ? `  ${note}` : ''}\n`);
}

export function section(title: string): void {
  process.stdout.write(`\n${title}\n${'-'.repeat(title.length)}\n`);
}

export function socketGet(socket: string, host: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath: socket, path, headers: { Host: host } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The daemon's servers with their bound addresses (GET /core/1.0 on the socket). */
export function boundAddresses(socket: string): Promise<{ servers: Record<string, { bound_address: string }> }> {
  return new Promise((resolve, reject) => {
    http.get({ socketPath: socket, path: '/core/1.0', headers: { Host: 'core' } }, (res) => {
      let b = '';
      res.on('data', (c) => (b += c));
      res.on('end', () => resolve(JSON.parse(b).metadata));
    }).on('error', reject);
  });
}

export interface BenchDaemon {
  dir: string;
  socket: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Start `ctl serve` on a temp dir; resolves once /core/1.0/ready answers 200. */
export async function startBenchDaemon(files: Record<string, string> = {}, env: Record<string, string> = {}): Promise<BenchDaemon & { readyMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'ctl-bench-'));
  for (const [rel, text] of Object.entries(files)) writeFileSync(join(dir, rel), text);
  const socket = join(dir, 'control.socket');
  const t0 = performance.now();
  const child = spawn(process.execPath, [CTL, '--state-dir', dir, 'serve', '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...env } });
  for (;;) {
    if (child.exitCode !== null) throw new Error('bench daemon exited during start-up');
    try {
      if ((await socketGet(socket, 'core', '/core/1.0/ready')) === 200) break;
    } catch {
      /* not yet */
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  const readyMs = performance.now() - t0;
  return {
    dir,
    socket,
    child,
    readyMs,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function timeCommand(cmd: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    execFile(cmd, args, (err) => (err ? reject(err) : resolve(performance.now() - t0)));
  });
}

/**
 * The Node floor server (alertmanager-floor.ts) in its own process on a fresh directory, with extra
 * arguments; `stop` ends it and removes the directory.
 */
export async function startNodeFloor(args: string[] = []): Promise<{ base: string; pid: number; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'ctl-bench-floor-'));
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'test', 'bench', 'alertmanager-floor.js'), dir, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (d) => resolve(String(d).trim()));
    child.once('exit', () => reject(new Error('the Node floor server exited during start-up')));
  });
  return {
    base: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
