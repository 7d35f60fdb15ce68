/**
 * One thread for guardrail scans too costly for the daemon's event loop (src/gateway/guardrails/
 * worker.ts). It starts on the first such scan and ends after IDLE_MS without one; scans queue there,
 * one at a time, so a flood of huge requests costs one core, never the loop every API shares.
 */
import { findProgram, WorkerLane } from '../../http/worker-lane.js';
import type { GuardrailConfig } from './config.js';
import type { GuardrailRun, Slot } from './engine.js';

const IDLE_MS = 30_000;

const lane = new WorkerLane<{ config: readonly GuardrailConfig[]; slots: Slot[]; disabled: string[] }, GuardrailRun>({
  name: 'guardrail',
  // tsc's output worker.js beside this module, else the bundle's guardrail-worker.mjs.
  program: () => findProgram(import.meta.url, 'worker', 'guardrail-worker'),
  idleMs: IDLE_MS,
});

/** The guardrails over `slots`, run on the guardrail thread. */
export function runOnLane(config: readonly GuardrailConfig[], slots: Slot[], disabled: ReadonlySet<string>): Promise<GuardrailRun> {
  return lane.run({ config, slots, disabled: [...disabled] });
}
