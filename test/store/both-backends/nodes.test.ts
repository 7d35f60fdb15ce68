/**
 * The node monitor's store (src/nodes/store.ts) on SQLite and on PostgreSQL: every read and write
 * answers the same on both.
 */
import { expect, it } from 'vitest';
import { NodesStore, type StateRow } from '../../../src/nodes/store.js';
import { MIGRATIONS } from '../../../src/nodes/schema.js';
import { SqliteSql } from '../../../src/store/sql.js';
import { until } from '../../helpers/until.js';
import { bothBackends } from './harness.js';

let daemons = 0;

function state(ip: string, over: Partial<StateRow> = {}): StateRow {
  return {
    ip,
    pool: 'main',
    status: 'PERSIST_FINISHED',
    fails: 0,
    ever_ok: 1,
    uptime: 3600,
    height: 5_000_000,
    version: 'v2.2.0',
    relays: 123_456_789_012,
    currts: 1_700_000_000,
    proposals: 2,
    public_key: `key-${ip}`,
    sync_state: 'PERSIST_FINISHED',
    rph: 12.5,
    rph10: 11.25,
    rph60: -1,
    updated_at: 1_700_000_000_123,
    ...over,
  };
}

const nodes = (...ips: string[]) => ips.map((ip, i) => ({ ip, name: `node ${i + 1}` }));

