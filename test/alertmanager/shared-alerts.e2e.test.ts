/**
 * Alerts shared through PostgreSQL: three real daemons on one private server, each alert posted to
 * one of them only (a load balancer in front, not Prometheus posting to all). Every daemon lists
 * every alert; a group whose alerts came in through different daemons is one group for the
 * cluster, notified once per change; a daemon restarted while the others change alerts holds what
 * the database holds, and does not bring back as firing an alert the cluster resolved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { freePort } from '../helpers/free-port.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';
import { until } from '../helpers/until.js';

interface Hook {
  status: string;
  alerts: { status: string; labels: Record<string, string> }[];
}

interface Listed {
  fingerprint: string;
  labels: Record<string, string>;
  startsAt: string;
  endsAt: string;
  updatedAt: string;
}

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p));

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

const amConfig = (hook: string) =>
  `route: {receiver: hook, group_by: [alertname], group_wait: 1s, group_interval: 1s, repeat_interval: 1h}\nreceivers:\n  - name: hook\n    webhook_configs: [{url: "${hook}", send_resolved: true}]\n`;

const notices = (got: Hook[], alertname: string) => got.filter((h) => h.alerts.some((a) => a.labels.alertname === alertname));

async function listed(d: TestDaemon, alertname: string): Promise<Listed[]> {
  const r = await d.request('alertmanager', 'GET', `/api/v2/alerts?filter=${encodeURIComponent(`alertname="${alertname}"`)}`);
  expect(r.status).toBe(200);
  return r.json as Listed[];
}

/** What must agree across daemons: each alert's fingerprint and state. */
const states = (xs: Listed[]) => xs.map((x) => `${x.fingerprint} ${x.startsAt} ${x.endsAt} ${x.updatedAt}`).sort();

