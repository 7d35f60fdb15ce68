/**
 * Internal alerts on two daemons sharing a private PostgreSQL: each daemon's alert manager (the
 * real component, its notification log shared) and each daemon's component alerts, whose views
 * disagree (one daemon still sees a budget exceeded, the other no longer does). Through the
 * cluster's one view (cluster-alerts.ts) each change is notified once; posted to each daemon's own
 * alert manager, the disagreement is notified as firing and resolved in turn.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { systemClock } from '../../src/http/clock.js';
import { SharedPostgres } from '../../src/store/postgres.js';
import { ComponentAlerts, type AlertSink } from '../../src/daemon/internal-alerts.js';
import { ClusterAlerts, mergeRows } from '../../src/daemon/cluster-alerts.js';
import { startHarness, type Harness } from '../alertmanager/harness.js';
import { PG_BIN, PG_SKIP_REASON, PostgresServer } from '../helpers/postgres-server.js';
import { until } from '../helpers/until.js';

const log = pino({ level: 'silent' });
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Hook {
  status: string;
  alerts: { status: string; labels: Record<string, string> }[];
}

const amConfig = (hook: string) =>
  `route: {receiver: hook, group_by: [alertname], group_wait: 300ms, group_interval: 1s, repeat_interval: 1h}\nreceivers:\n  - name: hook\n    webhook_configs: [{url: "${hook}", send_resolved: true}]\n`;

const BUDGET = { alertname: 'GatewayBudgetExceeded', labels: { api_key_id: 'k1', period: 'daily' }, annotations: { summary: 'over' } };

describe('mergeRows', () => {
  const row = (owner: string, startsAt: number, endsAt: number, updatedAt: number, summary = owner) => ({
    key: 'k',
    data: JSON.stringify({ labels: { alertname: 'X' }, annotations: { summary }, generatorURL: '' }),
    starts_at: String(startsAt),
    ends_at: String(endsAt),
    updated_at: String(updatedAt),
  });
  it('fires while any daemon reports it firing, from the earliest start to the latest end', () => {
    const [m] = mergeRows([row('a', 100, 5000, 300), row('b', 200, 900, 400)], 1000);
    expect(m).toMatchObject({ startsAt: 100, endsAt: 5000, annotations: { summary: 'a' } });
  });
  it('is resolved once no daemon reports it firing, at the latest end', () => {
    const [m] = mergeRows([row('a', 100, 700, 700), row('b', 200, 800, 800)], 1000);
    expect(m).toMatchObject({ startsAt: 100, endsAt: 800, annotations: { summary: 'b' } });
  });
});

describe.skipIf(!PG_BIN)('internal alerts of two daemons on one PostgreSQL', () => {
  if (!PG_BIN) console.log(PG_SKIP_REASON);
  let pg: PostgresServer;
  let sink: Server;
  const got: Hook[] = [];
  let hookUrl: string;
  let dbUrl: string;
  const open: { close(): Promise<void> | void }[] = [];

  beforeAll(async () => {
    pg = await PostgresServer.start();
    sink = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        got.push(JSON.parse(body) as Hook);
        res.end();
      });
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook`;
  }, 60_000);

  afterAll(async () => {
    for (const o of open.reverse()) await o.close();
    sink?.closeAllConnections();
    await new Promise((r) => sink?.close(r));
    await pg?.destroy();
  });

  /** Two daemons' alert managers on database `name`, and each daemon's line for gateway alerts. */
  async function twoDaemons(name: string, cluster: boolean): Promise<{ gw: ComponentAlerts[]; ams: Harness[] }> {
    dbUrl = await pg.createDatabase(name);
    const gw: ComponentAlerts[] = [];
    const ams: Harness[] = [];
    for (const id of ['a', 'b']) {
      const db = await SharedPostgres.connect(dbUrl, log);
      open.push({ close: () => db.close() });
      const h = await startHarness({ config: amConfig(hookUrl), clock: systemClock, shared: { daemonId: id, postgres: db } });
      open.push(h);
      const am = () => h.instance.handle as AlertSink;
      let line: () => AlertSink = am;
      if (cluster) {
        const c = await ClusterAlerts.open(db, id, am, systemClock, log);
        open.push(c);
        line = () => c.sink;
      }
      gw.push(new ComponentAlerts('gateway', true, line, () => '', systemClock, log));
      ams.push(h);
    }
    return { gw, ams };
  }

  const budgetNotices = () => got.filter((h) => h.alerts.some((a) => a.labels.alertname === BUDGET.alertname && a.labels.api_key_id === BUDGET.labels.api_key_id));

  it('posted to each daemon\'s own alert manager, daemons that disagree notify firing and resolved in turn', async () => {
    got.length = 0;
    const { gw } = await twoDaemons('own', false);
    gw[0]!.fire(BUDGET);
    gw[1]!.fire(BUDGET);
    await until('the firing notification', () => budgetNotices().length === 1, 10_000);
    // b no longer sees the budget exceeded; a still does, and re-posts it (its refresh).
    gw[1]!.resolve(BUDGET.alertname, BUDGET.labels);
    for (let i = 0; i < 3; i++) {
      await settle(1500);
      gw[0]!.refresh();
    }
    await settle(1500);
    const statuses = budgetNotices().map((h) => h.status);
    expect(statuses.filter((s) => s === 'resolved').length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s === 'firing').length).toBeGreaterThanOrEqual(2);
  }, 40_000);

  it('through the cluster\'s one view, the alert fires while either daemon sees it and each change is notified once', async () => {
    got.length = 0;
    const { gw, ams } = await twoDaemons('cluster', true);
    gw[0]!.fire(BUDGET);
    gw[1]!.fire(BUDGET);
    await until('the firing notification', () => budgetNotices().length === 1, 10_000);
    gw[1]!.resolve(BUDGET.alertname, BUDGET.labels);
    for (let i = 0; i < 3; i++) {
      await settle(1500);
      gw[0]!.refresh();
    }
    await settle(1500);
    expect(budgetNotices().map((h) => h.status)).toEqual(['firing']);
    // Both alert managers list it firing (one view).
    for (const h of ams) {
      const listed = (await h.request('GET', '/api/v2/alerts')).json() as { labels: Record<string, string>; status: { state: string } }[];
      expect(listed.filter((a) => a.labels.alertname === BUDGET.alertname)).toHaveLength(1);
    }
    // a no longer sees it either: one resolved notification, and neither lists it.
    gw[0]!.resolve(BUDGET.alertname, BUDGET.labels);
    await until('the resolved notification', () => budgetNotices().length === 2, 10_000);
    await settle(2500);
    expect(budgetNotices().map((h) => h.status)).toEqual(['firing', 'resolved']);
    for (const h of ams) {
      const listed = (await h.request('GET', '/api/v2/alerts')).json() as { labels: Record<string, string> }[];
      expect(listed.filter((a) => a.labels.alertname === BUDGET.alertname)).toEqual([]);
    }
  }, 40_000);
});
