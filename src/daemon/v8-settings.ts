/**
 * What `ctl serve` does to V8 (and the bench's component-alone process the same way), from the
 * environment: the tier-up budget (jit-budget.ts), the young-generation cap (young-generation.ts)
 * and the idle trim (idle-heap.ts). Every value is read before any is applied, so a bad one stops
 * the daemon with nothing changed. Returns the hook each request calls.
 */
import { applyJitBudget, jitBudgetKiB } from './jit-budget.js';
import { capYoungGeneration, youngGenerationMiB } from './young-generation.js';
import { IdleHeapTrim, idleTrimMs } from './idle-heap.js';

export function applyDaemonV8Settings(env: NodeJS.ProcessEnv): () => void {
  const budgetKiB = jitBudgetKiB(env);
  const capMiB = youngGenerationMiB(env);
  const idleMs = idleTrimMs(env);
  applyJitBudget(budgetKiB, env.CTL_DAEMON_V8_FLAGS ?? '');
  capYoungGeneration(capMiB);
  return new IdleHeapTrim(idleMs).activity;
}
