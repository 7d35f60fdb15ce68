import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/http/clock.js';
import { EgressRefusedError } from '../../src/egress/index.js';
import { FakeNknNetwork } from '../fakes/nkn-node.js';
import { startHarness, type Harness } from './harness.js';

const T0 = Date.parse('2030-01-01T00:00:00Z'); // on a 10-minute boundary
const MIN = 60_000;

let h: Harness | undefined;
let fake: FakeNknNetwork | undefined;
afterEach(async () => {
  await h?.close();
  await fake?.stop();
  h = undefined;
  fake = undefined;
});

/** A harness whose egress maps `ips` (port 30003) to the fake network; both share one manual clock. */
async function setup(ips: string[], config: Record<string, unknown> = {}, extraMap: Record<string, string> = {}) {
  const clock = new ManualClock(T0);
  fake = await new FakeNknNetwork({ clock }).start();
  h = await startHarness({
    clock,
    addressMap: { ...fake.addressMap(ips), ...extraMap },
    config: { poll: { 'retry-delay': 0, timeout: 1, 'retry-timeout': 0.5, 'dirty-timeout': 0.5, ...((config.poll as object) ?? {}) }, ...withoutPoll(config) },
  });
  const Hash = await h.genid();
  clock.set(T0);
  return { Hash, clock, fake, h };
}

function withoutPoll(c: Record<string, unknown>): Record<string, unknown> {
  const { poll: _p, ...rest } = c;
  return rest;
}

async function add(Hash: string, ...ips: string[]) {
  const r = ips.length === 1
    ? await h!.call('addnodes', { Hash, Multiple: false, Name: '', Ip: ips[0] })
    : await h!.call('addnodes', { Hash, Multiple: true, Name: '', Ip: ips.join(',') });
  expect(r.Code).toBe(0);
}

async function nodes(Hash: string): Promise<any[]> {
  const r = await h!.call('getmynodes', { Hash });
  return r.Value?.List ?? [];
}

