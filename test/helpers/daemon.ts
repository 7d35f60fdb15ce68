import { spawn, type ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CTL = join(ROOT, 'bin', 'ctl');

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** Parsed JSON when the body parses, else undefined. */
  json: any;
}

export interface StartOptions {
  /** Written to DIR/ctl.yaml (object → YAML). */
  ctlYaml?: unknown;
  /** Written to DIR/daemon.yaml before the first start. Default: every server on 127.0.0.1:0. */
  daemonYaml?: unknown;
  /** Extra files relative to the state dir. */
  files?: Record<string, string>;
  env?: Record<string, string>;
  args?: string[];
  /** Use this state dir (e.g. to restart on an existing one). */
  dir?: string;
  /** A program the daemon runs under, with its arguments (e.g. `['prlimit', '--nofile=256']`). */
  wrap?: string[];
}

/** Every server on an ephemeral loopback port, so parallel tests never collide. */
export const EPHEMERAL_SERVERS = {
  alertmanager: { address: '127.0.0.1:0' },
  gateway: { address: '127.0.0.1:0' },
  pipeline: { address: '127.0.0.1:0' },
  nodes: { address: '127.0.0.1:0' },
};

export function request(socket: string, host: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const h: Record<string, string | number> = { Host: host, ...headers };
    if (payload !== undefined) {
      if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) h['Content-Type'] = 'application/json';
      h['Content-Length'] = Buffer.byteLength(payload);
    }
    const req = http.request({ socketPath: socket, method, path, headers: h }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: any;
        try {
          json = text ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCtl(args: string[], env: Record<string, string> = {}, input?: string): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CTL, ...args], { env: { ...process.env, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as NodeJS.ErrnoException).code === 'number' ? ((err as unknown as { code: number }).code) : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
    if (input !== undefined) child.stdin?.end(input);
    else child.stdin?.end();
  });
}

export class TestDaemon {
  child!: ChildProcess;
  log = '';
  constructor(
    readonly dir: string,
    private readonly opts: StartOptions,
  ) {}

  get socket(): string {
    return join(this.dir, 'control.socket');
  }

  async start(): Promise<void> {
    this.log = '';
    const argv = [process.execPath, CTL, '--state-dir', this.dir, 'serve', '--log-level', 'info', ...(this.opts.args ?? [])];
    const [program, ...args] = [...(this.opts.wrap ?? []), ...argv] as [string, ...string[]];
    this.child = spawn(program, args, {
      env: { ...process.env, NODE_ENV: 'test', ...(this.opts.env ?? {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (c) => (this.log += c));
    this.child.stderr!.on('data', (c) => (this.log += c));
    await this.waitReady();
  }

  async waitReady(timeoutMs = 20_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if (this.child.exitCode !== null) throw new Error(`daemon exited with ${this.child.exitCode}:\n${this.log}`);
      try {
        const r = await request(this.socket, 'core', 'GET', '/core/1.0/ready');
        if (r.status === 200) return;
      } catch {
        /* not up yet */
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`daemon not ready after ${timeoutMs} ms:\n${this.log}`);
  }

  request(host: string, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply> {
    return request(this.socket, host, method, path, body, headers);
  }

  /** Base URL of a server's TCP listener (e.g. http://127.0.0.1:41234). */
  async baseUrl(server: string): Promise<string> {
    const r = await this.request('core', 'GET', '/core/1.0');
    const s = r.json.metadata.servers[server];
    if (!s?.bound_address) throw new Error(`server ${server} is not listening: ${JSON.stringify(s)}`);
    return `${s.tls ? 'https' : 'http'}://${s.bound_address}`;
  }

  cli(args: string[], env?: Record<string, string>, input?: string): Promise<RunResult> {
    return runCtl(['--state-dir', this.dir, ...args], env, input);
  }

  /**
   * Wait until the daemon's log matches (logs are written asynchronously). `from` is a log offset
   * (`d.log.length` taken before the action) so an earlier line cannot satisfy the wait.
   */
  async waitLog(re: RegExp, timeoutMs = 5000, from = 0): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!re.test(this.log.slice(from))) {
      if (Date.now() > until) throw new Error(`log never matched ${re}:\n${this.log}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  signal(sig: NodeJS.Signals): void {
    this.child.kill(sig);
  }

  waitExit(): Promise<number | null> {
    if (this.child.exitCode !== null) return Promise.resolve(this.child.exitCode);
    return new Promise((r) => this.child.once('exit', (code) => r(code)));
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    this.child.kill('SIGTERM');
    return this.waitExit();
  }

  async kill9(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    await new Promise((r) => this.child.once('exit', r));
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async cleanup(): Promise<void> {
    await this.kill9().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Start the real daemon on a fresh temporary state dir (servers on port 0 unless daemonYaml says otherwise). */
export async function startDaemon(opts: StartOptions = {}): Promise<TestDaemon> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'ctl-test-'));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const daemonYaml = opts.daemonYaml === undefined ? { servers: EPHEMERAL_SERVERS } : opts.daemonYaml;
  if (daemonYaml !== null && !opts.dir) writeFileSync(join(dir, 'daemon.yaml'), YAML.stringify(daemonYaml));
  if (opts.ctlYaml !== undefined) writeFileSync(join(dir, 'ctl.yaml'), YAML.stringify(opts.ctlYaml));
  for (const [rel, content] of Object.entries(opts.files ?? {})) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  const d = new TestDaemon(dir, opts);
  await d.start();
  return d;
}
