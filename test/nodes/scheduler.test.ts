/**
 * The node monitor's scheduler with a lease (several daemons on one database): a turn runs only on
 * the lease holder, and a daemon that held it and lost it is told once, so what it reported (its
 * node alerts) is left to the new holder.
 */
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { systemClock } from '../../src/http/clock.js';
import { Scheduler } from '../../src/nodes/scheduler.js';
import { NodeAlerts } from '../../src/nodes/alerts.js';
import type { InternalAlert, InternalAlerts } from '../../src/http/component.js';
import type { NodesData } from '../../src/nodes/data.js';

const log = pino({ level: 'silent' });

describe('Scheduler with a lease', () => {
  it('runs the job while the lease is held and calls onLost once when another daemon takes it', async () => {
    const held = [true, true, false, false];
    let turns = 0;
    let runs = 0;
    let lost = 0;
    const s = new Scheduler(systemClock, log);
    s.every('poll', 1, async () => void runs++, {
      runAtStart: true,
      lease: async () => held[Math.min(turns++, held.length - 1)]!,
      onLost: () => void lost++,
    });
    const end = Date.now() + 6000;
    while (turns < 4 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    s.stop();
    expect(turns).toBeGreaterThanOrEqual(4);
    expect(runs).toBe(2);
    expect(lost).toBe(1);
  }, 10_000);
});

describe('NodeAlerts.withdraw', () => {
  it('resolves every node alert this daemon raised', () => {
    const calls: [string, readonly InternalAlert[]][] = [];
    const alerts: InternalAlerts = {
      enabled: true,
      reconcile: (name, firing) => void calls.push([name, firing]),
      fire() {},
      resolve() {},
      event() {},
      firing: () => [],
    };
    new NodeAlerts({} as NodesData, alerts, 3).withdraw();
    expect(calls).toEqual([
      ['NodeOffline', []],
      ['NodeOutOfNetwork', []],
      ['NodeStuck', []],
    ]);
  });
});
