import { describe, expect, it } from 'vitest';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { DescriptorBudget, RESERVE_MIN, descriptorLimit, countOpenDescriptors } from '../../src/daemon/descriptor-budget.js';

/** A socket as far as the budget sees one: closes on destroy. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('close');
  }
}

/** A budget with 100 descriptors: 64 reserved, 10 held by other things, so 26 for clients. */
function budget(): { b: DescriptorBudget; connect: () => FakeSocket & Socket } {
  let clients = 0;
  const b = new DescriptorBudget(100, () => 10 + clients);
  const connect = () => {
    const s = new FakeSocket() as FakeSocket & Socket;
    clients++;
    s.once('close', () => clients--);
    if (!b.admit(s)) s.destroy();
    return s;
  };
  return { b, connect };
}

describe('descriptor budget for TCP clients', () => {
  it('keeps the reserve free: past it the oldest idle connection is shed for the new one', () => {
    const { b, connect } = budget();
    expect(b.reserve).toBe(RESERVE_MIN);
    const first = Array.from({ length: 26 }, connect);
    expect(first.every((s) => !s.destroyed)).toBe(true);
    const next = connect();
    expect(next.destroyed).toBe(false);
    expect(first[0]!.destroyed).toBe(true);
    expect(first.slice(1).every((s) => !s.destroyed)).toBe(true);
    expect(b.shed).toBe(1);
  });

  it('never sheds a connection with a request in flight or an upgraded one; refuses the new one when none is idle', () => {
    const { b, connect } = budget();
    const all = Array.from({ length: 26 }, connect);
    all.forEach((s, i) => (i === 0 ? b.upgraded(s) : b.requestStarted(s)));
    const refused = connect();
    expect(refused.destroyed).toBe(true);
    expect(b.refused).toBe(1);
    expect(all.every((s) => !s.destroyed)).toBe(true);
    // Answered: idle again, and the first to go (the upgraded one stays).
    b.requestEnded(all[5]!);
    expect(connect().destroyed).toBe(false);
    expect(all[5]!.destroyed).toBe(true);
    expect(all[0]!.destroyed).toBe(false);
  });

  it('does nothing without a limit, and reads the real one on Linux', () => {
    const b = new DescriptorBudget(Infinity, () => 1_000_000);
    expect(b.admit(new FakeSocket() as unknown as Socket)).toBe(true);
    if (process.platform === 'linux') {
      expect(descriptorLimit()).toBeGreaterThan(0);
      expect(countOpenDescriptors()).toBeGreaterThan(2);
    }
  });
});
