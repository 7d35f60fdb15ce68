/**
 * How long a daemon under test held its event loop, measured inside it: start the daemon with
 * `loopHoldEnv()`'s variables (a preload, loop-hold-preload.mjs, samples the main thread's CPU time
 * on every turn of a 2 ms timer) and ask `maxHold` for the longest turn within a time window.
 *
 * A probe's wall-clock latency also counts the probe's and the daemon's descheduling: on this
 * two-core machine under load (15 and more) an idle daemon answers 100-200 ms late now and then.
 * CPU time between two turns does not: a turn that used 40 ms of CPU held the loop 40 ms, however
 * busy the machine was.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './daemon.js';

export interface LoopHoldLog {
  env: Record<string, string>;
  file: string;
}

/** Environment for startDaemon that records the daemon's loop turns longer than `minMs` of CPU. */
export function loopHoldEnv(minMs = 5): LoopHoldLog {
  const file = join(mkdtempSync(join(tmpdir(), 'ctl-loop-hold-')), 'turns');
  const preload = join(ROOT, 'test/helpers/loop-hold-preload.mjs');
  const prior = process.env.NODE_OPTIONS ? `${process.env.NODE_OPTIONS} ` : '';
  return { file, env: { NODE_OPTIONS: `${prior}--import ${preload}`, CTL_TEST_LOOP_HOLD_FILE: file, CTL_TEST_LOOP_HOLD_MIN_MS: String(minMs) } };
}

/**
 * The most CPU (ms) one loop turn used between `from` and `to` (epoch ms; a turn is logged when it
 * ends, so `to` gets 100 ms of slack). With `blocking`, the most wall time a turn took less its wait
 * for a CPU: blocking calls (fsync, synchronous file I/O) count too.
 */
export function maxHold(log: LoopHoldLog, from: number, to: number, blocking = false): number {
  if (!existsSync(log.file)) return 0;
  let max = 0;
  for (const line of readFileSync(log.file, 'utf8').split('\n')) {
    const [at, cpu, held] = line.split(' ').map(Number) as [number, number, number];
    if (at >= from && at <= to + 100) max = Math.max(max, blocking ? Math.max(cpu, held) : cpu);
  }
  return max;
}
