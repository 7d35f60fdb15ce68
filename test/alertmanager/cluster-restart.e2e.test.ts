/**
 * Restarts and resolutions: a daemon that comes back must not send as firing what was resolved
 * while it was away. Two daemons on a private PostgreSQL (alert manager HA: every alert posted to
 * both, one shared notification log), and one daemon on its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';
import { until } from '../helpers/until.js';

interface Hook {
  status: string;
  alerts: { status: string; labels: Record<string, string> }[];
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

const amConfig = (hook: string) =>
  `route: {receiver: hook, group_by: [alertname], group_wait: 500ms, group_interval: 1s, repeat_interval: 1h}\nreceivers:\n  - name: hook\n    webhook_configs: [{url: "${hook}", send_resolved: true}]\n`;

/** A loopback webhook sink recording every notification. */
async function sink(): Promise<{ server: Server; url: string; got: Hook[] }> {
  const got: Hook[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      got.push(JSON.parse(body) as Hook);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

const statuses = (got: Hook[], alertname: string) => got.filter((h) => h.alerts.some((a) => a.labels.alertname === alertname)).map((h) => h.status);

describe.skipIf(!PG_BIN)('a restarted daemon of a cluster takes the resolutions the cluster notified', () => {
  if (!PG_BIN) console.log(PG_SKIP_REASON);
  let pgServer: PostgresServer;
  let hook: Awaited<ReturnType<typeof sink>>;
  let a: TestDaemon;
  let b: TestDaemon;

  beforeAll(async () => {
    pgServer = await PostgresServer.start();
    const url = await pgServer.createDatabase('restart');
    hook = await sink();
    const start = () => startDaemon({ ctlYaml: { storage: { postgres: url } }, files: { 'alertmanager.yml': amConfig(hook.url) } });
    [a, b] = await Promise.all([start(), start()]);
  }, 60_000);

  afterAll(async () => {
    await a?.cleanup();
    await b?.cleanup();
    hook?.server.closeAllConnections();
    await new Promise((r) => hook?.server.close(r));
    await pgServer?.destroy();
  });

  it('an alert resolved through the other daemon while this one was down is not sent as firing again', async () => {
    const firing = { labels: { alertname: 'Gone', instance: 'x' } };
    for (const d of [a, b]) expect((await d.request('alertmanager', 'POST', '/api/v2/alerts', [firing])).status).toBe(200);
    await until('the firing notification', () => statuses(hook.got, 'Gone').length === 1, 10_000);
    await a.stop();
    // Prometheus reaches only b while a is down: b notifies the resolution.
    expect((await b.request('alertmanager', 'POST', '/api/v2/alerts', [{ ...firing, endsAt: new Date().toISOString() }])).status).toBe(200);
    await until('the resolved notification', () => statuses(hook.got, 'Gone').length === 2, 10_000);
    await a.start();
    // a's journal still holds the alert as firing (its end is resolve_timeout away); several flushes.
    await settle(4000);
    expect(statuses(hook.got, 'Gone')).toEqual(['firing', 'resolved']);
    // a now holds it resolved, as the cluster does.
    const listed = (await a.request('alertmanager', 'GET', '/api/v2/alerts')).json as { labels: Record<string, string> }[];
    expect(listed.filter((x) => x.labels.alertname === 'Gone')).toEqual([]);
  }, 60_000);

  it('an alert that fires again after the cluster resolved it is sent as firing', async () => {
    const again = { labels: { alertname: 'Gone', instance: 'x' } };
    for (const d of [a, b]) expect((await d.request('alertmanager', 'POST', '/api/v2/alerts', [again])).status).toBe(200);
    await until('the new firing notification', () => statuses(hook.got, 'Gone').length === 3, 10_000);
    await settle(2500);
    expect(statuses(hook.got, 'Gone')).toEqual(['firing', 'resolved', 'firing']);
  }, 30_000);
});

describe('a single daemon restarted after an alert ended', () => {
  let hook: Awaited<ReturnType<typeof sink>>;
  let d: TestDaemon;

  beforeAll(async () => {
    hook = await sink();
    d = await startDaemon({ files: { 'alertmanager.yml': amConfig(hook.url) } });
  }, 30_000);

  afterAll(async () => {
    await d?.cleanup();
    hook?.server.closeAllConnections();
    await new Promise((r) => hook?.server.close(r));
  });

  it('does not send as firing an alert whose end passed while it was down', async () => {
    const endsAt = Date.now() + 4000;
    const alert = { labels: { alertname: 'Ends', instance: 'y' }, endsAt: new Date(endsAt).toISOString() };
    expect((await d.request('alertmanager', 'POST', '/api/v2/alerts', [alert])).status).toBe(200);
    await until('the firing notification', () => statuses(hook.got, 'Ends').length === 1, 10_000);
    await d.kill9();
    await settle(Math.max(0, endsAt - Date.now()) + 500);
    await d.start();
    await settle(3000);
    expect(statuses(hook.got, 'Ends').filter((s) => s === 'firing')).toHaveLength(1);
  }, 40_000);
});
