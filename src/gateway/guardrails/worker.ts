/**
 * The guardrail thread's program (bundled on its own as dist/bundle/guardrail-worker.mjs): it runs
 * the guardrails the daemon's thread hands over (texts too costly to scan between two requests) and
 * answers with the run. Plain data both ways.
 */
import { parentPort } from 'node:worker_threads';
import type { GuardrailConfig } from './config.js';
import { runGuardrails, type Slot } from './engine.js';

interface Job {
  id: number;
  config: GuardrailConfig[];
  slots: Slot[];
  disabled: string[];
}

parentPort!.on('message', ({ id, config, slots, disabled }: Job) => {
  try {
    parentPort!.postMessage({ id, run: runGuardrails(config, slots, new Set(disabled)) });
  } catch (err) {
    parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
