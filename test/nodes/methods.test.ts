import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ config: { 'nodes-per-account': 20 } });
});
afterAll(async () => {
  await h.close();
});

const WALLET = 'NKNZKKF9u1MUQWnK272YoFiMTn5tjZh7uRQE';
const WALLET2 = 'NKNaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';

describe('genid', () => {
  it('issues a 64-hex ID, at most 3 per client per 30 minutes (252), then again after the window', async () => {
    h.clock.advance(60 * 60_000);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await h.call('genid');
      expect(r).toMatchObject({ Method: 'genid', Code: 0, Error: false });
      expect(r.Value.Hash).toMatch(/^[0-9a-f]{64}$/);
      ids.push(r.Value.Hash);
      h.clock.advance(60_000);
    }
    expect(new Set(ids).size).toBe(3);
    const fourth = await h.call('genid');
    expect(fourth).toEqual({ Method: 'genid', Code: 252, Error: true, ErrMessage: 'You have already created 3 IDs for the latest 30 minutes', Value: null });
    h.clock.advance(28 * 60_000); // the first one is now older than 30 minutes
    expect((await h.call('genid')).Code).toBe(0);
  });
});

describe('authorisation', () => {
  it('answers 253 without Hash (Method empty, as the origin), 254 for a bad length and 255 for an unknown ID (Method auth)', async () => {
    expect(await h.call('getmynodes')).toEqual({ Method: '', Code: 253, Error: true, ErrMessage: 'You have no authorization', Value: null });
    expect(await h.call('getmynodes', { Hash: 5 })).toMatchObject({ Code: 253 });
    expect(await h.call('getmynodes', { Hash: 'abc' })).toEqual({ Method: 'auth', Code: 254, Error: true, ErrMessage: 'Incorrect ID length', Value: null });
    expect(await h.call('getmynodes', { Hash: 'f'.repeat(64) })).toEqual({ Method: 'auth', Code: 255, Error: true, ErrMessage: 'Passed ID was not found', Value: null });
  });

  it('treats the ID as case-sensitive', async () => {
    const hash = await h.genid();
    expect((await h.call('getmynodes', { Hash: hash.toUpperCase() })).Code).toBe(255);
  });

  it('lets public methods run without an ID', async () => {
    expect((await h.call('getdaemon')).Code).toBe(0);
    expect((await h.call('getnodeipbypublickey', { PublicKey: 'a'.repeat(64) })).Code).toBe(3);
  });
});

