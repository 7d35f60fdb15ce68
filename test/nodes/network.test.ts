import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/http/clock.js';
import { FakeNknNetwork } from '../fakes/nkn-node.js';
import { startHarness, type Harness } from './harness.js';

const T0 = Date.parse('2030-01-01T00:00:00Z');
const WALLET = 'NKNZKKF9u1MUQWnK272YoFiMTn5tjZh7uRQE';

let h: Harness | undefined;
let fake: FakeNknNetwork | undefined;
let priceServer: http.Server | undefined;
afterEach(async () => {
  await h?.close();
  await fake?.stop();
  if (priceServer) await new Promise((r) => priceServer!.close(r));
  h = fake = priceServer = undefined;
});

describe('network crawl', () => {
  const seed = '192.0.2.200';
  const round1 = ['192.0.2.201', '192.0.2.202', '198.51.100.250']; // the last one has no address-map entry
  const round2 = ['192.0.2.203'];

  async function setup() {
    const clock = new ManualClock(T0);
    fake = await new FakeNknNetwork({ clock }).start();
    fake.setNode(seed, { neighbors: [...round1, '10.0.0.5'] });
    fake.setNode('192.0.2.201', { neighbors: [...round2, '192.0.2.202'] });
    fake.setNode('192.0.2.203', { neighbors: ['192.0.2.204'], syncState: 'SYNC_STARTED' });
    fake.setNode('203.0.113.40', { frozenHeight: fake.networkHeight() - 100 });
    const mapped = [seed, '192.0.2.201', '192.0.2.202', '192.0.2.203', '192.0.2.204', '203.0.113.40', '203.0.113.41'];
    h = await startHarness({ clock, addressMap: fake.addressMap(mapped), config: { crawl: { seeds: [seed] }, poll: { 'retry-delay': 0, retries: 0 } } });
    const Hash = await h.genid();
    clock.set(T0);
    return { Hash, clock, fake };
  }

  it('asks the seeds and then every discovered address for neighbours, then each for its state', async () => {
    const { Hash, fake } = await setup();
    const report = await h!.handle.crawler.run();
    expect(report).toMatchObject({ discovered: 4, answered: 3 });
    expect(fake.hits(seed, 'getneighbor')).toBe(1);
    expect(fake.hits('192.0.2.201', 'getneighbor')).toBe(1);
    expect(fake.hits('192.0.2.203', 'getneighbor')).toBe(0); // two rounds only
    expect(fake.hits('192.0.2.204')).toBe(0);
    expect(fake.hits('192.0.2.203', 'getnodestate')).toBe(1);
    expect(fake.requests.some((r) => r.ip === '10.0.0.5')).toBe(false); // private addresses are not followed
    const ns = await h!.call('getnetstatus', { Hash });
    expect(ns.Code).toBe(0);
    expect(ns.Value).toMatchObject({ nodes_count: 4, persist_nodes_count: 2, last_height: fake.networkHeight(), last_timestamp: Math.floor(T0 / 1000) });
    expect(ns.Value.relays).toBe(3 * 86400 * 10);
    const pk = fake.spec('192.0.2.203').publicKey;
    expect(await h!.call('getnodeipbypublickey', { PublicKey: pk })).toMatchObject({ Code: 0, Value: { IpList: ['192.0.2.203'] } });
    // The unmapped neighbour was discovered (its key came with the neighbour list) but never reached.
    expect((await h!.call('getnodeipbypublickey', { PublicKey: fake.spec('198.51.100.250').publicKey })).Value.IpList).toEqual(['198.51.100.250']);
  });

  it('marks a stuck node the crawl did not see as _OUT_ (Err 3), but not a node the crawl saw', async () => {
    const { Hash, clock } = await setup();
    await h!.call('addnodes', { Hash, Multiple: true, Name: '', Ip: '203.0.113.40,203.0.113.41,192.0.2.201' });
    await h!.handle.crawler.run();
    clock.advance(120_000);
    await h!.handle.poller.runCycle();
    const list = (await h!.call('getmynodes', { Hash })).Value.List;
    const byIp = Object.fromEntries(list.map((n: any) => [n.Ip, n]));
    expect(byIp['203.0.113.40']).toMatchObject({ Err: 3, SyncState: '_OUT_', Height: expect.any(Number) });
    expect(byIp['203.0.113.40'].Height).toBeGreaterThan(0);
    expect(byIp['203.0.113.41']).not.toHaveProperty('Err'); // in sync, though not crawled
    expect(byIp['192.0.2.201']).not.toHaveProperty('Err');
  });

  it('keeps the previous crawl when the seeds cannot be reached', async () => {
    const { Hash, fake } = await setup();
    await h!.handle.crawler.run();
    fake.setMode(seed, 'offline');
    const r = await h!.handle.crawler.run();
    expect(r).toMatchObject({ discovered: 0 });
    expect((await h!.call('getnetstatus', { Hash })).Value.nodes_count).toBe(4);
  });
});

