/**
 * Notifications, differential: the same alertmanager.yml with a webhook receiver on the real
 * Alertmanager 0.25 and on ctl, the same alert sequence posted to both; each one's webhook goes to
 * a loopback sink, and what the two sinks received must match after the times (and nothing else)
 * are normalised: payloads byte for byte otherwise, and the number of notifications.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { alertmanagerBinary, startRealAlertmanager, type RealAlertmanager } from './real-alertmanager.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { NotifyPair, iso, settle } from './notify-pair.js';
import { compareJson } from './diff-pair.js';

const bin = alertmanagerBinary();

function config(sink: string): string {
  return `route:
  receiver: hook
  group_by: [alertname]
  group_wait: 1s
  group_interval: 2s
  repeat_interval: 1h
  routes:
    - receiver: quiet
      matchers: [severity="info"]
    - receiver: hook
      matchers: [team="night"]
      mute_time_intervals: [always]
    - receiver: hook
      matchers: [team="day"]
      active_time_intervals: [never]
    - receiver: hook
      matchers: [alertname="Repeat"]
      group_interval: 1s
      repeat_interval: 2s
inhibit_rules:
  - source_matchers: [alertname="Outage"]
    target_matchers: [severity="warning"]
    equal: [cluster]
time_intervals:
  - name: always
    time_intervals: [{years: ["2000:2100"]}]
  - name: never
    time_intervals: [{years: ["1990:1991"]}]
receivers:
  - name: hook
    webhook_configs:
      - url: ${sink}
        send_resolved: true
        max_alerts: 2
  - name: quiet
    webhook_configs:
      - url: ${sink}
        send_resolved: false
`;
}

/** Times differ between the two servers; everything else must not. */
function normalise(body: string): unknown {
  const o = JSON.parse(body) as { alerts: Record<string, unknown>[]; externalURL: string };
  for (const a of o.alerts) {
    a.startsAt = a.startsAt === '0001-01-01T00:00:00Z' ? 'zero' : 'time';
    a.endsAt = a.endsAt === '0001-01-01T00:00:00Z' ? 'zero' : 'time';
  }
  o.externalURL = 'external';
  return o;
}