describe('addnodes', () => {
  it('adds one node with a name, then refuses the duplicate with 14', async () => {
    const Hash = await h.genid();
    expect(await h.call('addnodes', { Hash, Multiple: false, Name: 'MySuperNode', Ip: '203.0.113.1' })).toEqual({
      Method: 'addnodes',
      Code: 0,
      Error: false,
      Value: { Info: 'Your node added' },
    });
    const dup = await h.call('addnodes', { Hash, Multiple: false, Name: '', Ip: '203.0.113.1' });
    expect(dup).toMatchObject({ Code: 14, Error: true, ErrMessage: "The nodes weren't added since they had been already created." });
    const list = await h.call('getmynodes', { Hash });
    expect(list.Value.List).toHaveLength(1);
    expect(list.Value.List[0]).toMatchObject({ Name: 'MySuperNode', Ip: '203.0.113.1', Err: 2, SyncState: 'Waiting for first update' });
  });

  it('names unnamed nodes Node_<n>', async () => {
    const Hash = await h.genid();
    await h.call('addnodes', { Hash, Multiple: false, Name: '', Ip: '203.0.113.2' });
    await h.call('addnodes', { Hash, Multiple: false, Name: '', Ip: '203.0.113.3' });
    const list = (await h.call('getmynodes', { Hash })).Value.List;
    expect(list.map((n: any) => n.Name)).toEqual(['Node_1', 'Node_2']);
  });

  it('validates presence and types: 5 missing keys, 7 Multiple not boolean, 8 Ip not a string, 5 Name not a string', async () => {
    const Hash = await h.genid();
    expect((await h.call('addnodes', { Hash, Multiple: false, Name: '' })).Code).toBe(5);
    expect((await h.call('addnodes', { Hash, Name: '', Ip: '203.0.113.9' })).Code).toBe(5);
    expect((await h.call('addnodes', { Hash, Multiple: false, Ip: '203.0.113.9' })).Code).toBe(5);
    expect((await h.call('addnodes', { Hash, Multiple: 'maybe', Name: '', Ip: '203.0.113.9' })).Code).toBe(7);
    expect((await h.call('addnodes', { Hash, Multiple: 2, Name: '', Ip: '203.0.113.9' })).Code).toBe(7);
    expect((await h.call('addnodes', { Hash, Multiple: false, Name: '', Ip: 203 })).Code).toBe(8);
    expect((await h.call('addnodes', { Hash, Multiple: false, Name: 5, Ip: '203.0.113.9' })).Code).toBe(5);
  });

  it('checks names: at most 32 of [A-Za-z0-9_] (6)', async () => {
    const Hash = await h.genid();
    for (const Name of ['a'.repeat(33), 'bad name', 'dash-name', 'ünï']) {
      expect((await h.call('addnodes', { Hash, Multiple: false, Name, Ip: '203.0.113.9' })).Code, Name).toBe(6);
    }
    expect((await h.call('addnodes', { Hash, Multiple: false, Name: 'a'.repeat(32), Ip: '203.0.113.9' })).Code).toBe(0);
  });

  it('checks addresses: 9 invalid, 10 not IPv4, 11 not public; documentation ranges are accepted', async () => {
    const Hash = await h.genid();
    const code = async (Ip: string) => (await h.call('addnodes', { Hash, Multiple: false, Name: '', Ip })).Code;
    for (const ip of ['', 'abc', '1.2.3', '1.2.3.256', '01.2.3.4', '1.2.3.4/24']) expect(await code(ip), ip).toBe(9);
    for (const ip of ['::1', '2001:db8::1', '::ffff:1.2.3.4']) expect(await code(ip), ip).toBe(10);
    for (const ip of ['10.1.2.3', '127.0.0.1', '172.16.5.4', '172.31.255.255', '192.168.1.1', '169.254.1.1', '0.0.0.0', '100.64.0.1', '224.0.0.1', '255.255.255.255', '240.0.0.1', '192.0.0.8']) {
      expect(await code(ip), ip).toBe(11);
    }
    for (const ip of ['192.0.2.10', '198.51.100.10', '203.0.113.10', '198.18.0.10', '8.8.8.8', '172.32.0.1']) expect(await code(ip), ip).toBe(0);
  });

  it('adds several addresses split by commas, line breaks or spaces; one address with Multiple → 13', async () => {
    const Hash = await h.genid();
    const add = (Ip: string, Name = '') => h.call('addnodes', { Hash, Multiple: true, Name, Ip });
    expect(await add('192.0.2.1, 192.0.2.2,192.0.2.3')).toEqual({ Method: 'addnodes', Code: 0, Error: false, Value: { Info: 'Nodes added' } });
    expect((await add('192.0.2.4\n192.0.2.5\r\n192.0.2.6\n')).Code).toBe(0);
    expect((await add('192.0.2.7 192.0.2.8  192.0.2.9')).Code).toBe(0);
    expect((await add('192.0.2.10')).Code).toBe(13);
    expect((await add('192.0.2.10;192.0.2.11')).Code).toBe(13);
    expect((await add('192.0.2.10,')).Code).toBe(13);
    const names = (await h.call('getmynodes', { Hash })).Value.List.map((n: any) => n.Name);
    expect(names).toEqual(['Node_1', 'Node_2', 'Node_3', 'Node_4', 'Node_5', 'Node_6', 'Node_7', 'Node_8', 'Node_9']);
  });

  it('uses Name as a prefix and per-line names from `IP , name` lines', async () => {
    const Hash = await h.genid();
    expect((await h.call('addnodes', { Hash, Multiple: true, Name: 'rack', Ip: '198.51.100.1,198.51.100.2' })).Code).toBe(0);
    expect((await h.call('addnodes', { Hash, Multiple: true, Name: '', Ip: '198.51.100.3 , alpha\n198.51.100.4,beta-2' })).Code).toBe(0);
    const list = (await h.call('getmynodes', { Hash })).Value.List;
    expect(list.map((n: any) => [n.Ip, n.Name])).toEqual([
      ['198.51.100.1', 'rack1'],
      ['198.51.100.2', 'rack2'],
      ['198.51.100.3', 'alpha'],
      ['198.51.100.4', 'beta-2'],
    ]);
  });

  it('rejects the whole list on the first bad address', async () => {
    const Hash = await h.genid();
    expect((await h.call('addnodes', { Hash, Multiple: true, Name: '', Ip: '198.51.100.1,10.0.0.1,nope' })).Code).toBe(11);
    expect((await h.call('getmynodes', { Hash })).Code).toBe(3);
  });

  it('adds partially (code 2, Error false) and refuses all-duplicates (14)', async () => {
    const Hash = await h.genid();
    await h.call('addnodes', { Hash, Multiple: false, Name: '', Ip: '192.0.2.50' });
    const partial = await h.call('addnodes', { Hash, Multiple: true, Name: '', Ip: '192.0.2.50,192.0.2.51' });
    expect(partial).toEqual({ Method: 'addnodes', Code: 2, Error: false, ErrMessage: 'Nodes added partially', Value: null });
    expect((await h.call('getmynodes', { Hash })).Value.List).toHaveLength(2);
    expect((await h.call('addnodes', { Hash, Multiple: true, Name: '', Ip: '192.0.2.50 192.0.2.51' })).Code).toBe(14);
  });

  it('caps nodes per account (12), counting the submitted list', async () => {
    const Hash = await h.genid();
    const ips = Array.from({ length: 20 }, (_, i) => `203.0.113.${100 + i}`);
    expect((await h.call('addnodes', { Hash, Multiple: true, Name: '', Ip: ips.slice(0, 19).join(',') })).Code).toBe(0);
    expect((await h.call('addnodes', { Hash, Multiple: true, Name: '', Ip: ips.slice(18, 20).join(',') })).Code).toBe(12);
    expect((await h.call('addnodes', { Hash, Multiple: false, Name: '', Ip: ips[19]! })).Code).toBe(0);
    expect((await h.call('addnodes', { Hash, Multiple: false, Name: '', Ip: '203.0.113.99' })).Code).toBe(12);
  });

  it('parses form booleans t|true|1|f|false|0 (and Go ParseBool spellings)', async () => {
    const Hash = await h.genid();
    let n = 0;
    for (const Multiple of ['f', 'false', '0', 'F', 'FALSE', 'False']) {
      const r = await h.form({ Method: 'addnodes', Hash, Multiple, Name: '', Ip: `198.51.100.${10 + n++}` });
      expect(r.Code, Multiple).toBe(0);
    }
    for (const Multiple of ['t', 'true', '1', 'T', 'TRUE', 'True']) {
      const r = await h.form({ Method: 'addnodes', Hash, Multiple, Name: '', Ip: `198.51.100.${10 + n++},198.51.100.${10 + n++}` });
      expect(r.Code, Multiple).toBe(0);
    }
    expect((await h.form({ Method: 'addnodes', Hash, Multiple: 'yes', Name: '', Ip: '198.51.100.99' })).Code).toBe(7);
    expect((await h.form({ Method: 'addnodes', Hash, Multiple: 'true', Ip: '198.51.100.99' })).Code).toBe(5);
  });
});