bothBackends(
  'nodes store',
  {
    sqlite: (b) => new NodesStore(new SqliteSql(b.sqlite(MIGRATIONS))),
    postgres: async (b) => NodesStore.openShared(await b.postgres(), `daemon-${++daemons}`),
  },
  (open) => {
    it('creates accounts and finds them by hash and id, counts them and those made from one address lately', async () => {
      const s = await open();
      const a = await s.createAccount('hash-a', '10.0.0.1', 1000);
      const b = await s.createAccount('hash-b', '10.0.0.1', 2000);
      await s.createAccount('hash-c', '10.0.0.2', 3000);
      expect(b).toBeGreaterThan(a);
      expect(await s.accountId('hash-b')).toBe(b);
      expect(await s.accountId('nobody')).toBeUndefined();
      expect(await s.accountHash(a)).toBe('hash-a');
      expect(await s.accountHash(999_999)).toBeUndefined();
      expect(await s.accountCount()).toBe(3);
      expect(await s.countAccountsSince('10.0.0.1', 1000)).toBe(1);
      expect(await s.countAccountsSince('10.0.0.1', 0)).toBe(2);
      await expect(s.createAccount('hash-a', '10.0.0.3', 4000)).rejects.toThrow();
      expect(await s.accountCount()).toBe(3);
    });

    it('adds nodes in the given order, skips addresses the account has (also twice in one batch), and keeps the limit', async () => {
      const s = await open();
      const a = await s.createAccount('a', '1.1.1.1', 1);
      const v0 = await s.listVersion(a);
      expect(await s.addNodes(a, nodes('10.0.0.3', '10.0.0.1', '10.0.0.2'), 50, 5)).toEqual({ inserted: 3, duplicates: 0 });
      expect(await s.listVersion(a)).not.toBe(v0);
      expect(await s.addNodes(a, [...nodes('10.0.0.1', '10.0.0.4'), { ip: '10.0.0.4', name: 'again' }], 60, 6)).toEqual({ inserted: 1, duplicates: 2 });
      // 4 held + 2 asked > 5: nothing added.
      expect(await s.addNodes(a, nodes('10.0.0.5', '10.0.0.6'), 70, 5)).toBeNull();
      expect(await s.countNodes(a)).toBe(4);
      const list = await s.listNodes(a);
      expect(list.map((n) => [n.ip, n.name])).toEqual([
        ['10.0.0.3', 'node 1'],
        ['10.0.0.1', 'node 2'],
        ['10.0.0.2', 'node 3'],
        ['10.0.0.4', 'node 2'],
      ]);
      expect(list.map((n) => n.id)).toEqual([...list.map((n) => n.id)].sort((x, y) => x - y));
      // Not polled yet: every state column is null.
      expect(list[0]).toEqual({
        id: list[0]!.id,
        name: 'node 1',
        ip: '10.0.0.3',
        pool: null,
        status: null,
        uptime: null,
        height: null,
        version: null,
        relays: null,
        currts: null,
        proposals: null,
        rph: null,
        rph10: null,
        rph60: null,
        updated_at: null,
      });
    });

    it('lets one of two concurrent adds to an account through when both would pass the limit', async () => {
      const s = await open();
      const a = await s.createAccount('a', '1.1.1.1', 1);
      const r = await Promise.all([s.addNodes(a, nodes('10.0.0.1', '10.0.0.2', '10.0.0.3'), 1, 4), s.addNodes(a, nodes('10.0.1.1', '10.0.1.2', '10.0.1.3'), 1, 4)]);
      expect(r.filter((x) => x === null)).toHaveLength(1);
      expect(await s.countNodes(a)).toBe(3);
    });

    it('removes by id and by address all or nothing, only the account’s own', async () => {
      const s = await open();
      const a = await s.createAccount('a', '1.1.1.1', 1);
      const b = await s.createAccount('b', '1.1.1.1', 1);
      await s.addNodes(a, nodes('10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4'), 1, 10);
      await s.addNodes(b, nodes('10.0.0.9'), 1, 10);
      const [n1, n2, n3, n4] = (await s.listNodes(a)).map((n) => n.id);
      const [other] = (await s.listNodes(b)).map((n) => n.id);
      expect(await s.removeNodesById(a, [n1!, other!])).toBeNull();
      expect(await s.removeNodesById(a, [n1!, 999_999])).toBeNull();
      expect(await s.countNodes(a)).toBe(4);
      const v = await s.listVersion(a);
      expect(await s.removeNodesById(a, [n2!, n1!])).toEqual([n2, n1]);
      expect(await s.listVersion(a)).not.toBe(v);
      expect(await s.removeNodesByIp(a, ['10.0.0.4', '10.0.0.9'])).toBeNull();
      expect(await s.countNodes(a)).toBe(2);
      expect(await s.removeNodesByIp(a, ['10.0.0.4', '10.0.0.3'])).toEqual([n4, n3]);
      expect(await s.listNodes(a)).toEqual([]);
      expect(await s.countNodes(b)).toBe(1);
    });

    it('answers one node of the account with its state, and no other account’s', async () => {
      const s = await open();
      const a = await s.createAccount('a', '1.1.1.1', 1);
      const b = await s.createAccount('b', '1.1.1.1', 1);
      await s.addNodes(a, nodes('10.0.0.1'), 1, 10);
      await s.saveStates([state('10.0.0.1')]);
      const [id] = (await s.listNodes(a)).map((n) => n.id);
      const st = state('10.0.0.1');
      expect(await s.node(a, id!)).toEqual({
        id,
        name: 'node 1',
        ip: '10.0.0.1',
        pool: st.pool,
        status: st.status,
        uptime: st.uptime,
        height: st.height,
        version: st.version,
        relays: st.relays,
        currts: st.currts,
        proposals: st.proposals,
        rph: st.rph,
        rph10: st.rph10,
        rph60: st.rph60,
        updated_at: st.updated_at,
      });
      expect(await s.node(b, id!)).toBeUndefined();
    });

    it('saves poll results in one batch (again: replaced), and reads them by address, all, and joined to nodes', async () => {
      const s = await open();
      const a = await s.createAccount('a', '1.1.1.1', 1);
      const b = await s.createAccount('b', '1.1.1.1', 1);
      await s.addNodes(a, nodes('10.0.0.1', '10.0.0.2', '10.0.0.3'), 1, 10);
      await s.addNodes(b, nodes('10.0.0.2'), 1, 10);
      const targets = async () => (await s.pollTargets()).sort((x, y) => x.ip.localeCompare(y.ip));
      expect(await targets()).toEqual([
        { ip: '10.0.0.1', pool: 'main', fails: 0, ever_ok: 0, known: 0 },
        { ip: '10.0.0.2', pool: 'main', fails: 0, ever_ok: 0, known: 0 },
        { ip: '10.0.0.3', pool: 'main', fails: 0, ever_ok: 0, known: 0 },
      ]);
      const v = await s.listVersion(a);
      await s.saveStates([state('10.0.0.1'), state('10.0.0.2', { status: null, pool: 'dirty', fails: 3, ever_ok: 0, public_key: null, sync_state: null })]);
      expect(await s.listVersion(a)).not.toBe(v);
      expect(await targets()).toEqual([
        { ip: '10.0.0.1', pool: 'main', fails: 0, ever_ok: 1, known: 1 },
        { ip: '10.0.0.2', pool: 'dirty', fails: 3, ever_ok: 0, known: 1 },
        { ip: '10.0.0.3', pool: 'main', fails: 0, ever_ok: 0, known: 0 },
      ]);
      await s.saveStates([state('10.0.0.1', { status: 'OFFLINE', height: 7, rph: 0.5 })]);
      const got = await s.states(['10.0.0.1', '10.0.0.2', '10.0.0.9']);
      expect([...got.keys()].sort()).toEqual(['10.0.0.1', '10.0.0.2']);
      expect(got.get('10.0.0.1')).toEqual(state('10.0.0.1', { status: 'OFFLINE', height: 7, rph: 0.5 }));
      expect(got.get('10.0.0.2')).toEqual(state('10.0.0.2', { status: null, pool: 'dirty', fails: 3, ever_ok: 0, public_key: null, sync_state: null }));
      expect(await s.states([])).toEqual(new Map());
      expect((await s.allStates()).map((r) => r.ip).sort()).toEqual(['10.0.0.1', '10.0.0.2']);
      expect((await s.listNodes(a)).map((n) => [n.ip, n.status, n.height])).toEqual([
        ['10.0.0.1', 'OFFLINE', 7],
        ['10.0.0.2', null, 5_000_000],
        ['10.0.0.3', null, null],
      ]);
      const counts = (await s.statusCounts()).sort((x, y) => String(x.status).localeCompare(String(y.status)));
      expect(counts).toEqual([
        { status: null, n: 2 },
        { status: 'OFFLINE', n: 1 },
      ]);
      const owned = (await s.ownedNodes()).map((n) => `${n.hash} ${n.ip} ${n.status}`).sort();
      expect(owned).toEqual(['a 10.0.0.1 OFFLINE', 'a 10.0.0.2 null', 'a 10.0.0.3 null', 'b 10.0.0.2 null']);
      expect(await s.monitoredIpsByKey('key-10.0.0.1')).toEqual(['10.0.0.1']);
      expect(await s.monitoredIpsByKey('nobody')).toEqual([]);
      expect((await s.accountsWithIps(['10.0.0.2', '10.0.0.3'])).sort((x, y) => x - y)).toEqual([a, b]);
      expect(await s.accountsWithIps([])).toEqual([]);
    });

    it('keeps the newest snapshots per address, replaces one taken at the same time, and forgets unmonitored addresses', async () => {
      const s = await open();
      const a = await s.createAccount('a', '1.1.1.1', 1);
      await s.addNodes(a, nodes('10.0.0.1', '10.0.0.2'), 1, 10);
      const snap = (ip: string, t: number, relays = t * 10) => ({ ip, taken_at: t, currts: t, uptime: t, height: t, relays });
      await s.addSnapshots([snap('10.0.0.1', 1), snap('10.0.0.1', 2), snap('10.0.0.2', 5)], 3);
      await s.addSnapshots([snap('10.0.0.1', 3), snap('10.0.0.1', 4), snap('10.0.0.1', 2, 99)], 3);
      expect(await s.history('10.0.0.1')).toEqual([
        { taken_at: 4, currts: 4, uptime: 4, height: 4, relays: 40 },
        { taken_at: 3, currts: 3, uptime: 3, height: 3, relays: 30 },
        { taken_at: 2, currts: 2, uptime: 2, height: 2, relays: 99 },
      ]);
      expect((await s.lastSnapshotTimes()).sort((x, y) => x.ip.localeCompare(y.ip))).toEqual([
        { ip: '10.0.0.1', t: 4 },
        { ip: '10.0.0.2', t: 5 },
      ]);
      await s.saveStates([state('10.0.0.1'), state('10.0.0.2')]);
      await s.removeNodesByIp(a, ['10.0.0.2']);
      await s.forgetUnmonitored();
      expect((await s.allStates()).map((r) => r.ip)).toEqual(['10.0.0.1']);
      expect(await s.history('10.0.0.2')).toEqual([]);
      expect(await s.history('10.0.0.1')).toHaveLength(3);
    });

    it('removes addresses from every account with their state and history, answering the accounts', async () => {
      const s = await open();
      const a = await s.createAccount('a', '1.1.1.1', 1);
      const b = await s.createAccount('b', '1.1.1.1', 1);
      const c = await s.createAccount('c', '1.1.1.1', 1);
      await s.addNodes(a, nodes('10.0.0.1', '10.0.0.2'), 1, 10);
      await s.addNodes(b, nodes('10.0.0.2'), 1, 10);
      await s.addNodes(c, nodes('10.0.0.3'), 1, 10);
      await s.saveStates([state('10.0.0.1'), state('10.0.0.2'), state('10.0.0.3')]);
      await s.addSnapshots([{ ip: '10.0.0.2', taken_at: 1, currts: 1, uptime: 1, height: 1, relays: 1 }], 5);
      const v = await s.listVersion(c);
      expect((await s.removeAddresses(['10.0.0.2', '10.0.0.7'])).sort((x, y) => x - y)).toEqual([a, b]);
      expect(await s.listVersion(c)).not.toBe(v);
      expect((await s.listNodes(a)).map((n) => n.ip)).toEqual(['10.0.0.1']);
      expect(await s.listNodes(b)).toEqual([]);
      expect((await s.allStates()).map((r) => r.ip).sort()).toEqual(['10.0.0.1', '10.0.0.3']);
      expect(await s.history('10.0.0.2')).toEqual([]);
      expect(await s.removeAddresses([])).toEqual([]);
    });

    it('replaces wallet sets: kept ones keep their balance, new ones take a balance another account has, or wait at -100', async () => {
      const s = await open();
      const a = await s.createAccount('a', '1.1.1.1', 1);
      const b = await s.createAccount('b', '1.1.1.1', 1);
      await s.replaceWallets(a, ['NKNa', 'NKNb', 'NKNa'], 10);
      expect((await s.wallets(a)).map((w) => [w.address, w.balance])).toEqual([
        ['NKNa', -100],
        ['NKNb', -100],
      ]);
      await s.setBalances(
        [
          { address: 'NKNa', balance: 12.5 },
          { address: 'NKNb', balance: 0 },
          { address: 'NKNz', balance: 3 },
        ],
        20,
      );
      await s.replaceWallets(b, ['NKNc', 'NKNa'], 30);
      expect((await s.wallets(b)).map((w) => [w.address, w.balance])).toEqual([
        ['NKNc', -100],
        ['NKNa', 12.5],
      ]);
      await s.replaceWallets(a, ['NKNb', 'NKNd'], 40);
      const wa = await s.wallets(a);
      expect(wa.map((w) => [w.address, w.balance])).toEqual([
        ['NKNb', 0],
        ['NKNd', -100],
      ]);
      expect(wa[0]!.id).toBeLessThan(wa[1]!.id);
      expect(await s.walletAddresses()).toEqual(['NKNa', 'NKNb', 'NKNc', 'NKNd']);
      await s.replaceWallets(a, [], 50);
      expect(await s.wallets(a)).toEqual([]);
      expect(await s.walletAddresses()).toEqual(['NKNa', 'NKNc']);
      await s.setBalances([], 60);
    });

    it('keeps prices and the network status, replacing them on each write', async () => {
      const s = await open();
      expect(await s.prices()).toEqual([]);
      expect(await s.netstatus()).toBeUndefined();
      await s.setPrices({ usd: 0.05, eur: 0.045 }, 1);
      await s.setPrices({ usd: 0.06 }, 2);
      await s.setPrices({}, 3);
      expect(await s.prices()).toEqual([
        { currency: 'eur', value: 0.045 },
        { currency: 'usd', value: 0.06 },
      ]);
      await s.setNetstatus({ nodes: 3, heights: [1, 2] }, 5);
      await s.setNetstatus({ nodes: 4, 'quote?': "it's" }, 6);
      expect(await s.netstatus()).toEqual({ data: { nodes: 4, 'quote?': "it's" }, updated_at: 6 });
    });

    it('keeps crawl generations: rows replaced by address, the current one switched in and the rest dropped', async () => {
      const s = await open();
      const row = (ip: string, over = {}) => ({ ip, public_key: `k-${ip}`, sync_state: 'PERSIST_FINISHED', height: 9, uptime: 8, relays: 7, proposals: 6, answered: 1, ...over });
      expect(await s.crawlInfo()).toBeUndefined();
      expect(await s.meta('crawl_generation')).toBeUndefined();
      await s.insertCrawlRows(1, [row('10.0.0.1'), row('10.0.0.2', { public_key: null, sync_state: null, answered: 0 })]);
      await s.insertCrawlRows(1, [row('10.0.0.1', { height: 10, public_key: 'shared' }), row('10.0.0.3', { public_key: 'shared' })]);
      await s.insertCrawlRows(1, []);
      await s.insertCrawlRows(2, [row('10.0.0.4')]);
      await s.switchCrawl(1, 1234);
      expect(await s.crawlInfo()).toEqual({ generation: 1, finishedAt: 1234 });
      expect(await s.meta('crawl_generation')).toBe('1');
      expect(await s.crawlRows(2)).toEqual([]);
      expect((await s.crawlRows(1)).sort((x, y) => x.ip.localeCompare(y.ip))).toEqual([
        row('10.0.0.1', { height: 10, public_key: 'shared' }),
        row('10.0.0.2', { public_key: null, sync_state: null, answered: 0 }),
        row('10.0.0.3', { public_key: 'shared' }),
      ]);
      expect(await s.crawlSeen(1, ['10.0.0.3', '10.0.0.9', '10.0.0.1'])).toEqual(new Set(['10.0.0.1', '10.0.0.3']));
      expect(await s.crawlSeen(1, [])).toEqual(new Set());
      expect(await s.crawlIpsByKey(1, 'shared')).toEqual(['10.0.0.1', '10.0.0.3']);
      await s.insertCrawlRows(3, [row('10.0.0.5')]);
      await s.discardCrawl(3);
      expect(await s.crawlRows(3)).toEqual([]);
      await s.setMeta('other', 'x');
      await s.setMeta('other', 'y');
      expect(await s.meta('other')).toBe('y');
    });

    it('keeps a failed all-or-nothing removal from changing anything, and the store usable after it', async () => {
      const s = await open();
      const a = await s.createAccount('a', '1.1.1.1', 1);
      await s.addNodes(a, nodes('10.0.0.1', '10.0.0.2'), 1, 10);
      expect(await s.removeNodesByIp(a, ['10.0.0.1', '10.0.0.1'])).toBeNull();
      expect(await s.countNodes(a)).toBe(2);
      expect(await s.addNodes(a, nodes('10.0.0.3'), 1, 10)).toEqual({ inserted: 1, duplicates: 0 });
    });

    it('shows a second daemon what the first wrote; on PostgreSQL it also hears of it', async () => {
      const first = await open();
      const second = await open.same();
      const a = await first.createAccount('a', '1.1.1.1', 1);
      const heard: (number[] | undefined)[] = [];
      second.onRemoteChange((accounts) => heard.push(accounts));
      const v = await second.listVersion(a);
      await first.addNodes(a, nodes('10.0.0.1'), 1, 10);
      expect((await second.listNodes(a)).map((n) => n.ip)).toEqual(['10.0.0.1']);
      await first.saveStates([state('10.0.0.1')]);
      expect((await second.states(['10.0.0.1'])).get('10.0.0.1')?.status).toBe('PERSIST_FINISHED');
      if (open.dialect === 'postgres') {
        await until('the second daemon to hear of both writes', () => heard.length >= 2);
        expect(heard).toEqual([[a], undefined]);
        expect(await second.listVersion(a)).not.toBe(v);
      } else {
        // One daemon per SQLite file: nothing to hear.
        expect(heard).toEqual([]);
      }
    });

    // Two daemons on one database: only the shared database has them (declared there alone, not skipped on SQLite).
    if (open.dialect === 'postgres') it('keeps the node limit when two daemons add to one account at once', async () => {
      const first = await open();
      const second = await open.same();
      const a = await first.createAccount('a', '1.1.1.1', 1);
      const r = await Promise.all([first.addNodes(a, nodes('10.0.0.1', '10.0.0.2', '10.0.0.3'), 1, 4), second.addNodes(a, nodes('10.0.1.1', '10.0.1.2', '10.0.1.3'), 1, 4)]);
      expect(r.filter((x) => x === null)).toHaveLength(1);
      expect(await first.countNodes(a)).toBe(3);
    });
  },
);
