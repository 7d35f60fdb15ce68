// Loaded into a daemon under test (NODE_OPTIONS=--import, see daemon-loop-hold.ts): on every turn
// of a 2 ms timer on the main thread, the CPU time the thread got since the previous turn
// (/proc/thread-self/schedstat). A turn that used more than CTL_TEST_LOOP_HOLD_MIN_MS is appended to
// CTL_TEST_LOOP_HOLD_FILE as "<epoch ms> <cpu ms>". CPU time, not wall time: a thread descheduled
// on a loaded machine uses none, so only work that held the loop counts.
import { appendFileSync, readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const file = process.env.CTL_TEST_LOOP_HOLD_FILE;
if (isMainThread && file) {
  const min = Number(process.env.CTL_TEST_LOOP_HOLD_MIN_MS ?? 5);
  const cpuMs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  let last = cpuMs();
  const timer = setInterval(() => {
    const now = cpuMs();
    if (now - last > min) appendFileSync(file, `${Date.now()} ${(now - last).toFixed(1)}\n`);
    last = now;
  }, 2);
  timer.unref();
}
