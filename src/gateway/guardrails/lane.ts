/**
 * One thread for guardrail scans too costly for the daemon's event loop (src/gateway/guardrails/
 * worker.ts). It starts on the first such scan and ends after IDLE_MS without one; scans queue there,
 * one at a time, so a flood of huge requests costs one core, never the loop every API shares.
 * The slots go there and back packed (packed-slots.ts), and come back only when a redaction
 * rewrote them.
 */
import { findProgram, WorkerLane } from '../../http/worker-lane.js';
import type { GuardrailConfig } from './config.js';
import type { GuardrailResult, GuardrailRun, Slot } from './engine.js';
import { packSlots, unpackSlots, type PackedSlots } from './packed-slots.js';

const IDLE_MS = 30_000;

export interface LaneJob {
  config: readonly GuardrailConfig[];
  slots: PackedSlots;
  disabled: string[];
}

/** A GuardrailRun as the thread answers it: the slots only when changed, the blocking result by name. */
export interface LaneRun {
  results: GuardrailResult[];
  hits: string[];
  changed: boolean;
  blockedBy?: string;
  slots?: PackedSlots;
}

const lane = new WorkerLane<LaneJob, LaneRun>({
  name: 'guardrail',
  // tsc's output worker.js beside this module, else the bundle's guardrail-worker.mjs.
  program: () => findProgram(import.meta.url, 'worker', 'guardrail-worker'),
  idleMs: IDLE_MS,
});

/** The guardrails over `slots`, run on the guardrail thread. */
export async function runOnLane(config: readonly GuardrailConfig[], slots: Slot[], disabled: ReadonlySet<string>): Promise<GuardrailRun> {
  const r = await lane.run({ config, slots: packSlots(slots), disabled: [...disabled] });
  const run: GuardrailRun = { slots: r.changed && r.slots ? unpackSlots(r.slots) : slots, results: r.results, hits: r.hits, changed: r.changed };
  if (r.blockedBy !== undefined) run.blockedBy = r.results.find((x) => x.name === r.blockedBy);
  return run;
}
