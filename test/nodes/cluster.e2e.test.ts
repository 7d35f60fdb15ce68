/**
 * Two real daemons with `storage.postgres` on one private PostgreSQL and a fake NKN network: accounts,
 * nodes and poll results are shared; polling runs on exactly one daemon at a time (the one holding
 * the `nodes:poll` lease) and moves to the other when that one is killed with SIGKILL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeNknNetwork } from '../fakes/nkn-node.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';
import { until } from '../helpers/until.js';

const IPS = ['203.0.113.60', '203.0.113.61'];

describe.skipIf(!PG_BIN)('node monitor: two daemons on one PostgreSQL', () => {
  let pg: PostgresServer;
  let fake: FakeNknNetwork;
  let daemons: TestDaemon[] = [];
  let Hash = '';

  beforeAll(async () => {
    [pg, fake] = await Promise.all([PostgresServer.start(), new FakeNknNetwork().start()]);
    const url = await pg.createDatabase('nodes_cluster');
    const ctlYaml = {
      storage: { postgres: url },
      egress: { 'address-map': fake.addressMap(IPS) },
      nodes: { poll: { interval: 1, 'retry-delay': 0, retries: 0, 'dirty-retries': 0 } },
    };
    daemons = await Promise.all([startDaemon({ ctlYaml }), startDaemon({ ctlYaml })]);
  }, 90_000);

  afterAll(async () => {
    await Promise.all(daemons.map((d) => d.cleanup()));
    await fake?.stop();
    await pg?.destroy();
  });

  const api = async (d: TestDaemon, body: unknown) => (await d.request('nodes', 'POST', '/api', body)).json;
  const leasesOf = async (d: TestDaemon): Promise<string[]> => (await d.request('core', 'GET', '/core/1.0')).json.metadata.storage.postgres.leases;
  const polls = (ip: string) => fake.requests.filter((r) => r.ip === ip && r.method === 'getnodestate').length;

  it('shares accounts, nodes and poll results; a change on one daemon reaches the list cached on the other', async () => {
    const [a, b] = daemons as [TestDaemon, TestDaemon];
    Hash = (await api(a, { Method: 'genid' })).Value.Hash as string;
    expect(await api(b, { Method: 'addnodes', Value: { Hash, Multiple: true, Name: '', Ip: IPS.join(',') } })).toMatchObject({ Code: 0 });
    // Polled by whichever daemon holds the lease; both show the result.
    for (const d of daemons) {
      await until('both nodes online on every daemon', async () => {
        const r = await api(d, { Method: 'getmynodes', Value: { Hash } });
        return r.Code === 0 && r.Value.List.length === 2 && r.Value.List.every((n: { SyncState: string }) => n.SyncState === 'PERSIST_FINISHED');
      }, 10_000);
    }
    expect(await api(a, { Method: 'rmnodesbyip', Value: { Hash, NodesIp: [IPS[0]] } })).toMatchObject({ Code: 0 });
    await until('the removal on the other daemon', async () => (await api(b, { Method: 'getmynodes', Value: { Hash } })).Value.List.length === 1, 500);
  });

  it('polls from one daemon at a time and hands polling over when that daemon is killed', async () => {
    const holders = async () => (await Promise.all(daemons.map(leasesOf))).map((l) => l.includes('nodes:poll'));
    await until('one daemon holds nodes:poll', async () => (await holders()).filter(Boolean).length === 1, 10_000);
    expect((await holders()).filter(Boolean)).toHaveLength(1);
    // One poll a second from one daemon: four or five in four seconds, six when a turn that began
    // before the window reached the fake late (a loaded machine); two daemons would make eight.
    const before = polls(IPS[1]!);
    await new Promise((r) => setTimeout(r, 4000));
    const n = polls(IPS[1]!) - before;
    expect(n).toBeGreaterThanOrEqual(2);
    expect(n).toBeLessThanOrEqual(6);

    const holder = (await holders()).indexOf(true);
    const survivor = daemons[1 - holder]!;
    await daemons[holder]!.kill9();
    await until('the survivor takes the lease', async () => (await leasesOf(survivor)).includes('nodes:poll'), 10_000);
    const after = polls(IPS[1]!);
    await until('polling goes on', async () => polls(IPS[1]!) >= after + 2, 10_000);
  }, 60_000);

  it('answers 503 at once while PostgreSQL is away, keeps the methods that need no data, and recovers', async () => {
    const survivor = daemons.find((d) => d.child.exitCode === null && d.child.signalCode === null)!;
    await pg.stop();
    const t0 = Date.now();
    const r = await survivor.request('nodes', 'POST', '/api', { Method: 'getmynodes', Value: { Hash } });
    expect(r.status).toBe(503);
    expect(r.json).toMatchObject({ Code: 1, Error: true });
    expect(Date.now() - t0).toBeLessThan(3000);
    expect((await survivor.request('nodes', 'POST', '/api', { Method: 'getdaemon' })).status).toBe(200);
    await pg.start();
    await until('getmynodes again', async () => (await survivor.request('nodes', 'POST', '/api', { Method: 'getmynodes', Value: { Hash } })).status === 200, 15_000);
  }, 60_000);
});

if (!PG_BIN) console.log(PG_SKIP_REASON);
