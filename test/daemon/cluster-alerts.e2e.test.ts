/**
 * ctl's internal alerts on two real daemons sharing a private PostgreSQL (and Redis): a budget
 * exceeded through one gateway raises GatewayBudgetExceeded; the cluster holds one view of it
 * (a row per reporting daemon in the shared table), both alert managers list it, and the receiver
 * is told once when it fires and once when it resolves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { startGatewayCluster, type GatewayCluster } from '../helpers/gateway-cluster.js';
import { PG_BIN, PG_SKIP_REASON } from '../helpers/postgres-server.js';
import { REDIS_SERVER, REDIS_SKIP_REASON } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

interface Hook {
  status: string;
  alerts: { status: string; labels: Record<string, string> }[];
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!PG_BIN || !REDIS_SERVER)('internal alerts of two daemons: one view for the cluster', () => {
  if (!PG_BIN) console.log(PG_SKIP_REASON);
  if (!REDIS_SERVER) console.log(REDIS_SKIP_REASON);
  let cluster: GatewayCluster;
  let sink: Server;
  const got: Hook[] = [];

  beforeAll(async () => {
    sink = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        got.push(JSON.parse(body) as Hook);
        res.end();
      });
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    const hook = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook`;
    cluster = await startGatewayCluster({ daemons: 2, database: 'internal_alerts', price: 1000 });
    for (const d of cluster.daemons) {
      writeFileSync(
        join(d.dir, 'alertmanager.yml'),
        `route: {receiver: hook, group_by: [alertname], group_wait: 500ms, group_interval: 1s, repeat_interval: 1h}\nreceivers:\n  - name: hook\n    webhook_configs: [{url: "${hook}", send_resolved: true}]\n`,
      );
      expect((await d.request('alertmanager', 'POST', '/-/reload')).status).toBe(200);
    }
  }, 90_000);

  afterAll(async () => {
    await cluster?.close();
    sink?.closeAllConnections();
    await new Promise((r) => sink?.close(r));
  });

  const budgetNotices = () => got.filter((h) => h.alerts.some((a) => a.labels.alertname === 'GatewayBudgetExceeded')).map((h) => h.status);

  it('a budget exceeded through one gateway is notified once, listed by both, and its end notified once', async () => {
    const [a, b] = cluster.daemons as [(typeof cluster.daemons)[0], (typeof cluster.daemons)[0]];
    const { key, id } = await cluster.budgetedKey('tiny', 0.000001);
    const r = await fetch(`${await a.baseUrl('gateway')}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'oa/m1', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await r.arrayBuffer();
    expect(r.status).toBe(200);
    // Each gateway checks every 5 s.
    await until('the firing notification', () => budgetNotices().length >= 1, 20_000);
    await settle(6000);
    expect(budgetNotices()).toEqual(['firing']);
    for (const d of [a, b]) {
      const listed = (await d.request('alertmanager', 'GET', '/api/v2/alerts?filter=alertname%3D%22GatewayBudgetExceeded%22')).json as { labels: Record<string, string> }[];
      expect(listed.map((x) => x.labels.api_key_id)).toEqual([id]);
    }
    // What each daemon reported is in the shared table.
    const client = new pg.Client({ connectionString: cluster.pg.url('internal_alerts') });
    await client.connect();
    try {
      const rows = await client.query('SELECT owner, ends_at FROM ctl_internal_alerts');
      expect(rows.rows.length).toBeGreaterThanOrEqual(1);
    } finally {
      await client.end();
    }
    // The budget is raised: every gateway sees it no longer exceeded; the end is notified once.
    expect((await a.request('gateway', 'POST', '/api/usage/budget', { apiKeyId: id, dailyLimitUsd: 1000 })).status).toBeLessThan(300);
    await until('the resolved notification', () => budgetNotices().length >= 2, 20_000);
    await settle(6000);
    expect(budgetNotices()).toEqual(['firing', 'resolved']);
  }, 90_000);
});
