/**
 * A cap on V8's young generation (new space) for the daemon process.
 *
 * V8 grows the young generation under a burst of allocation up to 2 × 16 MiB and hardly ever gives
 * it back: a daemon that took one burst of POSTs keeps 32 MiB of resident memory for a space that
 * holds a few MiB between bursts. Node's `--max-semi-space-size` would bound it, but only on node's
 * command line (V8 reads it once, when the heap is set up), and `ctl serve` runs as `ctl serve`.
 * What V8 does read at every growth step is `--semi-space-growth-factor`: after each garbage
 * collection this sets it to 1 (no growth) while the space is at the cap and back to V8's 2 below
 * it, so the space still grows to the cap under load and can grow again after V8 shrank it.
 *
 * CTL_DAEMON_YOUNG_GENERATION_MIB sets the cap (default 8; 0 = V8's own growth). 8 rather than 16:
 * with the full collection after start-up (startup-gc.ts) the first burst of new alerts runs no
 * full collection inside it at 8 either, so 16 only held 8 MiB more memory; 4 costs the model
 * gateway under 100 concurrent requests (their objects outlive 2 MiB semi-spaces and fill the old
 * generation: 130 MB after its load instead of 115). Measured in docs/alertmanager.md, "Memory".
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { wholeNumberFromEnv } from './env-number.js';

export const YOUNG_GENERATION_ENV = 'CTL_DAEMON_YOUNG_GENERATION_MIB';
export const DEFAULT_YOUNG_GENERATION_MIB = 8;
/** V8's default `--semi-space-growth-factor`. */
const V8_GROWTH_FACTOR = 2;

/** The cap in MiB the environment asks for; a bad value is an error (the daemon does not start). */
export function youngGenerationMiB(env: NodeJS.ProcessEnv): number {
  return wholeNumberFromEnv(env, YOUNG_GENERATION_ENV, DEFAULT_YOUNG_GENERATION_MIB, 'MiB (0 = no cap)');
}

function newSpaceBytes(): number {
  for (const s of getHeapSpaceStatistics()) if (s.space_name === 'new_space') return s.space_size;
  return 0;
}

/** Keep the young generation at most `mib` MiB from now on; returns the undo. 0 does nothing. */
export function capYoungGeneration(mib: number): () => void {
  if (mib <= 0) return () => undefined;
  const cap = mib * 1024 * 1024;
  let growing = true;
  const check = () => {
    const grow = newSpaceBytes() < cap;
    if (grow === growing) return;
    growing = grow;
    setFlagsFromString(`--semi-space-growth-factor=${grow ? V8_GROWTH_FACTOR : 1}`);
  };
  check();
  // Called soon after each collection (V8 grows the space only at one): a burst that runs two
  // growing collections before this runs (a loaded machine) passes the cap by one step, and the
  // space stays there until V8 shrinks it (when idle: idle-heap.ts).
  const observer = new PerformanceObserver(check);
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    observer.disconnect();
    if (!growing) setFlagsFromString(`--semi-space-growth-factor=${V8_GROWTH_FACTOR}`);
  };
}