describe('rmnodes and rmnodesbyip', () => {
  it('removes by id (success Method rmnodesbyip), all or nothing (18), validating NodesId (15)', async () => {
    const Hash = await h.genid();
    await h.call('addnodes', { Hash, Multiple: true, Name: '', Ip: '192.0.2.61,192.0.2.62,192.0.2.63' });
    const ids = (await h.call('getmynodes', { Hash })).Value.List.map((n: any) => n.NodeId);
    for (const NodesId of [[], 'x', [1.5], ['a'], [-1], [0], 5, null, [[1]]]) {
      expect((await h.call('rmnodes', { Hash, NodesId })).Code, JSON.stringify(NodesId)).toBe(15);
    }
    expect((await h.call('rmnodes', { Hash })).Code).toBe(15);
    const missing = await h.call('rmnodes', { Hash, NodesId: [ids[0], 999999] });
    expect(missing).toMatchObject({ Method: 'rmnodes', Code: 18, Error: true });
    expect((await h.call('getmynodes', { Hash })).Value.List).toHaveLength(3);
    const r = await h.call('rmnodes', { Hash, NodesId: [ids[0], ids[1]] });
    expect(r).toEqual({ Method: 'rmnodesbyip', Code: 0, Error: false, Value: { Data: 'Nodes removed successfully', NodesId: [ids[0], ids[1]] } });
    const f = await h.form({ Method: 'rmnodes', Hash, NodesId: ` ${ids[2]} ` });
    expect(f).toMatchObject({ Method: 'rmnodesbyip', Code: 0, Value: { NodesId: [ids[2]] } });
  });

  it("does not remove another account's nodes", async () => {
    const a = await h.genid();
    const b = await h.genid();
    await h.call('addnodes', { Hash: a, Multiple: false, Name: '', Ip: '192.0.2.70' });
    const id = (await h.call('getmynodes', { Hash: a })).Value.List[0].NodeId;
    expect((await h.call('rmnodes', { Hash: b, NodesId: [id] })).Code).toBe(18);
    expect((await h.call('rmnodesbyip', { Hash: b, NodesIp: ['192.0.2.70'] })).Code).toBe(28);
    expect((await h.call('getmynodes', { Hash: a })).Value.List).toHaveLength(1);
  });

  it('removes by address, all or nothing (28), validating NodesIp (27)', async () => {
    const Hash = await h.genid();
    await h.call('addnodes', { Hash, Multiple: true, Name: '', Ip: '192.0.2.81,192.0.2.82,192.0.2.83' });
    const ids = (await h.call('getmynodes', { Hash })).Value.List.map((n: any) => n.NodeId);
    for (const NodesIp of [[], 'bad', ['192.0.2.81', 'x'], [1], '192.0.2.81,,', null, ['::1']]) {
      expect((await h.call('rmnodesbyip', { Hash, NodesIp })).Code, JSON.stringify(NodesIp)).toBe(27);
    }
    expect((await h.call('rmnodesbyip', { Hash, NodesIp: ['192.0.2.81', '192.0.2.99'] })).Code).toBe(28);
    expect((await h.call('getmynodes', { Hash })).Value.List).toHaveLength(3);
    const r = await h.call('rmnodesbyip', { Hash, NodesIp: [' 192.0.2.81', '192.0.2.82'] });
    expect(r).toEqual({ Method: 'rmnodesbyip', Code: 0, Error: false, Value: { Data: 'Nodes removed successfully', NodesId: [ids[0], ids[1]] } });
    const f = await h.form({ Method: 'rmnodesbyip', Hash, NodesIp: '192.0.2.83' });
    expect(f).toMatchObject({ Code: 0, Value: { NodesId: [ids[2]] } });
    expect((await h.call('getmynodes', { Hash })).Code).toBe(3);
  });
});

