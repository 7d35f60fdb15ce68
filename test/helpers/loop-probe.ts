/**
 * How long another API waits while something runs: a probe sends GET requests one after another to
 * a cheap route over the control socket and keeps the slowest answer. A daemon whose event loop is
 * held (a regex backtracking, a schema compiling) answers the probe late; one that keeps heavy work
 * off the loop answers it in about a millisecond.
 */
import { request } from './daemon.js';

export interface ProbeResult {
  /** The slowest probe answer, ms. */
  worstMs: number;
  probes: number;
}

/** Probe `host` `path` on `socket` until `work` settles; resolves with the work's result and the probe's worst latency. */
export async function probeWhile<T>(socket: string, host: string, path: string, work: Promise<T>): Promise<{ result: T; probe: ProbeResult }> {
  let done = false;
  const settled = work.finally(() => {
    done = true;
  });
  let worstMs = 0;
  let probes = 0;
  const loop = (async () => {
    while (!done) {
      const started = performance.now();
      const r = await request(socket, host, 'GET', path);
      const ms = performance.now() - started;
      if (r.status !== 200) throw new Error(`probe ${path} answered ${r.status}`);
      worstMs = Math.max(worstMs, ms);
      probes++;
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  const result = await settled;
  await loop;
  return { result, probe: { worstMs, probes } };
}
