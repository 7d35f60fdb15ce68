import { WorkerLane } from '../../http/worker-lane.js';

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
    parentPort.postMessage({ id, result: scryptSync(password, Buffer.from(salt), keyLen, options) });
  } catch (err) {
    parentPort.postMessage({ id, error: err.message });
  }
});`;

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
  maxmem: number;
}

const lane = new WorkerLane<{ password: string; salt: Uint8Array; keyLen: number; options: ScryptParams }, Uint8Array>({
  name: 'scrypt',
  program: () => ({ source: WORKER_SOURCE }),
  idleMs: IDLE_MS,
});

/** scrypt(password, salt) on the login thread; calls queue there, one at a time. */
export async function scryptOnLane(password: string, salt: Buffer, keyLen: number, options: ScryptParams): Promise<Buffer> {
  return Buffer.from(await lane.run({ password, salt: new Uint8Array(salt), keyLen, options }));
}
