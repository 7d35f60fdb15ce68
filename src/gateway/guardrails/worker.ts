/**
 * The guardrail thread's program (bundled on its own as dist/bundle/guardrail-worker.mjs): it runs
 * the guardrails the daemon's thread hands over (texts too costly to scan between two requests) and
 * answers with the run. Plain data both ways.
 */
import { serveLane } from '../../http/worker-lane-thread.js';
import type { GuardrailConfig } from './config.js';
import { runGuardrails, type Slot } from './engine.js';

interface Job {
  config: GuardrailConfig[];
  slots: Slot[];
  disabled: string[];
}

serveLane(({ config, slots, disabled }: Job) => runGuardrails(config, slots, new Set(disabled)));