describe.skipIf(!bin)('notifications: webhook, against the real Alertmanager 0.25', () => {
  let sink: Server;
  const got: Record<string, { body: string; headers: Record<string, unknown> }[]> = { real: [], ctl: [] };
  let real: RealAlertmanager;
  let d: TestDaemon;
  let sinkUrl: string;
  beforeAll(async () => {
    sink = createServer((req, res) => {
      let b = '';
      req.on('data', (c) => (b += c));
      req.on('end', () => {
        got[req.url === '/real' ? 'real' : 'ctl']!.push({ body: b, headers: req.headers });
        res.end();
      });
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
    real = await startRealAlertmanager(config(`${sinkUrl}/real`));
    d = await startDaemon({ files: { 'alertmanager.yml': config(`${sinkUrl}/ctl`) } });
  });
  afterAll(async () => {
    await real?.stop();
    await d?.cleanup();
    await new Promise((r) => sink.close(r));
  });

  const post = async (alerts: unknown[]) => {
    const ctlBase = await d.baseUrl('alertmanager');
    for (const base of [real.url, ctlBase]) {
      const r = await fetch(`${base}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alerts) });
      expect(r.status).toBe(200);
    }
  };

  it('a new group, an alert joining it, a resolution, truncation, send_resolved: false and time intervals send what 0.25 sends', async () => {
    const t0 = Date.now() - 10_000;
    const ctlBase = await d.baseUrl('alertmanager');
    for (const base of [real.url, ctlBase]) {
      const silence = { matchers: [{ name: 'alertname', value: 'Silenced', isRegex: false }], startsAt: iso(Date.now() - 1000), endsAt: iso(Date.now() + 3_600_000), createdBy: 't', comment: 'c' };
      expect((await fetch(`${base}/api/v2/silences`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(silence) })).status).toBe(200);
    }
    // The inhibiting alert first: 0.25's inhibitor learns of alerts through a subscription, so on a
    // loaded machine an inhibited alert posted in the same request can be flushed before it knows.
    await post([{ labels: { alertname: 'Outage', cluster: 'eu' }, startsAt: iso(t0) }]);
    await settle(300);
    await post([
      { labels: { alertname: 'DiskFull', instance: 'a', job: 'node' }, annotations: { summary: 'disk <full> & "more"' }, startsAt: iso(t0) },
      { labels: { alertname: 'Chatty', severity: 'info' }, startsAt: iso(t0) },
      { labels: { alertname: 'Muted', team: 'night' }, startsAt: iso(t0) },
      { labels: { alertname: 'Silenced', instance: 's' }, startsAt: iso(t0) },
      { labels: { alertname: 'Inactive', team: 'day' }, startsAt: iso(t0) },
      { labels: { alertname: 'Outage', cluster: 'eu' }, startsAt: iso(t0) },
      { labels: { alertname: 'Slow', cluster: 'eu', severity: 'warning' }, startsAt: iso(t0) },
      { labels: { alertname: 'Slow', cluster: 'us', severity: 'warning' }, startsAt: iso(t0) },
      { labels: { alertname: 'Repeat' }, startsAt: iso(t0) },
    ]);
    await settle(1800);
    await post([
      { labels: { alertname: 'DiskFull', instance: 'b', job: 'node' }, annotations: { summary: 'disk <full> & "more"' }, startsAt: iso(t0) },
      { labels: { alertname: 'DiskFull', instance: 'c', job: 'node' }, annotations: { summary: 'other' }, startsAt: iso(t0) },
    ]);
    await settle(2500);
    await post([
      { labels: { alertname: 'DiskFull', instance: 'a', job: 'node' }, annotations: { summary: 'disk <full> & "more"' }, startsAt: iso(t0), endsAt: iso(Date.now() - 500) },
      { labels: { alertname: 'Chatty', severity: 'info' }, startsAt: iso(t0), endsAt: iso(Date.now() - 500) },
    ]);
    await settle(3500);
    const byGroup = (list: { body: string }[]) => {
      const out: Record<string, unknown[]> = {};
      for (const n of list) {
        const o = normalise(n.body) as { groupKey: string };
        (out[o.groupKey] ??= []).push(o);
      }
      return out;
    };
    expect(got.real.length).toBeGreaterThanOrEqual(3);
    // The repeating group: how many repeats fit in the test depends on each server's timer phase;
    // both must have repeated it, with the same notification each time.
    const repeatKey = '{}/{alertname="Repeat"}:{alertname="Repeat"}';
    const repeats = { real: byGroup(got.real)[repeatKey] ?? [], ctl: byGroup(got.ctl)[repeatKey] ?? [] };
    expect(repeats.real.length).toBeGreaterThanOrEqual(2);
    expect(repeats.ctl.length).toBeGreaterThanOrEqual(2);
    expect(new Set(repeats.ctl.map((x) => JSON.stringify(x)))).toEqual(new Set(repeats.real.map((x) => JSON.stringify(x))));
    for (const list of [got.real, got.ctl]) list.splice(0, list.length, ...list.filter((n) => !n.body.includes('"Repeat"')));
    // The inhibited alert (same cluster as the outage) is in neither; the other one is.
    expect(got.real.some((n) => n.body.includes('"cluster":"us"'))).toBe(true);
    expect(got.real.some((n) => n.body.includes('"cluster":"eu","severity":"warning"'))).toBe(false);
    expect(byGroup(got.ctl)).toEqual(byGroup(got.real));
    expect(got.ctl[0]!.headers['content-type']).toBe(got.real[0]!.headers['content-type']);
    expect(got.ctl[0]!.headers['user-agent']).toBe(got.real[0]!.headers['user-agent']);
  });
});

/**
 * Fan-out: routes that send one alert to several receivers. Sibling routes with the same matchers
 * have the same group key in 0.25 but are separate groups (its dispatcher keys groups per route),
 * and each receiver's notification log entry is its own.
 */
function fanOutConfig(base: string): string {
  const hook = (name: string) => `  - name: ${name}
    webhook_configs:
      - url: ${base}/${name}
        send_resolved: true
`;
  return `route:
  receiver: rest
  group_by: [alertname]
  group_wait: 1s
  group_interval: 2s
  repeat_interval: 1h
  routes:
    # identical siblings to different receivers
    - receiver: a
      matchers: [team="fan"]
      continue: true
    - receiver: b
      matchers: [team="fan"]
    # nested continue: both children, then a later sibling of their parent
    - receiver: a
      matchers: [team="nest"]
      continue: true
      routes:
        - receiver: b
          matchers: [severity="page"]
          continue: true
        - receiver: c
          matchers: [severity="page"]
    - receiver: c
      matchers: [team="nest"]
      continue: true
    # the same receiver on two routes
    - receiver: a
      matchers: [team="same"]
      continue: true
    - receiver: a
      matchers: [severity="same"]
receivers:
${hook('a')}${hook('b')}${hook('c')}${hook('rest')}`;
}

describe.skipIf(!bin)('notifications: fan-out to several receivers, against the real Alertmanager 0.25', () => {
  let pair: NotifyPair;
  beforeAll(async () => {
    pair = await NotifyPair.start(fanOutConfig);
  });
  afterAll(async () => {
    await pair?.stop();
  });

  it('identical sibling routes, nested continue and one receiver on two routes each notify every route, firing then resolved, as 0.25 does', async () => {
    const t0 = Date.now() - 10_000;
    const alerts = [
      { labels: { alertname: 'Fan', team: 'fan', instance: 'x' }, startsAt: iso(t0) },
      { labels: { alertname: 'Fan', team: 'fan', instance: 'y' }, startsAt: iso(t0) },
      { labels: { alertname: 'Nest', team: 'nest', severity: 'page' }, startsAt: iso(t0) },
      { labels: { alertname: 'NestLow', team: 'nest', severity: 'low' }, startsAt: iso(t0) },
      { labels: { alertname: 'Same', team: 'same', severity: 'same' }, startsAt: iso(t0) },
    ];
    await pair.post(alerts);
    await settle(2000);
    // The API lists one group per route, as 0.25 does.
    const [realGroups, ctlGroups] = await pair.get('/api/v2/alerts/groups');
    expect((realGroups as unknown[]).length).toBe(9);
    // ctl adds `mutedBy` to an alert's status (0.25 does not have it yet).
    const withoutMutedBy = JSON.parse(JSON.stringify(ctlGroups, (k, v: unknown) => (k === 'mutedBy' ? undefined : v)));
    compareJson(realGroups, withoutMutedBy, 'GET /api/v2/alerts/groups', '$');
    // One of each group resolves: every route that notified it is told.
    await pair.post(alerts.map((a, i) => (i === 1 ? a : { ...a, endsAt: iso(Date.now() - 500) })));
    await settle(3500);
    const real = pair.byReceiverAndGroup('real');
    // The shapes this case is about reached 0.25's receivers (the case checks itself).
    expect(Object.keys(real).sort()).toEqual([
      '/a {}/{severity="same"}:{alertname="Same"}',
      '/a {}/{team="fan"}:{alertname="Fan"}',
      '/a {}/{team="nest"}:{alertname="NestLow"}',
      '/a {}/{team="same"}:{alertname="Same"}',
      '/b {}/{team="fan"}:{alertname="Fan"}',
      '/b {}/{team="nest"}/{severity="page"}:{alertname="Nest"}',
      '/c {}/{team="nest"}/{severity="page"}:{alertname="Nest"}',
      '/c {}/{team="nest"}:{alertname="Nest"}',
      '/c {}/{team="nest"}:{alertname="NestLow"}',
    ]);
    pair.expectSame();
  });
});

/** Timing with short intervals: what a silence over a whole group does to the notification log. */
function timingConfig(base: string): string {
  return `route:
  receiver: hook
  group_by: [alertname]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs:
      - url: ${base}/hook
        send_resolved: true
`;
}

describe.skipIf(!bin)('notifications: silences over a whole group, against the real Alertmanager 0.25', () => {
  let pair: NotifyPair;
  beforeAll(async () => {
    pair = await NotifyPair.start(timingConfig);
  });
  afterAll(async () => {
    await pair?.stop();
  });

  it('an alert resolved while its whole group was silenced: nothing is sent when the silence ends, and the next change is notified against what was last sent', async () => {
    const t0 = Date.now() - 10_000;
    const a = { labels: { alertname: 'Quiet', instance: 'a' }, startsAt: iso(t0) };
    const b = { labels: { alertname: 'Quiet', instance: 'b' }, startsAt: iso(t0) };
    const c = { labels: { alertname: 'Lone', instance: 'c' }, startsAt: iso(t0) };
    await pair.post([a, b, c]);
    await settle(1800);
    // Both groups were notified firing; now every alert of both is silenced.
    await pair.silence('all', [{ name: 'instance', value: '.+', isRegex: true }], Date.now() + 3_600_000);
    await settle(300);
    await pair.post([{ ...a, endsAt: iso(Date.now() - 200) }, { ...c, endsAt: iso(Date.now() - 200) }]);
    await settle(2500);
    await pair.expire('all');
    await settle(2500);
    const quietAfterSilence = { real: pair.got.real.length, ctl: pair.got.ctl.length };
    // The lone alert fires again (a new start): 0.25's log still holds it as firing, so nothing is sent.
    await pair.post([{ ...c, startsAt: iso(Date.now() - 100) }]);
    // b resolves: the log's last notification carried a and b firing, so b's resolution is sent.
    await pair.post([{ ...b, endsAt: iso(Date.now() - 200) }]);
    await settle(2500);
    expect(quietAfterSilence.real).toBe(2);
    expect(quietAfterSilence.ctl).toBe(quietAfterSilence.real);
    pair.expectSame();
  });
});

/** Two webhooks on one receiver: one always answers 500 (slowly), the other succeeds. */
function failingBesideConfig(base: string): string {
  return `route:
  receiver: pair
  group_by: [alertname]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: pair
    webhook_configs:
      - url: ${base}/fail
        send_resolved: true
      - url: ${base}/hook
        send_resolved: true
`;
}

describe.skipIf(!bin)('notifications: a failing integration beside a working one, against the real Alertmanager 0.25', () => {
  let pair: NotifyPair;
  beforeAll(async () => {
    // Each answer of the failing webhook takes longer than group_interval: every flush outlasts it.
    pair = await NotifyPair.start(failingBesideConfig, (path) => (path === '/fail' ? { status: 500, delayMs: 1500 } : { status: 200, delayMs: 0 }));
  });
  afterAll(async () => {
    await pair?.stop();
  });

  it('the working webhook is sent the firing alert and then its resolution, as 0.25 sends them, while the other keeps failing', async () => {
    const t0 = Date.now() - 10_000;
    const a = { labels: { alertname: 'Pair', instance: 'a' }, startsAt: iso(t0) };
    await pair.post([a]);
    await settle(2000);
    await pair.post([{ ...a, endsAt: iso(Date.now() - 200) }]);
    // 0.25 retries the failing webhook until its flush's 10 s minimum timeout, then flushes again.
    await settle(12_000);
    const hook = (side: 'real' | 'ctl') => Object.entries(pair.byReceiverAndGroup(side)).filter(([k]) => k.startsWith('/hook '));
    // The case checks itself: 0.25 kept trying the failing one and told the working one both states.
    expect(pair.got.real.filter((d) => d.path === '/fail').length).toBeGreaterThanOrEqual(2);
    expect(hook('real').flatMap(([, list]) => list.map((n) => (n as { status: string }).status))).toEqual(['firing', 'resolved']);
    expect(hook('ctl')).toEqual(hook('real'));
  });
});
