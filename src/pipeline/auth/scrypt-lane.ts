import { Worker } from 'node:worker_threads';

/**
 * scrypt for logins on one dedicated thread. Each call takes 128·N·r bytes (16 MiB with the default
 * parameters) and glibc keeps such a block in the calling thread's arena after the first use; on
 * libuv's pool every pool thread ends up holding one (4 × 16 MiB). One thread holds at most one.
 * The thread starts on the first login and ends after IDLE_MS without one.
 */
const IDLE_MS = 30_000;

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
parentPort.on('message', ({ id, password, salt, keyLen, options }) => {
  try {
    parentPort.postMessage({ id, key: scryptSync(password, Buffer.from(salt), keyLen, options) });
  } catch (err) {
    parentPort.postMessage({ id, error: err.message });
  }
});`;

interface Pending {
  resolve: (key: Buffer) => void;
  reject: (e: Error) => void;
}

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
  maxmem: number;
}

let worker: Worker | null = null;
let idle: NodeJS.Timeout | null = null;
let nextId = 0;
const pending = new Map<number, Pending>();

function ensureWorker(): Worker {
  if (worker) return worker;
  const w = new Worker(WORKER_SOURCE, { eval: true });
  w.unref();
  w.on('message', (m: { id: number; key?: Uint8Array; error?: string }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.error !== undefined) p.reject(new Error(m.error));
    else p.resolve(Buffer.from(m.key!));
    if (pending.size === 0) armIdle();
  });
  w.on('error', (e) => failAll(e));
  w.on('exit', () => {
    if (worker === w) worker = null;
    failAll(new Error('scrypt thread exited'));
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

/** scrypt(password, salt) on the login thread; calls queue there, one at a time. */
export function scryptOnLane(password: string, salt: Buffer, keyLen: number, options: ScryptParams): Promise<Buffer> {
  const w = ensureWorker();
  if (idle) {
    clearTimeout(idle);
    idle = null;
  }
  const id = nextId++;
  return new Promise<Buffer>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.postMessage({ id, password, salt: new Uint8Array(salt), keyLen, options });
  });
}
