import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { delimiter, join } from 'node:path';
import { freePort } from './free-port.js';

/**
 * A private redis-server for tests and the bench: loopback only, a free port, no persistence.
 * `stop()` kills it, `start()` brings it back on the same port (an outage in the middle of a test).
 */
export const REDIS_SERVER =
  [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/bin', '/usr/local/bin', '/usr/sbin']
    .map((dir) => join(dir, 'redis-server'))
    .find((p) => existsSync(p)) ?? null;

/** One clear line for suites that skip because redis-server is absent. */
export const REDIS_SKIP_REASON = 'redis-server not installed: skipping the tests that need Redis (.ci/run installs it)';

export class RedisServer {
  private proc: ChildProcess | null = null;
  readonly host = '127.0.0.1';

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    if (!REDIS_SERVER) throw new Error(REDIS_SKIP_REASON);
    for (let attempt = 0; attempt < 5; attempt++) {
      const s = new RedisServer(await freePort());
      try {
        await s.start();
        return s;
      } catch {
        await s.stop();
      }
    }
    throw new Error('could not start redis-server on a free loopback port');
  }

  async start(): Promise<void> {
    if (this.proc) return;
    const proc = spawn(
      REDIS_SERVER!,
      ['--port', String(this.port), '--bind', this.host, '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'],
      { stdio: 'ignore' },
    );
    this.proc = proc;
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) break;
      if (await ping(this.host, this.port)) return;
      await sleep(20);
    }
    throw new Error(`redis-server did not come up on ${this.host}:${this.port}`);
  }

  /** SIGSTOP: the process keeps its port and connections open but answers nothing (a frozen Redis). */
  freeze(): void {
    this.proc?.kill('SIGSTOP');
  }

  thaw(): void {
    this.proc?.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    const proc = this.proc;
    this.proc = null;
    if (!proc || proc.exitCode !== null) return;
    proc.kill('SIGCONT'); // a frozen server still ends on SIGKILL, but not before it is resumed on some kernels
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGKILL');
    await exited;
  }
}


function ping(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(500, () => done(false));
    s.once('error', () => done(false));
    s.once('connect', () => s.write('PING\r\n'));
    s.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
