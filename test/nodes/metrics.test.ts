import { describe, expect, it } from 'vitest';
import { aggregateNetwork, isOutOfNetwork, windowRate } from '../../src/nodes/metrics.js';

describe('metrics', () => {
  const snap = (currts: number, uptime: number, relays: number) => ({ currts, uptime, relays });

  it('computes window rates, 0 without history or with clock drift, -1 after a restart or a gap', () => {
    expect(windowRate(snap(1600, 1600, 16000), undefined, 600)).toBe(0);
    expect(windowRate(snap(1600, 1600, 16000), snap(1000, 1000, 10000), 600)).toBe(36000);
    expect(windowRate(snap(1600, 100, 1000), snap(1000, 1000, 10000), 600)).toBe(-1); // restart
    expect(windowRate(snap(2200, 2200, 16000), snap(1000, 1000, 10000), 600)).toBe(-1); // 1200 s apart
    expect(windowRate(snap(1600, 1630, 16000), snap(1000, 1000, 10000), 600)).toBe(0); // uptime and clock disagree
    expect(windowRate(snap(1600, 1600, 16000), snap(1000, 0, 0), 600)).toBe(-1);
  });

  it('decides out-of-network as the origin', () => {
    const net = { crawlTime: 10_000, lastHeight: 1000, blockTime: 20, seen: (ip: string) => ip === 'seen' };
    const now = 10_200; // 10 blocks after the crawl
    expect(isOutOfNetwork({ ip: 'x', uptime: 5000, height: 1010 }, now, net)).toBe(false);
    expect(isOutOfNetwork({ ip: 'x', uptime: 5000, height: 900 }, now, net)).toBe(true);
    expect(isOutOfNetwork({ ip: 'seen', uptime: 5000, height: 900 }, now, net)).toBe(false);
    expect(isOutOfNetwork({ ip: 'x', uptime: 1000, height: 900 }, now, net)).toBe(false); // up < 20 min
    expect(isOutOfNetwork({ ip: 'x', uptime: 400, height: 900 }, now, net)).toBe(false);
    expect(isOutOfNetwork({ ip: 'x', uptime: 5000, height: 900 }, now, undefined)).toBe(false);
  });

  it('aggregates the network with block time since mainnet launch', () => {
    const t = 1631786147;
    const ns = aggregateNetwork(
      [
        { sync_state: 'PERSIST_FINISHED', height: 3097516, uptime: 3600, relays: 7200, proposals: 1, answered: 1 },
        { sync_state: 'SYNC_STARTED', height: 10, uptime: 0, relays: 0, proposals: 0, answered: 1 },
        { sync_state: null, height: 0, uptime: 0, relays: 0, proposals: 0, answered: 0 },
      ],
      t,
      t * 1000,
    );
    expect(ns).toMatchObject({ relays: 7200, relays_per_hour: 7200, average_relays: 2400, average_uptime: 1200, nodes_count: 3, persist_nodes_count: 1 });
    expect(ns.average_blockTime).toBeCloseTo(22.589506, 5);
    expect(ns.average_blocksPerDay).toBeCloseTo(3824.785, 2);
  });
});