describe('poller', () => {
  it('polls getnodestate through egress and reports a healthy node', async () => {
    const { Hash, fake } = await setup(['203.0.113.10']);
    fake.setNode('203.0.113.10', { relaysPerSecond: 10, version: 'v2.2.1', proposalSubmitted: 3, extra: { ledgerMode: 'light', futureField: { x: 1 } } });
    await add(Hash, '203.0.113.10');
    const report = await h!.handle.poller.runCycle();
    expect(report).toMatchObject({ polled: 1, online: 1, offline: 0 });
    expect(fake.requests).toEqual([{ ip: '203.0.113.10', host: '203.0.113.10:30003', method: 'getnodestate' }]);
    const [n] = await nodes(Hash);
    const st = fake.nodeState('203.0.113.10');
    expect(n).toEqual({
      Currtimestamp: Math.floor(T0 / 1000),
      Height: st.height,
      Ip: '203.0.113.10',
      LatestUpdate: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
      Name: 'Node_1',
      NodeId: expect.any(Number),
      ProposalSubmitted: 3,
      RelayMessageCount: 86400 * 10,
      RelaysPerHour: 36000,
      RelaysPerHour10: 0,
      RelaysPerHour60: 0,
      SyncState: 'PERSIST_FINISHED',
      Uptime: 86400,
      Version: 'v2.2.1',
    });
    expect(Object.keys(n)).toEqual([...Object.keys(n)].sort());
  });

  it('polls an address shared by several accounts once and shows it to each', async () => {
    const { Hash, fake } = await setup(['203.0.113.11']);
    const other = await h!.genid();
    await add(Hash, '203.0.113.11');
    await add(other, '203.0.113.11');
    await h!.handle.poller.runCycle();
    expect(fake.hits('203.0.113.11')).toBe(1);
    expect((await nodes(Hash))[0].SyncState).toBe('PERSIST_FINISHED');
    expect((await nodes(other))[0].SyncState).toBe('PERSIST_FINISHED');
  });

  it('retries an offline node, marks it _OFFLINE_ (Err 1) and moves it to the dirty pool', async () => {
    const { Hash, fake } = await setup(['203.0.113.12'], { poll: { retries: 2, 'dirty-retries': 1 } });
    fake.setMode('203.0.113.12', 'offline');
    await add(Hash, '203.0.113.12');
    const r = await h!.handle.poller.runCycle();
    expect(r).toMatchObject({ online: 0, offline: 1 });
    expect(fake.hits('203.0.113.12')).toBe(3);
    const [n] = await nodes(Hash);
    expect(n).toMatchObject({ Err: 1, SyncState: '_OFFLINE_', ProposalSubmitted: -1, Height: 0, Uptime: 0, RelayMessageCount: 0, Version: '' });
    // Dirty pool: 1 + dirty-retries attempts.
    await h!.handle.poller.runCycle();
    expect(fake.hits('203.0.113.12')).toBe(5);
    // Back online: main pool again, counters reset.
    fake.setMode('203.0.113.12', 'online');
    await h!.handle.poller.runCycle();
    expect((await nodes(Hash))[0]).not.toHaveProperty('Err');
    const state = (await h!.handle.services.store.allStates())[0]!;
    expect(state).toMatchObject({ pool: 'main', fails: 0, ever_ok: 1 });
  });

  it('times out a node that never answers', async () => {
    const { Hash, fake } = await setup(['203.0.113.13'], { poll: { timeout: 0.2, retries: 0 } });
    fake.setMode('203.0.113.13', 'blackhole');
    await add(Hash, '203.0.113.13');
    const t = performance.now();
    await h!.handle.poller.runCycle();
    expect(performance.now() - t).toBeLessThan(3000);
    expect((await nodes(Hash))[0]).toMatchObject({ Err: 1, SyncState: '_OFFLINE_' });
  });

  it('shows JSON-RPC errors -45022 and -45024 as GENERATING ID and PRUNING DB with zeroed numbers, and garbage as offline', async () => {
    const ips = ['203.0.113.14', '203.0.113.15', '203.0.113.16'];
    const { Hash, fake } = await setup(ips, { poll: { retries: 0 } });
    fake.setMode(ips[0]!, 'error-45022').setMode(ips[1]!, 'error-45024').setMode(ips[2]!, 'garbage');
    await add(Hash, ...ips);
    const r = await h!.handle.poller.runCycle();
    expect(r).toMatchObject({ online: 0, errors: 2, offline: 1 });
    const [a, b, c] = await nodes(Hash);
    expect(a).toMatchObject({ SyncState: 'GENERATING ID', Height: 0, Uptime: 0, RelayMessageCount: 0, Version: '' });
    expect(a).not.toHaveProperty('Err');
    expect(b).toMatchObject({ SyncState: 'PRUNING DB', Height: 0 });
    expect(b).not.toHaveProperty('Err');
    expect(c).toMatchObject({ SyncState: '_OFFLINE_', Err: 1 });
    // A JSON-RPC error does not count as a failure.
    expect((await h!.handle.services.store.allStates()).find((s) => s.ip === ips[0])).toMatchObject({ fails: 0, pool: 'main' });
  });

  it('computes RelaysPerHour10/60 from 10-minute snapshots and -1 after a restart', async () => {
    const { Hash, fake, clock } = await setup(['203.0.113.17'], { poll: { interval: 120 } });
    fake.setNode('203.0.113.17', { relaysPerSecond: 5 });
    await add(Hash, '203.0.113.17');
    await h!.handle.poller.runCycle(); // T0: first snapshot
    let [n] = await nodes(Hash);
    expect([n.RelaysPerHour10, n.RelaysPerHour60]).toEqual([0, 0]);
    clock.advance(2 * MIN); // not a snapshot slot: values stand
    await h!.handle.poller.runCycle();
    clock.set(T0 + 10 * MIN);
    await h!.handle.poller.runCycle();
    [n] = await nodes(Hash);
    expect(n.RelaysPerHour10).toBe(18000);
    expect(n.RelaysPerHour60).toBe(0);
    for (let i = 2; i <= 6; i++) {
      clock.set(T0 + i * 10 * MIN);
      await h!.handle.poller.runCycle();
    }
    [n] = await nodes(Hash);
    expect([n.RelaysPerHour10, n.RelaysPerHour60]).toEqual([18000, 18000]);
    expect(await h!.handle.services.store.history('203.0.113.17')).toHaveLength(7);
    clock.set(T0 + 70 * MIN);
    await h!.handle.poller.runCycle();
    expect(await h!.handle.services.store.history('203.0.113.17')).toHaveLength(7); // only the last 7 are kept
    // Restart between two snapshots: uptime went down.
    clock.set(T0 + 75 * MIN);
    fake.restart('203.0.113.17');
    clock.set(T0 + 80 * MIN);
    await h!.handle.poller.runCycle();
    [n] = await nodes(Hash);
    expect(n.Uptime).toBe(300);
    expect(n.RelaysPerHour10).toBe(-1);
    expect(n.RelaysPerHour60).toBe(-1);
  });

  it('auto-removes nodes that never answered after N failures, and long-offline ones after M', async () => {
    const ips = ['203.0.113.18', '203.0.113.19'];
    const { Hash, fake } = await setup(ips, { poll: { retries: 0, 'dirty-retries': 0, 'remove-never-seen-after': 2, 'remove-after': 4 } });
    fake.setMode(ips[0]!, 'offline');
    await add(Hash, ...ips);
    await h!.handle.poller.runCycle(); // ips[1] answers once
    fake.setMode(ips[1]!, 'offline');
    await h!.handle.poller.runCycle(); // ips[0]: 2 failures; ips[1]: 1
    expect((await nodes(Hash)).map((n) => n.Ip)).toEqual(ips);
    const r = await h!.handle.poller.runCycle(); // ips[0]: 3 failures > 2, never seen
    expect(r.removed).toEqual([ips[0]]);
    expect((await nodes(Hash)).map((n) => n.Ip)).toEqual([ips[1]]);
    await h!.handle.poller.runCycle(); // ips[1]: 3 failures
    await h!.handle.poller.runCycle(); // 4
    expect((await nodes(Hash)).map((n) => n.Ip)).toEqual([ips[1]]);
    const r2 = await h!.handle.poller.runCycle(); // 5 > 4
    expect(r2.removed).toEqual([ips[1]]);
    expect((await h!.call('getmynodes', { Hash })).Code).toBe(3);
  });

  it('keeps at most `concurrency` requests in flight', async () => {
    const ips = Array.from({ length: 12 }, (_, i) => `198.51.100.${i + 1}`);
    const { Hash, fake } = await setup(ips, { poll: { concurrency: 3 } });
    for (const ip of ips) fake.setNode(ip, { delayMs: 40 });
    await add(Hash, ...ips);
    const r = await h!.handle.poller.runCycle();
    expect(r.online).toBe(12);
    expect(fake.maxInFlight).toBeLessThanOrEqual(3);
    expect(fake.maxInFlight).toBeGreaterThan(1);
  });

  it('never leaves loopback: an unmapped address is refused by egress and the node shows offline', async () => {
    const { Hash, fake } = await setup(['203.0.113.20'], { poll: { retries: 0 } });
    await add(Hash, '203.0.113.20', '198.51.100.200'); // the second has no address-map entry
    await expect(h!.egress.resolve('198.51.100.200', 30003)).rejects.toBeInstanceOf(EgressRefusedError);
    const r = await h!.handle.poller.runCycle();
    expect(r).toMatchObject({ online: 1, offline: 1 });
    expect(fake.requests.every((q) => q.host === '203.0.113.20:30003')).toBe(true);
    const byIp = Object.fromEntries((await nodes(Hash)).map((n) => [n.Ip, n]));
    expect(byIp['198.51.100.200']).toMatchObject({ Err: 1 });
    expect(byIp['203.0.113.20']).not.toHaveProperty('Err');
  });

  it('aggregates getnetstatus over the monitored nodes when no crawl is configured', async () => {
    const ips = ['203.0.113.21', '203.0.113.22', '203.0.113.23'];
    const { Hash, fake } = await setup(ips, { poll: { retries: 0 } });
    fake.setNode(ips[1]!, { syncState: 'SYNC_STARTED', relaysPerSecond: 20 });
    fake.setMode(ips[2]!, 'offline');
    await add(Hash, ...ips);
    await h!.handle.poller.runCycle();
    const r = await h!.call('getnetstatus', { Hash });
    expect(r.Code).toBe(0);
    expect(Object.keys(r.Value)).toEqual([
      'relays',
      'average_uptime',
      'average_relays',
      'relays_per_hour',
      'proposalSubmitted',
      'persist_nodes_count',
      'nodes_count',
      'last_height',
      'last_timestamp',
      'average_blockTime',
      'average_blocksPerDay',
      'latest_update',
    ]);
    expect(r.Value).toMatchObject({ nodes_count: 2, persist_nodes_count: 1, relays: 86400 * 30, relays_per_hour: 36000 + 72000, average_relays: 54000 });
    expect(r.Value.last_height).toBe(fake.networkHeight());
    expect(r.Value.average_blockTime).toBeCloseTo((Math.floor(T0 / 1000) - 1561814790) / fake.networkHeight(), 5);
    const full = await h!.call('getfullstack', { Hash });
    expect(full.Code).toBe(0);
    expect(full.Value.Netstatus).toMatchObject({ Method: 'getfullstack', Code: 0 });
    expect(full.Value.Nodes.Value.List).toHaveLength(3);
  });

  it('finds a monitored node by its public key', async () => {
    const { Hash, fake } = await setup(['203.0.113.24']);
    await add(Hash, '203.0.113.24');
    await h!.handle.poller.runCycle();
    const pk = fake.spec('203.0.113.24').publicKey;
    expect(await h!.call('getnodeipbypublickey', { PublicKey: pk.toUpperCase() })).toEqual({
      Method: 'getnodeipbypublickey',
      Code: 0,
      Error: false,
      Value: { IpList: ['203.0.113.24'] },
    });
  });
});

