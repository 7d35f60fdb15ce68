/**
 * The worker-lane kit (src/http/worker-lane.ts): jobs answered in order on one thread; a job's
 * error rejects that job only; a job past the call timeout ends the thread, every waiting job fails
 * with the lane's failure, and the next job gets a fresh thread; close fails what waits.
 */
import { describe, expect, it } from 'vitest';
import { WorkerLane } from '../../src/http/worker-lane.js';

const SOURCE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (m) => {
  if (m.op === 'hang') for (;;) {}
  if (m.op === 'fail') return parentPort.postMessage({ id: m.id, error: 'no such thing' });
  parentPort.postMessage({ id: m.id, result: m.n * 2 });
});`;

class LaneFailed extends Error {}

const lane = () =>
  new WorkerLane<{ op: string; n?: number }, number>({
    name: 'test',
    program: () => ({ source: SOURCE }),
    idleMs: 1000,
    callTimeoutMs: 500,
    timeoutMessage: 'too slow',
    failure: (m) => new LaneFailed(m),
  });

describe('WorkerLane', () => {
  it('answers jobs; an error rejects its job only', async () => {
    const l = lane();
    expect(await Promise.all([1, 2, 3].map((n) => l.run({ op: 'double', n })))).toEqual([2, 4, 6]);
    await expect(l.run({ op: 'fail' })).rejects.toThrow('test thread: no such thing');
    expect(await l.run({ op: 'double', n: 5 })).toBe(10);
    l.close();
  });

  it('a job past the call timeout ends the thread and fails what waits; the next job gets a new thread', async () => {
    const l = lane();
    const hung = l.run({ op: 'hang' });
    const queued = l.run({ op: 'double', n: 1 });
    await expect(hung).rejects.toBeInstanceOf(LaneFailed);
    await expect(queued).rejects.toThrow('too slow');
    expect(await l.run({ op: 'double', n: 21 })).toBe(42);
    l.close();
  }, 20_000);

  it('close fails what waits with the reason given', async () => {
    const l = lane();
    const waiting = l.run({ op: 'hang' });
    l.close('stopping');
    await expect(waiting).rejects.toThrow('stopping');
  });
});
