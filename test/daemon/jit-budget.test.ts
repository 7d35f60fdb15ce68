import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_JIT_BUDGET_KIB, jitBudgetKiB } from '../../src/daemon/jit-budget.js';
import { ROOT } from '../helpers/daemon.js';
import { expectWholeNumberSetting } from './env-reader.js';

/**
 * In a fresh node process: apply the daemon's budget from `env`, then call a small function until
 * TurboFan has optimised it (synchronously: no concurrent recompilation) and print how many calls
 * that took.
 */
function callsUntilOptimised(env: Record<string, string>): number {
  const script = `
    const { applyJitBudget, jitBudgetKiB } = await import(process.env.MODULE);
    applyJitBudget(jitBudgetKiB(process.env), process.env.CTL_DAEMON_V8_FLAGS ?? '');
    function work(o) { let s = o.a * 3 + o.b; if (o.c) s += o.c.length; if (s > 10) s -= 1; else s += 2; return s; }
    let calls = 0;
    while (!(%GetOptimizationStatus(work) & 16) && calls < 1e6) { work({ a: calls, b: 2, c: 'xy' }); calls++; }
    process.stdout.write(String(calls));
  `;
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', '--input-type=module', '-e', script], {
    env: { ...process.env, CTL_DAEMON_JIT_BUDGET_KIB: '', CTL_DAEMON_V8_FLAGS: '', ...env, MODULE: pathToFileURL(join(ROOT, 'dist/src/daemon/jit-budget.js')).href },
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return Number(r.stdout);
}

describe('JIT tier-up budget', () => {
  it('reads CTL_DAEMON_JIT_BUDGET_KIB', () => {
    expectWholeNumberSetting(jitBudgetKiB, 'CTL_DAEMON_JIT_BUDGET_KIB', DEFAULT_JIT_BUDGET_KIB, 'KiB');
  });

  it("optimises a function in fewer calls than V8's own budget, unless 0 or CTL_DAEMON_V8_FLAGS sets one", () => {
    const v8Own = callsUntilOptimised({ CTL_DAEMON_JIT_BUDGET_KIB: '0' });
    const daemon = callsUntilOptimised({});
    expect(daemon).toBeGreaterThan(0);
    expect(daemon * 1.5).toBeLessThan(v8Own);
    // bin/ctl applies CTL_DAEMON_V8_FLAGS itself; the default must not override its budget.
    expect(callsUntilOptimised({ CTL_DAEMON_V8_FLAGS: '--interrupt-budget=70000' })).toBe(v8Own);
  });
});
