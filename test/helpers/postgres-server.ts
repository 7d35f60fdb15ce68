import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';

/**
 * A private PostgreSQL server for tests and the bench: a fresh cluster (initdb) in a temp dir, on a
 * free loopback port, trust authentication, fsync off (a test database is thrown away). `stop()`
 * and `start()` give an outage in the middle of a test; `destroy()` removes everything.
 *
 * initdb and postgres refuse to run as root: as root the cluster belongs to the `postgres` user
 * (the Debian package creates it) and the server runs as that user.
 */
function findBinDir(): string | null {
  for (const dir of ['/usr/local/bin', '/usr/bin']) if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(join(base, v, 'bin', 'initdb'))) return join(base, v, 'bin');
  return null;
}

export const PG_BIN = findBinDir();
export const PG_SKIP_REASON = 'PostgreSQL (initdb) not installed: skipping the tests that need PostgreSQL (.ci/run installs it)';

const isRoot = process.getuid?.() === 0;

function pgUid(): { uid: number; gid: number } | null {
  if (!isRoot) return null;
  const r = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (r.status !== 0 || g.status !== 0) throw new Error('running as root but there is no postgres user to run PostgreSQL as');
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

export class PostgresServer {
  private proc: ChildProcess | null = null;
  readonly host = '127.0.0.1';
  private log = '';

  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly owner: { uid: number; gid: number } | null,
  ) {}

  /** `postgres://` URL of database `db` (created with `createDatabase`; `postgres` always exists). */
  url(db = 'postgres'): string {
    return `postgres://postgres@${this.host}:${this.port}/${db}`;
  }

  static async start(): Promise<PostgresServer> {
    if (!PG_BIN) throw new Error(PG_SKIP_REASON);
    const owner = pgUid();
    const dir = mkdtempSync(join(tmpdir(), 'ctl-pg-'));
    if (owner) chownSync(dir, owner.uid, owner.gid);
    const data = join(dir, 'data');
    const init = spawnSync(join(PG_BIN, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C'], {
      encoding: 'utf8',
      ...(owner ?? {}),
    });
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
    for (let attempt = 0; attempt < 5; attempt++) {
      const s = new PostgresServer(dir, await freePort(), owner);
      try {
        await s.start();
        return s;
      } catch (e) {
        await s.stop();
        if (attempt === 4) throw e;
      }
    }
    throw new Error('unreachable');
  }

  async start(): Promise<void> {
    if (this.proc) return;
    this.log = '';
    const proc = spawn(
      join(PG_BIN!, 'postgres'),
      ['-D', join(this.dir, 'data'), '-p', String(this.port), '-h', this.host, '-k', this.dir, '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200'],
      { stdio: ['ignore', 'pipe', 'pipe'], ...(this.owner ?? {}) },
    );
    proc.stdout!.on('data', (c) => (this.log += c));
    proc.stderr!.on('data', (c) => (this.log += c));
    this.proc = proc;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) break;
      if (await this.ready()) return;
      await sleep(50);
    }
    throw new Error(`postgres did not come up on ${this.host}:${this.port}:\n${this.log}`);
  }

  private async ready(): Promise<boolean> {
    const c = new pg.Client({ connectionString: this.url(), connectionTimeoutMillis: 1000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await c.end().catch(() => {});
    }
  }

  /** A new empty database; returns its URL. */
  async createDatabase(name: string): Promise<string> {
    const c = new pg.Client({ connectionString: this.url() });
    await c.connect();
    try {
      await c.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
    } finally {
      await c.end();
    }
    return this.url(name);
  }

  /**
   * SIGSTOP the server and its backends (by pid: the postmaster this helper started and its
   * children): connections stay open and nothing answers, as a frozen host. `thaw()` resumes them.
   */
  freeze(): void {
    for (const pid of this.pids()) process.kill(pid, 'SIGSTOP');
  }

  thaw(): void {
    for (const pid of this.pids()) process.kill(pid, 'SIGCONT');
  }

  private pids(): number[] {
    const pid = this.proc?.pid;
    if (!pid) return [];
    const r = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' });
    return [pid, ...r.stdout.split(/\s+/).filter(Boolean).map(Number)];
  }

  /** Kill the server at once (no shutdown checkpoint): what a crash or a pulled cable looks like to clients. */
  async stop(): Promise<void> {
    const proc = this.proc;
    this.proc = null;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGQUIT');
    await exited;
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}


function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
