/**
 * The guardrail thread's program (bundled on its own as dist/bundle/guardrail-worker.mjs): it runs
 * the guardrails the daemon's thread hands over (texts too costly to scan between two requests) and
 * answers with the run. Plain data both ways, the slots packed (packed-slots.ts).
 */
import { serveLane } from '../../http/worker-lane-thread.js';
import type { GuardrailConfig } from './config.js';
import { runGuardrails } from './engine.js';
import type { LaneJob, LaneRun } from './lane.js';
import { packSlots, unpackSlots } from './packed-slots.js';

serveLane(({ config, slots, disabled }: LaneJob): LaneRun => {
  const run = runGuardrails(config as GuardrailConfig[], unpackSlots(slots), new Set(disabled));
  const out: LaneRun = { results: run.results, hits: run.hits, changed: run.changed };
  if (run.blockedBy) out.blockedBy = run.blockedBy.name;
  if (run.changed) out.slots = packSlots(run.slots);
  return out;
});
