import { describe, expect, it } from 'vitest';
import { classifyAddress, splitAddressList } from '../../src/nodes/addresses.js';
import { parseConfig, DEFAULT_CONFIG } from '../../src/nodes/config.js';
import { reply, toJson } from '../../src/nodes/envelope.js';
import { formatDateTime, formatGoDuration, formatTimezone } from '../../src/nodes/format.js';
import { aggregateNetwork, isOutOfNetwork, windowRate } from '../../src/nodes/metrics.js';
import { decodeNeighbors, decodeNodeState, ipFromAddr, relaysPerHour } from '../../src/nodes/node-state.js';
import { readBool, readId, readList } from '../../src/nodes/values.js';

describe('addresses', () => {
  it('splits by comma first, then line breaks, then spaces; per-line names with commas', () => {
    expect(splitAddressList('1.1.1.1, 2.2.2.2')).toEqual([{ ip: '1.1.1.1' }, { ip: '2.2.2.2' }]);
    expect(splitAddressList('1.1.1.1\n2.2.2.2 ')).toEqual([{ ip: '1.1.1.1' }, { ip: '2.2.2.2' }]);
    expect(splitAddressList('1.1.1.1 2.2.2.2')).toEqual([{ ip: '1.1.1.1' }, { ip: '2.2.2.2' }]);
    expect(splitAddressList('1.1.1.1, a\n2.2.2.2,b_c-d')).toEqual([
      { ip: '1.1.1.1', name: 'a' },
      { ip: '2.2.2.2', name: 'b_c-d' },
    ]);
    // Not every line named: commas and line breaks both separate.
    expect(splitAddressList('1.1.1.1,2.2.2.2\n3.3.3.3')).toEqual([{ ip: '1.1.1.1' }, { ip: '2.2.2.2' }, { ip: '3.3.3.3' }]);
    expect(splitAddressList('1.1.1.1')).toBeNull();
    expect(splitAddressList('1.1.1.1;2.2.2.2')).toBeNull();
  });

  it('classifies addresses', () => {
    expect(classifyAddress('8.8.8.8')).toBe('public');
    expect(classifyAddress('203.0.113.1')).toBe('public');
    expect(classifyAddress('198.19.255.1')).toBe('public');
    expect(classifyAddress('100.127.0.1')).toBe('private');
    expect(classifyAddress('100.128.0.1')).toBe('public');
    expect(classifyAddress('fe80::1')).toBe('ipv6');
    expect(classifyAddress('1.2.3.4 ')).toBe('invalid');
  });
});

describe('envelope', () => {
  it('serialises in the origin key order, ErrMessage only when set', () => {
    expect(toJson(reply('x', 0, { a: 1 }))).toBe('{"Method":"x","Code":0,"Error":false,"Value":{"a":1}}');
    expect(toJson(reply('x', 3))).toBe('{"Method":"x","Code":3,"Error":false,"ErrMessage":"No info/entries in a database","Value":null}');
    expect(toJson(reply('x', 17))).toContain('"Error":true');
  });
});

describe('format', () => {
  it('prints Go durations', () => {
    expect(formatGoDuration(680.055301)).toBe('680.055301ms');
    expect(formatGoDuration(0.5)).toBe('500µs');
    expect(formatGoDuration(1500)).toBe('1.5s');
    expect(formatGoDuration(125_000)).toBe('2m5s');
    expect(formatGoDuration(0.0001)).toBe('100ns');
  });

  it('prints local date-times and the UTC offset', () => {
    expect(formatDateTime(Date.now())).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(formatTimezone(Date.now())).toMatch(/^[+-]\d{4}$/);
  });
});

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

describe('values', () => {
  it('reads form and JSON values', () => {
    expect(readBool('True')).toBe(true);
    expect(readBool('no')).toBeUndefined();
    expect(readId('12')).toBe(12);
    expect(readId('0')).toBeUndefined();
    expect(readId('1e3')).toBeUndefined();
    expect(readList('1, 2')).toEqual(['1', '2']);
  });
});

describe('config', () => {
  it('defaults contact nothing and validate keys', () => {
    const c = parseConfig({});
    expect(c).toEqual(DEFAULT_CONFIG);
    expect(c.crawl.seeds).toEqual([]);
    expect(c.prices.url).toBe('');
    expect(c.balances.rpc).toBe('');
    expect(parseConfig({ poll: { interval: 60 }, crawl: { seeds: ['seed.example:30003'] } }).poll.interval).toBe(60);
    expect(() => parseConfig({ poll: { interval: 'x' } })).toThrow(/nodes.poll.interval must be a number/);
    expect(() => parseConfig({ poll: 5 })).toThrow(/nodes.poll must be a mapping/);
    expect(() => parseConfig({ prices: { url: 'ftp://x' } })).toThrow(/prices.url/);
    expect(() => parseConfig({ crawl: { seeds: [''] } })).toThrow(/seeds/);
    expect(() => parseConfig({ 'rate-limit': { limit: 0 } })).toThrow(/rate-limit.limit/);
    expect(() => parseConfig({ poll: { intervall: 5 } })).toThrow(/nodes.poll.intervall is not a known setting/);
    expect(() => parseConfig({ crawler: {} })).toThrow(/nodes.crawler is not a known setting/);
  });
});

describe('raw JSON splicing', () => {
  it('places cached text into replies, nested too, and cannot be spoofed by strings', async () => {
    const { RawJson } = await import('../../src/nodes/envelope.js');
    const inner = reply('getfullstack', 0, new RawJson('{"List":[1,2]}'));
    const text = toJson(reply('getfullstack', 0, { Nodes: inner, Other: { Version: '\u0000raw:abcdef012345:0' } }));
    const o = JSON.parse(text);
    expect(o.Value.Nodes.Value).toEqual({ List: [1, 2] });
    expect(o.Value.Other.Version).toBe('\u0000raw:abcdef012345:0');
  });
});
