/**
 * Two real daemons on one private PostgreSQL: GET /api/v2/status answers Alertmanager 0.25's
 * clusterStatus ({name, peers: [{address, name}], status}) with both daemons as peers, a daemon that
 * stops leaves the list, and the console's #/status page lists the members (Debian's chromium).
 * Run inside `unshare -n bash -c 'ip link set lo up && npx vitest run test/console/alertmanager-cluster.e2e.test.ts'`.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';
import { HAVE_CHROMIUM, launchBrowser, openConsole } from './browser.js';

interface Cluster {
  name?: string;
  status: string;
  peers: Array<{ name: string; address: string }>;
}

/** Membership is read again at most once a second; a loaded machine is given 15 s. */
const eventually = <T,>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000, interval: 100 });

describe.skipIf(!PG_BIN)('alert manager cluster status: two daemons sharing PostgreSQL', () => {
  if (!PG_BIN) console.log(PG_SKIP_REASON);
  let pgServer: PostgresServer;
  let a: TestDaemon;
  let b: TestDaemon;
  let alone: TestDaemon;
  let browser: Browser | undefined;

  const cluster = async (d: TestDaemon): Promise<Cluster> => {
    const r = await d.request('alertmanager', 'GET', '/api/v2/status');
    expect(r.status, r.text).toBe(200);
    return r.json.cluster as Cluster;
  };
  const address = async (d: TestDaemon) => (await d.baseUrl('alertmanager')).replace(/^https?:\/\//, '');

  beforeAll(async () => {
    pgServer = await PostgresServer.start();
    const url = await pgServer.createDatabase('members');
    [a, b, alone] = await Promise.all([startDaemon({ ctlYaml: { storage: { postgres: url } } }), startDaemon({ ctlYaml: { storage: { postgres: url } } }), startDaemon()]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await a?.cleanup();
    await b?.cleanup();
    await alone?.cleanup();
    await pgServer?.destroy();
  });

  it('a daemon alone keeps 0.25\'s answer without clustering: disabled, no peers, no name', async () => {
    const r = await alone.request('alertmanager', 'GET', '/api/v2/status');
    expect(r.text).toContain('"cluster":{"peers":[],"status":"disabled"}');
  });

  it('each daemon lists both as peers (itself included, sorted by name), status ready, named after itself', async () => {
    const want = [
      { address: await address(a), name: '' },
      { address: await address(b), name: '' },
    ];
    await eventually(async () => (await cluster(a)).peers.length).toBe(2);
    await eventually(async () => (await cluster(b)).peers.length).toBe(2);
    const ca = await cluster(a);
    const cb = await cluster(b);
    expect(ca.status).toBe('ready');
    expect(cb.status).toBe('ready');
    expect(ca.name).toBeTruthy();
    expect(cb.name).toBeTruthy();
    expect(ca.name).not.toBe(cb.name);
    want[0]!.name = ca.name!;
    want[1]!.name = cb.name!;
    want.sort((x, y) => (x.name < y.name ? -1 : 1));
    expect(ca.peers).toEqual(want);
    expect(cb.peers).toEqual(want);
    // 0.25's key order: name, peers (address, name), status.
    const text = (await a.request('alertmanager', 'GET', '/api/v2/status')).text;
    expect(text).toMatch(/"cluster":\{"name":"[^"]+","peers":\[\{"address":"[^"]+","name":"[^"]+"\},\{"address":"[^"]+","name":"[^"]+"\}\],"status":"ready"\}/);
  });

  it.skipIf(!HAVE_CHROMIUM)('the console\'s #/status page lists the members with their addresses', async () => {
    browser = await launchBrowser();
    const base = await a.baseUrl('alertmanager');
    const c = await openConsole(browser, base);
    await c.page.goto(`${base}/#/status`);
    const rows = c.page.getByTestId('cluster-peer');
    await eventually(() => rows.count()).toBe(2);
    const text = (await rows.allTextContents()).join('\n');
    const ca = await cluster(a);
    for (const p of ca.peers) {
      expect(text).toContain(p.name);
      expect(text).toContain(p.address);
    }
    expect(await c.page.getByTestId('cluster-status').textContent()).toBe('ready');
    c.clean();
    await c.close();
  });

  it('a daemon that stops leaves the others\' list at once', async () => {
    const gone = (await cluster(b)).name;
    await b.stop();
    await eventually(async () => (await cluster(a)).peers.map((p) => p.name)).not.toContain(gone);
    expect((await cluster(a)).peers).toHaveLength(1);
  });
});
