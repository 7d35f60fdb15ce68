import { describe, expect, it } from 'vitest';
import { decodeNeighbors, decodeNodeState, ipFromAddr, relaysPerHour } from '../../src/nodes/node-state.js';

describe('node replies', () => {
  it('decodes leniently', () => {
    const s = decodeNodeState({ syncState: 'PERSIST_FINISHED', height: '12', uptime: 100, relayMessageCount: '3600', unknown: {} });
    expect(s).toMatchObject({ height: 12, uptime: 100, relayMessageCount: 3600, version: '', publicKey: '' });
    expect(decodeNodeState({ height: 1 })).toBeNull();
    expect(decodeNodeState([])).toBeNull();
    expect(decodeNeighbors({})).toBeNull();
    expect(decodeNeighbors([{ addr: 'tcp://1.2.3.4:30001', roundTripTime: 5 }, 'x'])).toEqual([
      { addr: 'tcp://1.2.3.4:30001', ip: '1.2.3.4', publicKey: '', roundTripTime: 5, syncState: '', height: 0 },
    ]);
    expect(ipFromAddr('tcp://[::1]:30001')).toBeNull();
    expect(relaysPerHour(7200, 3600)).toBe(7200);
    expect(relaysPerHour(7200, 0)).toBe(0);
  });
});
