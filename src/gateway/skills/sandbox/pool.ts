/**
 * The daemon's side of the skill runner: a small pool of runner processes (skill-runner.mjs), each
 * running one execution at a time in a fresh isolate. A runner that does not answer within the time
 * limit plus a grace period is killed (SIGKILL) and replaced; one that dies fails its execution.
 * Nothing of the handler code ever runs in the daemon's process.
 *
 * Runners start with WebAssembly off (its memory is outside the isolate's limit) and, when the daemon
 * runs as root, as the unprivileged RUNNER_ID user and group with no supplementary groups (unless
 * RUNNER_ID is not mapped in the daemon's user namespace: that root is an unprivileged user outside).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SandboxLimits {
  timeoutMs: number;
  memoryMb: number;
  /** The longest output (JSON text, UTF-8 bytes) passed back; a longer one is dropped ('too_large'). */
  maxOutputBytes?: number;
}

/** 1 MiB: the default output bound. */
export const MAX_OUTPUT_BYTES = 1024 * 1024;

export type RunOutcome =
  | { ok: true; output: string; durationMs: number }
  | { ok: false; kind: 'timeout' | 'memory' | 'error' | 'output' | 'too_large' | 'crashed' | 'busy'; error: string; durationMs: number };

/** nobody/nogroup on Debian and most distributions: who runners run as when the daemon is root. */
export const RUNNER_ID = 65534;

/**
 * Whether this process can switch to `id` as uid and gid: it must be mapped in this user namespace
 * (`unshare -r` maps only root, and setuid to an unmapped id fails with EINVAL). A root that cannot
 * switch is the unprivileged user that made the namespace: its runners run as it, as a non-root
 * daemon's do.
 */
export function canBecome(id: number, maps: { uid: string; gid: string } | undefined = readIdMaps()): boolean {
  if (!maps) return true;
  const mapped = (text: string) =>
    text
      .split('\n')
      .map((l) => l.trim().split(/\s+/).map(Number))
      .some(([inside, , count]) => inside !== undefined && count !== undefined && id >= inside && id < inside + count);
  return mapped(maps.uid) && mapped(maps.gid);
}

function readIdMaps(): { uid: string; gid: string } | undefined {
  try {
    return { uid: readFileSync('/proc/self/uid_map', 'utf8'), gid: readFileSync('/proc/self/gid_map', 'utf8') };
  } catch {
    // No /proc (not Linux): no user namespaces to allow for.
    return undefined;
  }
}

interface Job {
  id: number;
  code: string;
  input: string;
  limits: SandboxLimits;
  resolve: (o: RunOutcome) => void;
  startedAt: number;
}

/** Grace after the time limit before the runner process is killed. */
const KILL_GRACE_MS = 1000;
/** How long a new runner may take to start before it is killed. */
const BOOT_LIMIT_MS = 30_000;
/** Where the runner script may be, relative to an ancestor of this module: the source tree, or the bundle. */
const RUNNER_PLACES = ['skill-runner.mjs', 'src/gateway/skills/sandbox/skill-runner.mjs', 'dist/bundle/skill-runner.mjs'];

/** The runner script, found by walking up from this module (source tree, tsc output, bundle or its chunks, a global install). */
export function runnerPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    for (const place of RUNNER_PLACES) {
      const p = join(dir, place);
      if (existsSync(p)) return p;
    }
    dir = dirname(dir);
  }
  throw new Error('the skill runner (skill-runner.mjs) is not installed beside the daemon');
}

class Runner {
  readonly child: ChildProcess;
  job: Job | undefined;
  private timer: NodeJS.Timeout | undefined;
  ready: Promise<void>;
  dead = false;

