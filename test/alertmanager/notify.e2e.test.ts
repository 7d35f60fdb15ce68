import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

/** The notification log survives kill -9: nothing sent twice, a pending resolution not forgotten. */
describe('notifications across kill -9', () => {
  let sink: Server;
  const got: { status: string; alerts: { status: string; labels: Record<string, string> }[] }[] = [];
  let d: TestDaemon;
  beforeAll(async () => {
    sink = createServer((req, res) => {
      let b = '';
      req.on('data', (c) => (b += c));
      req.on('end', () => {
        got.push(JSON.parse(b));
        res.end();
      });
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook`;
    d = await startDaemon({
      files: {
        'alertmanager.yml': `route: {receiver: hook, group_by: [alertname], group_wait: 500ms, group_interval: 1s, repeat_interval: 1h}\nreceivers:\n  - name: hook\n    webhook_configs: [{url: "${url}"}]\n`,
      },
    });
  });
  afterAll(async () => {
    await d?.cleanup();
    await new Promise((r) => sink.close(r));
  });
  const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const post = (alerts: unknown[]) => d.request('alertmanager', 'POST', '/api/v2/alerts', alerts);

  it('sends once, not again after a restart within repeat_interval, and still sends the resolution', async () => {
    const startsAt = new Date(Date.now() - 60_000).toISOString();
    expect((await post([{ labels: { alertname: 'Down', instance: 'x' }, startsAt }])).status).toBe(200);
    for (let i = 0; i < 50 && got.length === 0; i++) await settle(100);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ status: 'firing', alerts: [{ status: 'firing', labels: { alertname: 'Down', instance: 'x' } }] });
    await d.kill9();
    await d.start();
    await settle(2500);
    expect(got).toHaveLength(1); // the log remembered it: no second firing notification
    expect((await post([{ labels: { alertname: 'Down', instance: 'x' }, startsAt, endsAt: new Date().toISOString() }])).status).toBe(200);
    for (let i = 0; i < 50 && got.length === 1; i++) await settle(100);
    expect(got).toHaveLength(2);
    expect(got[1]).toMatchObject({ status: 'resolved', alerts: [{ status: 'resolved' }] });
  });

  it('GET /metrics: Prometheus text with Alertmanager\'s names, counting what was received and sent', async () => {
    const base = await d.baseUrl('alertmanager');
    const r = await fetch(`${base}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await r.text();
    for (const name of [
      'alertmanager_alerts{state="active"}',
      'alertmanager_alerts{state="suppressed"}',
      'alertmanager_alerts_received_total{status="resolved",version="v2"} 1',
      'alertmanager_notifications_total{integration="webhook"} 1',
      'alertmanager_notification_latency_seconds_bucket{le="1",integration="webhook"}',
      'alertmanager_silences{state="active"} 0',
      'alertmanager_dispatcher_aggregation_groups',
      'alertmanager_config_last_reload_successful 1',
      'process_resident_memory_bytes',
    ]) expect(text, name).toContain(name);
  });
});
