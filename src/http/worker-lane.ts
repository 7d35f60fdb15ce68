/**
 * A worker-thread lane for work too costly for the event loop every API shares: one thread, started
 * on the first job and ended after `idleMs` without one; jobs queue there one at a time, so a flood
 * of heavy requests costs one core, never the loop. Messages are plain data both ways: the thread's
 * program answers each `{ id, ...job }` with `{ id, result }` or `{ id, error }` (serveLane in
 * worker-lane-thread.ts does that for it).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * The thread's program for a module at `moduleUrl`: tsc's output `<name>.js` beside it, else the
 * bundle's `<bundled>.mjs` in an ancestor directory or its dist/bundle/ (the bundle, its chunks, the
 * source tree under test).
 */
export function findProgram(moduleUrl: string, name: string, bundled: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  if (existsSync(join(dir, `${name}.js`))) return join(dir, `${name}.js`);
  for (let i = 0; i < 8; i++) {
    for (const place of [`${bundled}.mjs`, `dist/bundle/${bundled}.mjs`]) {
      const p = join(dir, place);
      if (existsSync(p)) return p;
    }
    dir = dirname(dir);
  }
  throw new Error(`the ${bundled} thread (${bundled}.mjs) is not installed beside the daemon; run npm run build`);
}

export interface LaneOptions {
  /** Named in errors ("the token-count thread exited"). */
  name: string;
  /**
   * The program: a file's path (found when the thread first starts), or a CommonJS source run with
   * `eval` and its workerData (a program small enough to live beside its lane).
   */
  program: () => string | { source: string; workerData?: unknown };
  /** The thread ends after this long without a job. */
  idleMs: number;
  /** A job not answered in this time ends the thread; every job waiting on it fails (timeoutMessage). */
  callTimeoutMs?: number;
  timeoutMessage?: string;
  /** What jobs fail with when the thread fails, exits, overruns or is closed (default: Error). */
  failure?: (message: string) => Error;
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
}

export class WorkerLane<Job extends object, Result> {
  private worker: Worker | null = null;
  private idle: NodeJS.Timeout | null = null;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly opts: LaneOptions) {}

  /** Run `job` on the lane's thread. */
  run(job: Job): Promise<Result> {
    const w = this.ensure();
    if (this.idle) {
      clearTimeout(this.idle);
      this.idle = null;
    }
    const id = this.nextId++;
    return new Promise<Result>((resolve, reject) => {
      const entry: Pending = { resolve: resolve as (r: unknown) => void, reject };
      const limit = this.opts.callTimeoutMs;
      if (limit !== undefined) {
        entry.timer = setTimeout(() => this.fail(this.opts.timeoutMessage ?? `the ${this.opts.name} thread took longer than ${limit} ms`), limit);
        entry.timer.unref();
      }
      this.pending.set(id, entry);
      w.postMessage({ ...job, id });
    });
  }

  /** End the thread now; jobs waiting on it fail with `message`. */
  close(message = `the ${this.opts.name} thread was closed`): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    this.fail(message);
  }

  /** End the thread and fail every job waiting on it. */
  private fail(message: string): void {
    const w = this.worker;
    this.worker = null;
    if (w) void w.terminate();
    const e = this.opts.failure ? this.opts.failure(message) : new Error(message);
    for (const p of this.pending.values()) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(e);
    }
    this.pending.clear();
  }

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const program = this.opts.program();
    const w = typeof program === 'string' ? new Worker(program) : new Worker(program.source, { eval: true, workerData: program.workerData });
    w.unref();
    w.on('message', (m: { id: number; result?: unknown; error?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (p.timer) clearTimeout(p.timer);
      if (m.error !== undefined) p.reject(new Error(`${this.opts.name} thread: ${m.error}`));
      else p.resolve(m.result);
      if (this.pending.size === 0) this.armIdle();
    });
    w.on('error', (e) => {
      if (this.worker === w) this.fail(`the ${this.opts.name} thread failed: ${e.message}`);
    });
    w.on('exit', () => {
      if (this.worker === w) this.fail(`the ${this.opts.name} thread exited`);
    });
    this.worker = w;
    return w;
  }

  private armIdle(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      this.idle = null;
      if (this.pending.size === 0 && this.worker) {
        const w = this.worker;
        this.worker = null;
        void w.terminate();
      }
    }, this.opts.idleMs);
    this.idle.unref();
  }
}
