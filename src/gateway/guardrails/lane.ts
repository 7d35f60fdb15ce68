/**
 * One thread for guardrail scans too costly for the daemon's event loop (src/gateway/guardrails/
 * worker.ts). It starts on the first such scan and ends after IDLE_MS without one; scans queue there,
 * one at a time, so a flood of huge requests costs one core, never the loop every API shares.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { GuardrailConfig } from './config.js';
import type { GuardrailRun, Slot } from './engine.js';

const IDLE_MS = 30_000;

/** Where the bundled program may be, relative to an ancestor of this module (the bundle, its chunks, the source tree). */
const PLACES = ['guardrail-worker.mjs', 'dist/bundle/guardrail-worker.mjs'];

/** The thread's program: tsc's output beside this module, else the bundle's. */
export function workerPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  if (existsSync(join(dir, 'worker.js'))) return join(dir, 'worker.js');
  for (let i = 0; i < 8; i++) {
    for (const place of PLACES) {
      const p = join(dir, place);
      if (existsSync(p)) return p;
    }
    dir = dirname(dir);
  }
  throw new Error('the guardrail thread (guardrail-worker.mjs) is not installed beside the daemon; run npm run build');
}

interface Pending {
  resolve: (run: GuardrailRun) => void;
  reject: (e: Error) => void;
}

let worker: Worker | null = null;
let idle: NodeJS.Timeout | null = null;
let nextId = 0;
const pending = new Map<number, Pending>();

function ensureWorker(): Worker {
  if (worker) return worker;
  const w = new Worker(workerPath());
  w.unref();
  w.on('message', (m: { id: number; run?: GuardrailRun; error?: string }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error !== undefined) p.reject(new Error(`guardrail thread: ${m.error}`));
    else p.resolve(m.run!);
    if (pending.size === 0) armIdle();
  });
  w.on('error', (e) => failAll(e));
  w.on('exit', () => {
    if (worker === w) worker = null;
    failAll(new Error('guardrail thread exited'));
  });
  worker = w;
  return w;
}

function armIdle(): void {
  if (idle) clearTimeout(idle);
  idle = setTimeout(() => {
    idle = null;
    if (pending.size === 0 && worker) void worker.terminate();
  }, IDLE_MS);
  idle.unref();
}

function failAll(e: Error): void {
  for (const p of pending.values()) p.reject(e);
  pending.clear();
}

/** The guardrails over `slots`, run on the guardrail thread. */
export function runOnLane(config: readonly GuardrailConfig[], slots: Slot[], disabled: ReadonlySet<string>): Promise<GuardrailRun> {
  const w = ensureWorker();
  if (idle) {
    clearTimeout(idle);
    idle = null;
  }
  const id = nextId++;
  return new Promise<GuardrailRun>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.postMessage({ id, config, slots, disabled: [...disabled] });
  });
}