describe('prices and balances', () => {
  it('contacts nothing unless configured', async () => {
    h = await startHarness();
    let resolved = 0;
    const orig = h.egress.resolve.bind(h.egress);
    h.egress.resolve = (host, port) => {
      resolved++;
      return orig(host, port);
    };
    expect(h.handle.crawler.enabled).toBe(false);
    expect(await h.handle.crawler.run()).toBeNull();
    expect(await h.handle.updatePrices()).toBeNull();
    expect(await h.handle.updateBalances()).toBe(0);
    expect(resolved).toBe(0);
  });

  it('reads prices from a CoinGecko-style endpoint and balances through getbalancebyaddr', async () => {
    let status = 200;
    priceServer = http.createServer((req, res) => {
      expect(req.url).toBe('/api/v3/simple/price?ids=nkn&vs_currencies=usd,eur');
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(status === 200 ? JSON.stringify({ nkn: { usd: 0.396526, eur: 0.35 } }) : '{"error":"rate limited"}');
    });
    await new Promise<void>((r) => priceServer!.listen(0, '127.0.0.1', r));
    const pricePort = (priceServer.address() as AddressInfo).port;
    const clock = new ManualClock(T0);
    fake = await new FakeNknNetwork({ clock }).start();
    fake.balances.set(WALLET, '343.49090321');
    h = await startHarness({
      clock,
      addressMap: fake.addressMap(['192.0.2.250']),
      config: {
        prices: { url: `http://127.0.0.1:${pricePort}/api/v3/simple/price?ids=nkn&vs_currencies=usd,eur` },
        balances: { rpc: 'http://192.0.2.250:30003/' },
      },
    });
    const Hash = await h.genid();
    expect((await h.call('getprices', { Hash })).Code).toBe(3);
    status = 500;
    expect(await h.handle.updatePrices()).toBeNull();
    expect((await h.call('getprices', { Hash })).Code).toBe(3);
    status = 200;
    await h.handle.updatePrices();
    expect(await h.call('getprices', { Hash })).toEqual({ Method: 'getprices', Code: 0, Error: false, Value: { eur: 0.35, usd: 0.396526 } });

    await h.call('savemysettings', { Hash, Wallets: [WALLET] });
    expect((await h.call('getmywallets', { Hash })).Value.Wallets[0].Balance).toBe(-100);
    expect(await h.handle.updateBalances()).toBe(1);
    expect(fake.hits('192.0.2.250', 'getbalancebyaddr')).toBe(1);
    expect((await h.call('getmywallets', { Hash })).Value.Wallets[0].Balance).toBe(343.49090321);
    // Another account saving the same wallet sees the known balance at once.
    const other = await h.genid();
    await h.call('savemysettings', { Hash: other, Wallets: [WALLET] });
    expect((await h.call('getmywallets', { Hash: other })).Value.Wallets[0].Balance).toBe(343.49090321);
  });
});
