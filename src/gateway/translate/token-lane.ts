/**
 * Token counts on a thread of their own (token-worker.ts): the tokenizer loads there on first use
 * and counts there, texts queueing one at a time; the thread ends after a while without one.
 */
import { findProgram, WorkerLane } from '../../http/worker-lane.js';
import { countedPart } from './token-pieces.js';

/** Loading the tokenizer costs a few hundred ms of the thread's time: kept for a while between counts. */
const IDLE_MS = 5 * 60_000;

const lane = new WorkerLane<{ text: string; length: number }, number>({
  name: 'token-count',
  program: () => findProgram(import.meta.url, 'token-worker', 'token-worker'),
  idleMs: IDLE_MS,
});

/** Tokens in `text` (gpt-tokenizer's o200k_base), counted on the token-count thread. */
export function countOnLane(text: string): Promise<number> {
  return lane.run({ text: countedPart(text), length: text.length });
}