describe('getnodedetails', () => {
  const ip = '203.0.113.30';
  async function detailsFor(mode: Parameters<FakeNknNetwork['setMode']>[1] | 'online', config: Record<string, unknown> = {}) {
    const { Hash, fake } = await setup([ip], config);
    fake.setNode(ip, { mode: mode as never, neighbors: ['192.0.2.1', '192.0.2.2', '192.0.2.3'], roundTripTimes: [60, 221, 400] });
    fake.setNode('192.0.2.3', { syncState: 'SYNC_STARTED' });
    await add(Hash, ip);
    const id = (await nodes(Hash))[0].NodeId;
    return h!.call('getnodedetails', { Hash, NodeId: id });
  }

  it('queries the node live for its state and neighbours', async () => {
    const r = await detailsFor('online');
    expect(r).toMatchObject({ Method: 'getnodedetails', Code: 0, Error: false });
    expect(r.Value.NodeStats).toMatchObject({ MinPing: 60, AvgPing: 227, MaxPing: 400, NeighborCount: 3, NeighborPersist: 2, RelaysPerHour: 36000 });
    expect(r.Value.NodeStats.NodeState).toMatchObject({ id: '1', jsonrpc: '2.0', result: { addr: `tcp://${ip}:30001`, syncState: 'PERSIST_FINISHED' } });
    for (const k of ['GetneighborTime', 'GetnodestateTime', 'HandlingTime']) expect(r.Value.DebugInfo[k]).toMatch(/^[\d.]+(ns|µs|ms|s)$/);
    expect(fake!.hits(ip, 'getnodestate')).toBe(1);
    expect(fake!.hits(ip, 'getneighbor')).toBe(1);
  });

  it('answers 20 offline, 21 undecodable state, 4 with NodeError for a JSON-RPC error', async () => {
    expect((await detailsFor('offline')).Code).toBe(20);
    await h!.close();
    await fake!.stop();
    expect((await detailsFor('garbage')).Code).toBe(21);
    await h!.close();
    await fake!.stop();
    const e = await detailsFor('error-45022');
    expect(e).toMatchObject({ Code: 4, Error: true, Value: { NodeError: { Code: -45022 }, NodeId: expect.any(Number) } });
  });

  it('answers 22 when neighbours time out, 23 when undecodable, 24 on a JSON-RPC error', async () => {
    expect((await detailsFor('neighbor-blackhole', { details: { timeout: 0.3 } })).Code).toBe(22);
    await h!.close();
    await fake!.stop();
    expect((await detailsFor('neighbor-garbage')).Code).toBe(23);
    await h!.close();
    await fake!.stop();
    expect((await detailsFor('neighbor-error')).Code).toBe(24);
  });

  it('answers 20 when the node does not answer within the timeout', async () => {
    const t = performance.now();
    expect((await detailsFor('blackhole', { details: { timeout: 0.3 } })).Code).toBe(20);
    expect(performance.now() - t).toBeLessThan(3000);
  });
});