  constructor(private readonly onDone: (r: Runner) => void) {
    // An empty environment and working directory; --no-node-snapshot is what isolated-vm needs on Node 20+.
    // libuv drops the supplementary groups when it sets the uid.
    const asRoot = process.getuid?.() === 0 && canBecome(RUNNER_ID);
    this.child = fork(runnerPath(), [], {
      execPath: process.execPath,
      execArgv: ['--no-node-snapshot', '--no-expose-wasm', '--max-old-space-size=256'],
      env: {},
      cwd: tmpdir(),
      ...(asRoot ? { uid: RUNNER_ID, gid: RUNNER_ID } : {}),
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      serialization: 'json',
    });
    this.child.unref();
    (this.child.channel as { unref?: () => void } | undefined)?.unref?.();
    this.ready = new Promise((resolve, reject) => {
      this.child.once('message', () => resolve());
      this.child.once('error', reject);
      this.child.once('exit', (code) => reject(new Error(`skill runner exited (${code}) before it was ready${asRoot ? ` (it runs as uid ${RUNNER_ID}: it must be able to read the daemon's files)` : ''}`)));
    });
    this.ready.catch(() => undefined);
    this.child.on('message', (m: { id?: number; ok?: boolean; output?: string; kind?: string; error?: string }) => {
      if (!this.job || m.id !== this.job.id) return;
      const job = this.job;
      const durationMs = Date.now() - job.startedAt;
      this.finish(m.ok ? { ok: true, output: m.output ?? 'null', durationMs } : { ok: false, kind: (m.kind as 'error') ?? 'error', error: m.error ?? 'failed', durationMs });
    });
    this.child.on('exit', () => {
      this.dead = true;
      if (this.job) this.finish({ ok: false, kind: 'crashed', error: 'the skill runner process died during the execution', durationMs: Date.now() - this.job.startedAt });
    });
  }

  start(job: Job): void {
    this.job = job;
    // Starting a runner (node and isolated-vm: seconds on a busy machine) does not count against the
    // skill's time limit, but one that never gets ready is killed too.
    this.arm(BOOT_LIMIT_MS, () => ({ ok: false, kind: 'crashed', error: `the skill runner did not start within ${BOOT_LIMIT_MS / 1000} s; it was killed`, durationMs: 0 }));
    this.ready.then(
      () => {
        if (this.job !== job) return;
        job.startedAt = Date.now();
        this.arm(job.limits.timeoutMs + KILL_GRACE_MS, () => ({ ok: false, kind: 'timeout', error: `time limit of ${job.limits.timeoutMs} ms exceeded; the runner was killed`, durationMs: Date.now() - job.startedAt }));
        this.child.send({ id: job.id, code: job.code, input: job.input, timeoutMs: job.limits.timeoutMs, memoryMb: job.limits.memoryMb, maxOutputBytes: job.limits.maxOutputBytes ?? MAX_OUTPUT_BYTES });
      },
      (e: Error) => this.finish({ ok: false, kind: 'crashed', error: e.message, durationMs: 0 }),
    );
  }

  /** Kill the runner and finish its job with `outcome()` unless it answers within `ms`. */
  private arm(ms: number, outcome: () => RunOutcome): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.kill();
      this.finish(outcome());
    }, ms);
  }

  private finish(o: RunOutcome): void {
    const job = this.job;
    if (!job) return;
    this.job = undefined;
    clearTimeout(this.timer);
    job.resolve(o);
    this.onDone(this);
  }

  kill(): void {
    this.dead = true;
    this.child.kill('SIGKILL');
  }
}

export class SandboxPool {
  private readonly idle: Runner[] = [];
  private readonly all = new Set<Runner>();
  private readonly queue: Job[] = [];
  private seq = 0;

  constructor(private readonly size: () => number, private readonly maxQueue = 256) {}

  run(code: string, input: string, limits: SandboxLimits): Promise<RunOutcome> {
    if (this.queue.length >= this.maxQueue) return Promise.resolve({ ok: false, kind: 'busy', error: 'too many skill executions are waiting', durationMs: 0 });
    return new Promise((resolve) => {
      this.queue.push({ id: ++this.seq, code, input, limits, resolve, startedAt: 0 });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let r = this.idle.pop();
      while (r && r.dead) (this.all.delete(r), (r = this.idle.pop()));
      if (!r) {
        if (this.all.size >= Math.max(1, this.size())) return;
        r = new Runner((done) => this.release(done));
        this.all.add(r);
      }
      const job = this.queue.shift()!;
      job.startedAt = Date.now();
      r.start(job);
    }
  }

  private release(r: Runner): void {
    if (r.dead) this.all.delete(r);
    else this.idle.push(r);
    queueMicrotask(() => this.pump());
  }

  close(): void {
    for (const r of this.all) r.kill();
    this.all.clear();
    this.idle.length = 0;
    for (const j of this.queue.splice(0)) j.resolve({ ok: false, kind: 'crashed', error: 'the gateway is stopping', durationMs: 0 });
  }
}
