/**
 * Joining hands the new member the cluster's shared storage: a daemon without `storage:` joins a
 * member that has one, and from then on shares the alert manager's silences with it. A joiner
 * with other storage settings is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';
import { freePort } from '../helpers/free-port.js';
import { until } from '../helpers/until.js';
import pgLib from 'pg';


describe.skipIf(!PG_BIN)('joining a cluster hands over its storage settings', () => {
  if (!PG_BIN) console.log(PG_SKIP_REASON);
  let pg: PostgresServer;
  let url: string;
  let a: TestDaemon;
  let b: TestDaemon;
  let odd: TestDaemon;

  beforeAll(async () => {
    pg = await PostgresServer.start();
    url = await pg.createDatabase('cluster');
    const other = await pg.createDatabase('other');
    [a, b, odd] = await Promise.all([
      startDaemon({ ctlYaml: { storage: { postgres: url }, core: { 'heartbeat-interval': '300ms' } } }),
      startDaemon({ ctlYaml: { 'log-level': 'info', core: { 'heartbeat-interval': '300ms' } } }),
      startDaemon({ ctlYaml: { storage: { postgres: other } } }),
    ]);
    const r = await a.request('core', 'POST', '/core/control', { bootstrap: true, name: 'a', address: `127.0.0.1:${await freePort()}` });
    expect(r.status, r.text).toBe(200);
  }, 60_000);
  afterAll(async () => {
    a?.signal('SIGCONT');
    await Promise.all([a?.cleanup(), b?.cleanup(), odd?.cleanup()]);
    await pg?.destroy();
  });

  const token = async (name: string) => (await a.request('core', 'POST', '/core/control/tokens', { name })).json.metadata as string;

  it('a joiner with storage settings of its own is refused, and stays alone', async () => {
    const r = await odd.request('core', 'POST', '/core/control', { join_token: await token('odd'), name: 'odd', address: `127.0.0.1:${await freePort()}` });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/other storage settings than the cluster/);
    expect((await odd.request('core', 'GET', '/core/1.0/cluster')).status).toBe(503);
  });

  it('a joiner without storage gets the cluster\'s, written to its ctl.yaml, and shares silences at once', async () => {
    const r = await b.request('core', 'POST', '/core/control', { join_token: await token('b'), name: 'b', address: `127.0.0.1:${await freePort()}` });
    expect(r.status, r.text).toBe(200);
    const yaml = YAML.parse(readFileSync(join(b.dir, 'ctl.yaml'), 'utf8'));
    expect(yaml).toMatchObject({ storage: { postgres: url }, 'log-level': 'info' });
    const now = Date.now();
    const s = await a.request('alertmanager', 'POST', '/api/v2/silences', {
      matchers: [{ name: 'alertname', value: 'X', isRegex: false, isEqual: true }],
      startsAt: new Date(now).toISOString(),
      endsAt: new Date(now + 3_600_000).toISOString(),
      createdBy: 'a',
      comment: 'from a',
    });
    expect(s.status).toBe(200);
    const id = s.json.silenceID as string;
    const end = Date.now() + 3000;
    let seen = false;
    while (!seen && Date.now() < end) {
      const list = await b.request('alertmanager', 'GET', '/api/v2/silences');
      seen = list.status === 200 && (list.json as { id: string }[]).some((x) => x.id === id);
      if (!seen) await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen).toBe(true);
    // The joiner, on the cluster's storage now, is one of the alert manager's cluster peers (listed once its row is written).
    await expect
      .poll(async () => ((await b.request('alertmanager', 'GET', '/api/v2/status')).json.cluster as { peers: unknown[]; status: string }), { timeout: 15_000, interval: 100 })
      .toMatchObject({ status: 'ready', peers: [{}, {}] });
    // And after a restart b still runs on the shared database.
    await b.restart();
    expect(((await b.request('alertmanager', 'GET', '/api/v2/silences')).json as { id: string }[]).some((x) => x.id === id)).toBe(true);
  }, 30_000);

  it('a member removed while down that comes back while no member answers reads its removal in the shared database and leaves', async () => {
    const online = async () => ((await a.request('core', 'GET', '/core/1.0/cluster')).json.metadata as { status: string }[]).every((m) => m.status === 'ONLINE');
    await until('a and b ONLINE', online, 20_000, 100);
    await b.stop();
    expect((await a.request('core', 'DELETE', '/core/1.0/cluster/b')).status).toBe(200);
    const db = new pgLib.Client({ connectionString: url });
    await db.connect();
    try {
      await until('the removal in the shared database', async () => (await db.query('SELECT name FROM core_cluster_removed').catch(() => ({ rows: [] }))).rows.some((r) => r.name === 'b'), 20_000, 100);
    } finally {
      await db.end();
    }
    // The only other member is frozen: b's heartbeats get no answer, so no member can tell it.
    a.signal('SIGSTOP');
    try {
      await b.start();
      await until('b to leave', async () => (await b.request('core', 'GET', '/core/1.0/cluster')).status === 503, 20_000, 100);
    } finally {
      a.signal('SIGCONT');
    }
  }, 90_000);
});
