/**
 * One full garbage collection once the daemon has started, before the first request.
 *
 * Until V8 has run a full collection it sizes the old generation by a start-up heuristic: each
 * young-generation collection that keeps little (a warm-up of requests keeps little) lowers the
 * old generation's limit towards its current size + 8 MB. The first burst that keeps more than
 * that, 10,000 new alerts in the alert bench, then starts a full collection inside itself: measured
 * at young-generation caps of 4 and 8 MiB, the first POST took 65-75 ms with it and 45-47 ms
 * without. A full collection right after start-up measures the daemon's real baseline (~12 MB of
 * live heap, 10 ms once) and V8 sets the limit from it with its usual growth, as it does for the
 * rest of the process's life. Node hides `gc()` unless started with --expose-gc: the flag is set
 * for the moment it takes to fetch the function from a fresh context, then cleared.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

export function collectAfterStartup(): void {
  setFlagsFromString('--expose-gc');
  try {
    (runInNewContext('gc') as () => void)();
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
