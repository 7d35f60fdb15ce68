/**
 * The thread side of a WorkerLane (worker-lane.ts): answer each job with its result or the error's
 * message. Kept apart from the lane so a thread's bundle holds only this and its own work.
 */
import { parentPort } from 'node:worker_threads';

export function serveLane<Job, Result>(work: (job: Job) => Result): void {
  parentPort!.on('message', (m: Job & { id: number }) => {
    try {
      parentPort!.postMessage({ id: m.id, result: work(m) });
    } catch (err) {
      parentPort!.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) });
    }
  });
}
