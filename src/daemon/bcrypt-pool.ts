import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * bcrypt comparisons for web-config basic auth on a few worker threads. One comparison at cost 10
 * takes 75-300 ms of pure JavaScript (bcryptjs); on the main thread a burst of wrong passwords froze
 * every listener. The threads start on the first comparison and end after IDLE_MS without one.
 */
const IDLE_MS = 30_000;
/** Comparisons allowed to wait for a thread; past this the caller is told to come back (see `busy`). */
export const BCRYPT_QUEUE_LIMIT = 64;

const require = createRequire(import.meta.url);

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcryptjs);
parentPort.on('message', ({ id, password, hash }) => {
  let ok = false;
  try {
    ok = bcrypt.compareSync(password, hash);
  } catch {
    ok = false;
  }
  parentPort.postMessage({ id, ok });
});`;

interface Job {
  id: number;
  password: string;
  hash: string;
  resolve: (ok: boolean) => void;
  reject: (e: Error) => void;
}

interface Thread {
  worker: Worker;
  job: Job | null;
}

/** One thread per core but one (the main thread keeps a core), at least one, at most four. */
export function poolSize(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

export class BcryptPool {
  private readonly threads: Thread[] = [];
  private readonly queue: Job[] = [];
  private idle: NodeJS.Timeout | null = null;
  private nextId = 0;

  constructor(private readonly size = poolSize()) {}

  /** Comparisons running or waiting. */
  get pending(): number {
    return this.queue.length + this.threads.filter((t) => t.job).length;
  }

  /** True when a new comparison would wait behind BCRYPT_QUEUE_LIMIT others. */
  get busy(): boolean {
    return this.queue.length >= BCRYPT_QUEUE_LIMIT;
  }

  /** bcrypt.compare(password, hash) on a pool thread; a malformed hash compares false. */
  compare(password: string, hash: string): Promise<boolean> {
    if (this.idle) {
      clearTimeout(this.idle);
      this.idle = null;
    }
    return new Promise<boolean>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, password, hash, resolve, reject });
      this.pump();
    });
  }

  /** Stop every thread (the daemon's shutdown); waiting comparisons fail. */
  async close(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    for (const j of this.queue.splice(0)) j.reject(new Error('bcrypt pool closed'));
    await Promise.all(this.threads.splice(0).map((t) => t.worker.terminate()));
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const thread = this.threads.find((t) => !t.job) ?? (this.threads.length < this.size ? this.spawn() : undefined);
      if (!thread) return;
      const job = this.queue.shift()!;
      thread.job = job;
      thread.worker.postMessage({ id: job.id, password: job.password, hash: job.hash });
    }
    if (this.pending === 0) this.armIdle();
  }

  private spawn(): Thread {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { bcryptjs: require.resolve('bcryptjs') } });
    worker.unref();
    const thread: Thread = { worker, job: null };
    worker.on('message', (m: { id: number; ok: boolean }) => {
      const job = thread.job;
      thread.job = null;
      if (job && job.id === m.id) job.resolve(m.ok === true);
      this.pump();
    });
    const lost = (e: Error) => {
      const i = this.threads.indexOf(thread);
      if (i >= 0) this.threads.splice(i, 1);
      thread.job?.reject(e);
      thread.job = null;
      this.pump();
    };
    worker.on('error', lost);
    worker.on('exit', () => lost(new Error('bcrypt thread exited')));
    this.threads.push(thread);
    return thread;
  }

  private armIdle(): void {
    if (this.idle || this.threads.length === 0) return;
    this.idle = setTimeout(() => {
      this.idle = null;
      if (this.pending === 0) for (const t of this.threads.splice(0)) void t.worker.terminate();
    }, IDLE_MS);
    this.idle.unref();
  }
}