describe('wallets and settings', () => {
  it('saves up to 3 wallets (JSON only) and lists them with balance -100 until updated', async () => {
    const Hash = await h.genid();
    expect((await h.call('getmywallets', { Hash })).Code).toBe(3);
    expect(await h.call('savemysettings', { Hash, Wallets: [WALLET] })).toEqual({
      Method: 'savemysettings',
      Code: 0,
      Error: false,
      Value: { Data: 'All settings saved' },
    });
    const w = await h.call('getmywallets', { Hash });
    expect(w).toMatchObject({ Method: 'getmywallets', Code: 0, Error: false });
    expect(w.Value.Wallets).toEqual([{ Balance: -100, Id: expect.any(Number), NetWallet: WALLET, NknWallet: WALLET }]);
    const id = w.Value.Wallets[0].Id;
    await h.call('savemysettings', { Hash, Wallets: [WALLET, WALLET2] });
    const w2 = (await h.call('getmywallets', { Hash })).Value.Wallets;
    expect(w2.map((x: any) => x.NetWallet)).toEqual([WALLET, WALLET2]);
    expect(w2[0].Id).toBe(id); // kept, not re-created
    expect((await h.call('savemysettings', { Hash })).Code).toBe(0); // no Wallets key: no change
    expect((await h.call('getmywallets', { Hash })).Value.Wallets).toHaveLength(2);
    expect((await h.call('savemysettings', { Hash, Wallets: [] })).Code).toBe(0);
    expect((await h.call('getmywallets', { Hash })).Code).toBe(3);
  });

  it('refuses more than 3 wallets (16), malformed ones (17) and form-encoded requests (5)', async () => {
    const Hash = await h.genid();
    const many = ['A', 'B', 'C', 'D'].map((c) => 'NKN' + c.repeat(33));
    expect((await h.call('savemysettings', { Hash, Wallets: many })).Code).toBe(16);
    for (const Wallets of [['NKNshort'], ['XYZ' + 'a'.repeat(33)], [5], 'NKN' + 'a'.repeat(33), [WALLET + 'x'], ['NKN' + '_'.repeat(33)]]) {
      expect((await h.call('savemysettings', { Hash, Wallets })).Code, JSON.stringify(Wallets)).toBe(17);
    }
    expect((await h.form({ Method: 'savemysettings', Hash, Wallets: WALLET })).Code).toBe(5);
    expect((await h.call('getmywallets', { Hash })).Code).toBe(3);
  });
});

