/**
 * Internal alerts, end to end: the node monitor polls a fake network, a node stops answering and
 * another one's height freezes; ctl's own alert manager gets NodeOffline and NodeStuck (with the
 * node's labels), routes them to a webhook receiver, and when the node answers again the
 * resolution is sent too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeNknNetwork } from '../fakes/nkn-node.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

const IPS = ['203.0.113.60', '203.0.113.61', '203.0.113.62'];

interface Sent {
  status: string;
  alerts: { status: string; labels: Record<string, string>; annotations: Record<string, string>; generatorURL: string }[];
}

let d: TestDaemon;
let fake: FakeNknNetwork;
let sink: Server;
const sent: Sent[] = [];

beforeAll(async () => {
  // Blocks every 0.3 s, so a node that answers moves between two polls a second apart.
  fake = await new FakeNknNetwork({ blockTimeSec: 0.3 }).start();
  fake.setNode('203.0.113.62', { frozenHeight: 1234 });
  sink = createServer((req, res) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      sent.push(JSON.parse(b) as Sent);
      res.end();
    });
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  const hook = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/`;
  d = await startDaemon({
    ctlYaml: {
      egress: { 'address-map': fake.addressMap(IPS) },
      nodes: { poll: { interval: 1, 'retry-delay': 0, retries: 0, 'dirty-retries': 0, 'stuck-after': 2 } },
    },
    files: {
      'alertmanager.yml': `route:
  receiver: hook
  group_by: [alertname, ip]
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs: [{url: "${hook}", send_resolved: true}]
`,
    },
  });
}, 60_000);

afterAll(async () => {
  await d?.cleanup();
  await fake?.stop();
  await new Promise((r) => sink.close(r));
});

async function until<T>(fn: () => T | Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const notified = (alertname: string, ip: string, status: string) =>
  sent.some((n) => n.alerts.some((a) => a.labels.alertname === alertname && a.labels.ip === ip && a.status === status));

describe('nodes raise alerts in the alert manager', () => {
  it('an offline node and a stuck node fire, reach the receiver, and the offline one resolves when it answers again', async () => {
    const g = (await d.request('nodes', 'POST', '/api', { Method: 'genid' })).json as { Value: { Hash: string } };
    const hash = g.Value.Hash;
    expect((await d.request('nodes', 'POST', '/api', { Method: 'addnodes', Value: { Hash: hash, Multiple: true, Name: 'n', Ip: IPS.join('\n') } })).json).toMatchObject({ Code: 0 });
    fake.setMode('203.0.113.61', 'offline');

    await until(
      () => sent,
      () => notified('NodeOffline', '203.0.113.61', 'firing') && notified('NodeStuck', '203.0.113.62', 'firing'),
    );
    expect(notified('NodeOffline', '203.0.113.61', 'firing')).toBe(true);
    expect(notified('NodeStuck', '203.0.113.62', 'firing')).toBe(true);
    const offline = sent.flatMap((n) => n.alerts).find((a) => a.labels.alertname === 'NodeOffline')!;
    expect(offline.labels).toMatchObject({ component: 'nodes', ip: '203.0.113.61', name: 'n2', account: hash.slice(0, 8), node_id: expect.stringMatching(/^\d+$/) });
    expect(offline.annotations.summary).toBe('node n2 (203.0.113.61) does not answer');
    expect(offline.generatorURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/getmynodes$/);
    // The healthy node raised nothing.
    expect(sent.flatMap((n) => n.alerts).some((a) => a.labels.ip === '203.0.113.60')).toBe(false);

    // Visible in the alert manager's API as any other alert.
    const listed = (await d.request('alertmanager', 'GET', '/api/v2/alerts?filter=component%3D%22nodes%22')).json as { labels: Record<string, string> }[];
    expect(listed.map((a) => a.labels.alertname).sort()).toEqual(['NodeOffline', 'NodeStuck']);

    // The monitor's own metrics say the same.
    const metrics = await (await fetch(`${await d.baseUrl('nodes')}/metrics`)).text();
    expect(metrics).toMatch(/^ctl_nodes_nodes\{state="offline"\} 1$/m);
    expect(metrics).toMatch(/^ctl_nodes_nodes\{state="online"\} 2$/m);
    expect(metrics).toMatch(/^ctl_nodes_poll_cycles_total [1-9]\d*$/m);

    fake.setMode('203.0.113.61', 'online');
    await until(
      () => sent,
      () => notified('NodeOffline', '203.0.113.61', 'resolved'),
    );
    expect(notified('NodeOffline', '203.0.113.61', 'resolved')).toBe(true);
  }, 40_000);
});
