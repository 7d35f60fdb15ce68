/**
 * How long this thread's event loop was held by work, for loop-stall checks of in-process servers.
 *
 * `monitorEventLoopDelay` measures wall time between loop turns, and on a shared two-core machine
 * (load 15 and more while several suites run) the thread is often descheduled for 40–150 ms with the
 * loop idle: that is not the code under test holding the loop. So alongside the delay histogram this
 * samples, on every turn of a 2 ms timer, the CPU time the thread got since the previous turn
 * (/proc/thread-self/schedstat, nanoseconds). A synchronous compile of a second shows as a second of
 * CPU between two turns however busy the machine is; a descheduled idle loop shows as none.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface LoopHold {
  /** The most CPU time (ms) the thread used between two turns of the sampling timer. */
  maxHoldMs: number;
  /** The largest event-loop delay seen (ms), as monitorEventLoopDelay reports it: includes descheduling. */
  maxDelayMs: number;
}

const cpuMs = (): number => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;

/** Start watching; `stop()` ends it and answers what was seen. */
export function watchLoop(): { stop(): LoopHold } {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  let last = cpuMs();
  let maxHoldMs = 0;
  const timer = setInterval(() => {
    const now = cpuMs();
    maxHoldMs = Math.max(maxHoldMs, now - last);
    last = now;
  }, 2);
  return {
    stop() {
      clearInterval(timer);
      const now = cpuMs();
      maxHoldMs = Math.max(maxHoldMs, now - last);
      delay.disable();
      return { maxHoldMs, maxDelayMs: delay.max / 1e6 };
    },
  };
}
