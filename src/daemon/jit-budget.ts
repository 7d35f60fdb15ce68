/**
 * How soon V8 optimises the daemon's code.
 *
 * V8 runs a function as bytecode first and has TurboFan optimise it once the function has run
 * about `--interrupt-budget` bytes of bytecode, three times over (66 KiB in Node 20's V8). A request
 * handler's path is a chain of functions that each run once per request, so at that budget most of
 * it is still unoptimised after hundreds of requests: measured on the alert bench, after a warm-up of
 * 600 POSTs, the request path (dispatch, body reading, journal append, node's http internals) still
 * ran as baseline code with inline-cache stubs. `ctl serve` lowers the budget to 16 KiB, so the path
 * is optimised within the first requests of a burst. The first POST of 10,000 alerts after that
 * warm-up, on the component alone, took 47.5-49.9 ms instead of 59.4-59.9 (medians of three sets of
 * five fresh servers each); budgets from 8 to 24 KiB gave the same (docs/alertmanager.md).
 *
 * CTL_DAEMON_JIT_BUDGET_KIB sets it (default 16; 0 = V8's own). An `--interrupt-budget` in
 * CTL_DAEMON_V8_FLAGS wins over both.
 */
import { setFlagsFromString } from 'node:v8';
import { wholeNumberFromEnv } from './env-number.js';

export const JIT_BUDGET_ENV = 'CTL_DAEMON_JIT_BUDGET_KIB';
export const DEFAULT_JIT_BUDGET_KIB = 16;

/** The budget in KiB the environment asks for; a bad value is an error (the daemon does not start). */
export function jitBudgetKiB(env: NodeJS.ProcessEnv): number {
  return wholeNumberFromEnv(env, JIT_BUDGET_ENV, DEFAULT_JIT_BUDGET_KIB, "KiB (0 = V8's own)");
}

/** Set V8's tier-up budget for the rest of the process's life, unless 0 or the daemon's V8 flags set it. */
export function applyJitBudget(kib: number, daemonV8Flags: string): void {
  if (kib === 0 || /--interrupt[-_]budget\b/.test(daemonV8Flags)) return;
  setFlagsFromString(`--interrupt-budget=${kib * 1024}`);
}
