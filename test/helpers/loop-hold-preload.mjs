// Loaded into a daemon under test (NODE_OPTIONS=--import, see daemon-loop-hold.ts): on every turn
// of a 2 ms timer on the main thread, the CPU time the thread got since the previous turn and the
// wall time it was not waiting for a CPU (/proc/thread-self/schedstat: time on CPU, time runnable
// but waiting). A turn longer than CTL_TEST_LOOP_HOLD_MIN_MS by either is appended to
// CTL_TEST_LOOP_HOLD_FILE as "<epoch ms> <cpu ms> <held ms>", held = wall time less the wait for a
// CPU less the timer's own 2 ms: CPU work and blocking calls (fsync, a synchronous read) count, a
// thread descheduled on a loaded machine does not.
import { appendFileSync, readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const file = process.env.CTL_TEST_LOOP_HOLD_FILE;
if (isMainThread && file) {
  const min = Number(process.env.CTL_TEST_LOOP_HOLD_MIN_MS ?? 5);
  const sample = () => {
    const [cpu, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return { at: performance.now(), cpu: cpu / 1e6, wait: wait / 1e6 };
  };
  let last = sample();
  const timer = setInterval(() => {
    const now = sample();
    const cpu = now.cpu - last.cpu;
    const held = now.at - last.at - (now.wait - last.wait) - 2;
    if (cpu > min || held > min) appendFileSync(file, `${Date.now()} ${cpu.toFixed(1)} ${held.toFixed(1)}\n`);
    last = now;
  }, 2);
  timer.unref();
}