describe('read methods before any poll', () => {
  it('getnetstatus and getprices answer 3 until data exists', async () => {
    const Hash = await h.genid();
    expect(await h.call('getnetstatus', { Hash })).toMatchObject({ Method: 'getnetstatus', Code: 3, Error: false, Value: null });
    expect(await h.call('getprices', { Hash })).toMatchObject({ Method: 'getprices', Code: 3, Error: false });
  });

  it('getfullstack nests five envelopes with Method getfullstack and answers 3 without network status', async () => {
    const Hash = await h.genid();
    const r = await h.call('getfullstack', { Hash });
    expect(r.Method).toBe('getfullstack');
    expect(r.Code).toBe(3);
    expect(Object.keys(r.Value).sort()).toEqual(['Daemon', 'Netstatus', 'Nodes', 'Prices', 'Wallets']);
    for (const k of Object.keys(r.Value)) expect(r.Value[k].Method).toBe('getfullstack');
    expect(r.Value.Daemon).toMatchObject({ Code: 0, Error: false, Value: { Version: '0.1.0-test' } });
    expect(r.Value.Nodes).toMatchObject({ Code: 3, Error: false });
  });

  it('getnodeipbypublickey validates the key: 25 missing, 26 malformed, 3 unknown', async () => {
    expect((await h.call('getnodeipbypublickey', {})).Code).toBe(25);
    expect((await h.call('getnodeipbypublickey', { PublicKey: '' })).Code).toBe(25);
    expect((await h.call('getnodeipbypublickey', { PublicKey: 'abc' })).Code).toBe(26);
    expect((await h.call('getnodeipbypublickey', { PublicKey: 5 })).Code).toBe(26);
    expect((await h.call('getnodeipbypublickey', { PublicKey: 'z'.repeat(64) })).Code).toBe(26);
    expect(await h.call('getnodeipbypublickey', { PublicKey: 'ab'.repeat(32) })).toMatchObject({ Code: 3, Error: false });
  });

  it('getnodedetails validates NodeId: 19 malformed, 18 not the account’s', async () => {
    const Hash = await h.genid();
    for (const NodeId of [undefined, 'x', -1, 1.5, [1], null]) {
      expect((await h.call('getnodedetails', { Hash, NodeId })).Code, String(NodeId)).toBe(19);
    }
    expect((await h.call('getnodedetails', { Hash, NodeId: 424242 })).Code).toBe(18);
    expect((await h.form({ Method: 'getnodedetails', Hash, NodeId: '424242' })).Code).toBe(18);
  });

  it('getlanguage works over POST too, with its codes 230-233', async () => {
    const r = await h.call('getlanguage', { View: 'index_src', Locale: 'ru_RU' });
    expect(r).toMatchObject({ Method: 'getlanguage', Code: 0, Value: { Locale: 'ru_RU', View: 'index_src' } });
    expect(typeof r.Value.Data).toBe('string');
    expect(JSON.parse(r.Value.Data).current_lang).toBe('ru_RU');
    expect((await h.call('getlanguage', { Locale: 'en_US' })).Code).toBe(230);
    expect((await h.call('getlanguage', { View: 'x' })).Code).toBe(231);
    expect((await h.call('getlanguage', { View: 'x', Locale: 'en_US_EXTRA1' })).Code).toBe(232);
    expect((await h.call('getlanguage', { View: 'x'.repeat(33), Locale: 'en_US' })).Code).toBe(232);
    expect((await h.call('getlanguage', { View: 'x', Locale: 'de_DE' })).Code).toBe(233);
    for (const Locale of ['en_US', 'zn_CN']) expect(JSON.parse((await h.call('getlanguage', { View: 'v', Locale })).Value.Data).current_lang).toBe(Locale);
  });
});
