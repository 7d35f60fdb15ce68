/**
 * Alert times with nanoseconds, differential: Go keeps an alert's startsAt/endsAt to the nanosecond.
 * The same alerts (times with 1 to 9 fractional digits) posted to the real Alertmanager 0.25 and to
 * ctl must give the same `{{ .StartsAt }}`, `.Nanosecond`, `.UnixNano` and `.Format` in a template
 * (a discord message), the same RFC3339Nano times in the webhook payload, and the same
 * (millisecond) times in GET /api/v2/alerts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { alertmanagerBinary, startRealAlertmanager, type RealAlertmanager } from './real-alertmanager.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

const bin = alertmanagerBinary();

const TEXT =
  '{{ range .Alerts }}{{ .Labels.n }}={{ .StartsAt }}|{{ .StartsAt.Nanosecond }}|{{ .StartsAt.UnixNano }}|{{ .StartsAt.Format "15:04:05.000000000" }}|{{ .EndsAt }}|{{ .EndsAt.Nanosecond }};{{ end }}';

function config(sink: string, who: string): string {
  return `route:
  receiver: r
  group_by: [alertname]
  group_wait: 1s
  group_interval: 5m
  repeat_interval: 1h
receivers:
  - name: r
    webhook_configs:
      - url: ${sink}/${who}/hook
        send_resolved: true
    discord_configs:
      - webhook_url: ${sink}/${who}/discord
        message: ${JSON.stringify(TEXT)}
`;
}

describe.skipIf(!bin)('alert times with nanoseconds against the real Alertmanager 0.25', () => {
  let sink: Server;
  const got: Record<string, { hook?: any; discord?: string }> = { real: {}, ctl: {} };
  let real: RealAlertmanager;
  let d: TestDaemon;

  beforeAll(async () => {
    sink = createServer((req, res) => {
      let b = '';
      req.on('data', (c) => (b += c));
      req.on('end', () => {
        const m = /^\/(real|ctl)\/(hook|discord)$/.exec(req.url ?? '');
        if (m && m[2] === 'hook') got[m[1]!]!.hook = JSON.parse(b);
        if (m && m[2] === 'discord') got[m[1]!]!.discord = JSON.parse(b).embeds[0].description;
        res.end('{}');
      });
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
    real = await startRealAlertmanager(config(url, 'real'));
    d = await startDaemon({ files: { 'alertmanager.yml': config(url, 'ctl') } });
  });
  afterAll(async () => {
    await real?.stop();
    await d?.cleanup();
    await new Promise((r) => sink?.close(r));
  });

  it('prints .StartsAt and .EndsAt as 0.25 does, nanoseconds included, in templates, webhooks and the API', async () => {
    // An end an hour ahead, with nanoseconds: the alert is firing.
    const ahead = new Date(Date.now() + 3_600_000).toISOString().replace(/Z$/, '987654Z');
    const alerts = [
      { labels: { alertname: 'T', n: '1' }, startsAt: '2026-01-02T03:04:05.123456789Z' },
      { labels: { alertname: 'T', n: '2' }, startsAt: '2026-01-02T03:04:05.000000001Z', endsAt: ahead },
      // Resolved, both times with nanoseconds.
      { labels: { alertname: 'T', n: '3' }, startsAt: '2026-01-02T03:04:05.1Z', endsAt: '2026-01-02T03:05:05.999999999Z' },
      { labels: { alertname: 'T', n: '4' }, startsAt: '2026-01-02T03:04:05.000999Z', endsAt: '2026-01-02T03:06:00.5000001Z' },
      { labels: { alertname: 'T', n: '5' }, startsAt: '2026-01-02T03:04:05Z' },
    ];
    const bases = { real: real.url, ctl: await d.baseUrl('alertmanager') };
    for (const base of Object.values(bases)) {
      const r = await fetch(`${base}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alerts) });
      expect(r.status).toBe(200);
    }
    const end = Date.now() + 20_000;
    while (Date.now() < end && !(got.real!.hook && got.real!.discord && got.ctl!.hook && got.ctl!.discord)) await new Promise((r) => setTimeout(r, 100));

    const entries = (text: string | undefined) => (text ?? '').split(';').filter(Boolean).sort();
    expect(entries(got.ctl!.discord)).toEqual(entries(got.real!.discord));
    // What 0.25 printed (so a change on both sides cannot pass unnoticed).
    expect(entries(got.real!.discord)).toContain('1=2026-01-02 03:04:05.123456789 +0000 UTC|123456789|1767323045123456789|03:04:05.123456789|0001-01-01 00:00:00 +0000 UTC|0');
    expect(entries(got.real!.discord)).toContain('3=2026-01-02 03:04:05.1 +0000 UTC|100000000|1767323045100000000|03:04:05.100000000|2026-01-02 03:05:05.999999999 +0000 UTC|999999999');

    const times = (hook: any) =>
      Object.fromEntries((hook?.alerts ?? []).map((a: any) => [a.labels.n, { status: a.status, startsAt: a.startsAt, endsAt: a.endsAt }]));
    expect(times(got.ctl!.hook)).toEqual(times(got.real!.hook));
    expect(times(got.real!.hook)['4']).toEqual({ status: 'resolved', startsAt: '2026-01-02T03:04:05.000999Z', endsAt: '2026-01-02T03:06:00.5000001Z' });

    // The API's times are strfmt.DateTime: milliseconds. The alerts with an end of their own only
    // (the others end at a time each server chose).
    const api = async (base: string) => {
      const list = (await (await fetch(`${base}/api/v2/alerts`)).json()) as { labels: { n: string }; startsAt: string; endsAt: string }[];
      return Object.fromEntries(list.map((a) => [a.labels.n, a.labels.n === '2' ? [a.startsAt, a.endsAt] : [a.startsAt]]));
    };
    const [r, c] = [await api(bases.real), await api(bases.ctl)];
    expect(c).toEqual(r);
    expect(r['1']).toEqual(['2026-01-02T03:04:05.123Z']);
  });
});