describe.skipIf(!PG_BIN)('alerts shared by three daemons through PostgreSQL', () => {
  if (!PG_BIN) console.log(PG_SKIP_REASON);
  let pgServer: PostgresServer;
  let sink: Server;
  const got: Hook[] = [];
  let a: TestDaemon;
  let b: TestDaemon;
  let c: TestDaemon;

  const post = (d: TestDaemon, alerts: unknown[]) => d.request('alertmanager', 'POST', '/api/v2/alerts', alerts);
  /** A POST that must be taken (a failure shows the answer and the daemon's last log lines). */
  const posted = async (d: TestDaemon, alerts: unknown[]) => {
    const r = await post(d, alerts);
    expect(r.status, `${r.text}\n${d.log.slice(-3000)}`).toBe(200);
  };

  beforeAll(async () => {
    pgServer = await PostgresServer.start();
    const url = await pgServer.createDatabase('shared_alerts');
    sink = createServer((req, res) => {
      let body = '';
      req.on('data', (x) => (body += x));
      req.on('end', () => {
        got.push(JSON.parse(body) as Hook);
        res.end();
      });
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    const hook = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook`;
    const start = () => startDaemon({ ctlYaml: { storage: { postgres: url } }, files: { 'alertmanager.yml': amConfig(hook) } });
    [a, b, c] = await Promise.all([start(), start(), start()]);
    // Every daemon has its connections: on a loaded machine the first ones can take over the 2 s
    // connect timeout, and the daemon then answers 503 until its probe gets through (documented).
    for (const d of [a, b, c]) {
      await until('the daemon to take alerts', async () => (await post(d, [{ labels: { alertname: 'Warm' }, endsAt: new Date().toISOString() }])).status === 200, 30_000, 250);
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a, b, c].map((d) => d?.cleanup()));
    sink?.closeAllConnections();
    await new Promise((r) => sink?.close(r));
    await pgServer?.destroy();
  });

  it('an alert posted to one daemon is listed by the other two within a second', async () => {
    const batch = [1, 2, 3].map((i) => ({ labels: { alertname: 'Seen', instance: `i${i}` }, annotations: { summary: `one of three (${i})` } }));
    const t0 = Date.now();
    await posted(a, batch);
    // Measured 52-143 ms until both list all three, this test's own GETs included, on a 2-core machine
    // at load 13-23 (the bench, alertmanager-shared, measures 2 ms p50 for one daemon to list an alert).
    await until('b and c to list the three alerts', async () => (await listed(b, 'Seen')).length === 3 && (await listed(c, 'Seen')).length === 3, 1000, 5);
    const took = Date.now() - t0;
    console.log(`alert posted to a listed by b and c after ${took} ms`);
    const onA = states(await listed(a, 'Seen'));
    expect(states(await listed(b, 'Seen'))).toEqual(onA);
    expect(states(await listed(c, 'Seen'))).toEqual(onA);
    expect((await listed(c, 'Seen'))[0]!.labels).toMatchObject({ alertname: 'Seen' });
  }, 30_000);

  it('the zone offsets an alert was posted with are kept through the database (0.25 prints them)', async () => {
    await posted(a, [{ labels: { alertname: 'Zoned' }, startsAt: '2026-03-08T23:59:59.5+02:00', endsAt: '2099-01-01T00:00:00.25-05:30' }]);
    await until('b to list it', async () => (await listed(b, 'Zoned')).length === 1, 3000, 5);
    const [x] = await listed(b, 'Zoned');
    expect([x!.startsAt, x!.endsAt]).toEqual(['2026-03-08T23:59:59.500+02:00', '2099-01-01T00:00:00.250-05:30']);
  }, 30_000);

  it.skipIf(!NGINX)('through the documented balancer, every read lists an alert posted through it', async () => {
    const page = readFileSync(join(ROOT, 'docs', 'several-daemons.md'), 'utf8');
    const section = page.slice(page.indexOf('## Prometheus and a load balancer'), page.indexOf('## Gateways behind a load balancer'));
    const addr = await Promise.all([a, b, c].map(async (d) => new URL(await d.baseUrl('alertmanager')).host));
    const port = await freePort();
    const block = /```nginx\n([\s\S]*?)```/
      .exec(section)![1]!.replace('am1.internal:9093', addr[0]!)
      .replace('am2.internal:9093', addr[1]!)
      .replace('am3.internal:9093', addr[2]!)
      .replace('listen 9093;', `listen 127.0.0.1:${port};`);
    const dir = mkdtempSync(join(tmpdir(), 'ctl-am-nginx-'));
    const conf = join(dir, 'nginx.conf');
    writeFileSync(conf, `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents {}\nhttp {\n  access_log off;\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;\n${block}\n}\n`);
    const check = spawnSync(NGINX!, ['-t', '-p', dir, '-c', conf], { encoding: 'utf8' });
    expect(check.status, check.stderr).toBe(0);
    const nginx = spawn(NGINX!, ['-p', dir, '-c', conf, '-g', 'daemon off;'], { stdio: 'ignore' });
    try {
      const base = `http://127.0.0.1:${port}`;
      await until('nginx to listen', async () => (await fetch(`${base}/-/ready`).catch(() => undefined))?.status === 200, 10_000, 50);
      const r = await fetch(`${base}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ labels: { alertname: 'Balanced' } }]) });
      expect(r.status).toBe(200);
      // Taken by every daemon (within moments: see the first test), then read six times through the balancer.
      await until('every daemon to list it', async () => (await Promise.all([a, b, c].map((d) => listed(d, 'Balanced')))).every((l) => l.length === 1), 3000);
      let seen = 0;
      for (let i = 0; i < 6; i++) {
        const g = await fetch(`${base}/api/v2/alerts?filter=${encodeURIComponent('alertname="Balanced"')}`);
        if (((await g.json()) as Listed[]).length === 1) seen++;
      }
      // Before alerts were shared: 2 of 6 (only the daemon the POST reached).
      expect(seen).toBe(6);
    } finally {
      nginx.kill('SIGQUIT');
      await new Promise((res) => (nginx.exitCode !== null ? res(undefined) : nginx.once('exit', res)));
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('a group whose alerts came in through two daemons is notified once per change, not every group_interval', async () => {
    const x = { labels: { alertname: 'Split', instance: 'x' } };
    const y = { labels: { alertname: 'Split', instance: 'y' } };
    await Promise.all([posted(a, [x]), posted(b, [y])]);
    await until('a notification carrying both alerts', () => notices(got, 'Split').some((h) => h.alerts.length === 2), 10_000);
    const firstRound = notices(got, 'Split').length;
    // Before alerts were shared, a and b sent their halves in turn, each group_interval (1 s).
    await settle(5000);
    expect(notices(got, 'Split')).toHaveLength(firstRound);
    expect(firstRound).toBeLessThanOrEqual(2);
    // One change (x resolved, through the third daemon): one notification.
    await posted(c, [{ ...x, endsAt: new Date().toISOString() }]);
    await until('the notification of the change', () => notices(got, 'Split').length === firstRound + 1, 10_000);
    await settle(4000);
    const after = notices(got, 'Split');
    expect(after).toHaveLength(firstRound + 1);
    const last = after[after.length - 1]!;
    expect(last.alerts.map((h) => `${h.labels.instance} ${h.status}`).sort()).toEqual(['x resolved', 'y firing']);
  }, 60_000);

  it('a daemon restarted while the others resolved an alert does not fire it again', async () => {
    const matchers = [{ name: 'alertname', value: 'Muted', isRegex: false, isEqual: true }];
    const now = Date.now();
    const s = await a.request('alertmanager', 'POST', '/api/v2/silences', {
      matchers,
      startsAt: new Date(now).toISOString(),
      endsAt: new Date(now + 3_600_000).toISOString(),
      createdBy: 'test',
      comment: 'while it fires',
    });
    expect(s.status).toBe(200);
    const id = s.json.silenceID as string;
    await until('c to hold the silence', async () => ((await c.request('alertmanager', 'GET', '/api/v2/silences')).json as { id: string }[]).some((x) => x.id === id));
    // Fires through c only, silenced: nothing is sent, so the notification log knows nothing of it.
    const alert = { labels: { alertname: 'Muted', instance: 'z' } };
    await posted(c, [alert]);
    await c.stop();
    // While c is down: resolved through b, and the silence ends.
    await posted(b, [{ ...alert, endsAt: new Date().toISOString() }]);
    expect((await a.request('alertmanager', 'DELETE', `/api/v2/silence/${id}`)).status).toBe(200);
    await c.start();
    // c holds it resolved from the start (before, it restored it as firing from its own journal)...
    expect(await listed(c, 'Muted')).toEqual([]);
    // ...and sends nothing for it over several group intervals.
    await settle(4000);
    expect(notices(got, 'Muted')).toEqual([]);
  }, 60_000);

  it('a daemon restarted while the others write converges on what the database holds', async () => {
    await c.stop();
    let n = 0;
    /** One write, alternating between a and b; every third resolves its alert (40 alerts in turn). */
    const write = async () => {
      const i = n++;
      const alert: Record<string, unknown> = { labels: { alertname: 'Churn', key: `k${i % 40}` }, annotations: { round: String(i) } };
      if (i % 3 === 0) alert.endsAt = new Date().toISOString();
      await posted(i % 2 ? a : b, [alert]);
      await settle(5);
    };
    // Writes while c is down, while it starts (bounded: 400 in all), and after.
    for (let k = 0; k < 40; k++) await write();
    let started = false;
    const starting = c.start().then(() => (started = true));
    while (!started && n < 400) await write();
    await starting;
    const during = n - 40;
    for (let k = 0; k < 40; k++) await write();
    const onA = states(await listed(a, 'Churn'));
    expect(onA.length).toBeGreaterThan(0);
    // Measured: c agreed 3-16 ms after the writes stopped (100-138 writes came while it started).
    const t0 = Date.now();
    await until('c to agree with a', async () => JSON.stringify(states(await listed(c, 'Churn'))) === JSON.stringify(onA), 3000);
    console.log(`restarted daemon agreed ${Date.now() - t0} ms after the last of ${n} writes (${during} while it started); ${onA.length} alerts firing`);
    expect(states(await listed(b, 'Churn'))).toEqual(onA);
    // Same annotations too (the last round of each key).
    const ann = async (d: TestDaemon) =>
      ((await d.request('alertmanager', 'GET', `/api/v2/alerts?filter=${encodeURIComponent('alertname="Churn"')}`)).json as { fingerprint: string; annotations: Record<string, string> }[])
        .map((x) => `${x.fingerprint} ${x.annotations.round}`)
        .sort();
    expect(await ann(c)).toEqual(await ann(a));
  }, 60_000);

  it('with the database away a POST answers 503, is not kept, and works again once it is back', async () => {
    await pgServer.stop();
    const t0 = Date.now();
    const r = await post(a, [{ labels: { alertname: 'Away', instance: 'w' } }]);
    expect(r.status).toBe(503);
    // The first request after the server went away waits for its connection to fail (under 3 s).
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(await listed(a, 'Away')).toEqual([]);
    // Reads are served from memory.
    expect((await listed(a, 'Seen')).length).toBe(3);
    await pgServer.start();
    await until('alert writes to work again', async () => (await post(a, [{ labels: { alertname: 'Away', instance: 'w' } }])).status === 200, 15_000, 200);
    await until('b to list it', async () => (await listed(b, 'Away')).length === 1, 5000);
  }, 40_000);
});
