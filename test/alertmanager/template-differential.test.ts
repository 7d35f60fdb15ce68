/**
 * Templates, differential: the same template cases on the real Alertmanager 0.25 and on ctl.
 * HTML cases are the message of their own telegram_configs entry (bot token `h<N>`; telegram's
 * parse_mode is HTML by default, so html/template's contextual escaping applies), text cases the
 * message of their own discord_configs entry (`/discord/t<N>`). What the sink received for each
 * case must match: the same text, or nothing from either where 0.25 fails the notification
 * (telegram sends an empty text then, as 0.25 does); the failures are counted alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { alertmanagerBinary, startRealAlertmanager, type RealAlertmanager } from './real-alertmanager.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

const bin = alertmanagerBinary();
const EXTERNAL = 'http://am.example:9093';

/** Cases rendered with parse_mode: HTML (telegram). */
export const HTML_CASES = [
  '<b>{{ .Status }}</b> {{ range .Alerts }}{{ .Labels.instance }} {{ .Annotations.summary }};{{ end }}',
  '<a href="{{ .CommonAnnotations.link }}">x</a> <a href="{{ .CommonAnnotations.runbook }}">y</a>',
  '<a href="http://x/?q={{ .CommonLabels.instance }}&r={{ .Receiver }}">q</a>',
  '<a title={{ .CommonLabels.instance }} href=/a/{{ .CommonAnnotations.summary }}>t</a>',
  '<script>var a = {{ .CommonLabels }}, s = "{{ .CommonAnnotations.summary }}", n = {{ len .Alerts }};</script>',
  '<style>p { color: {{ .CommonLabels.color }}; background: url({{ .CommonAnnotations.runbook }}) }</style>',
  'a+b {{ "a+b" }} {{ "a+b" | html }} {{ .CommonAnnotations.summary | html }} {{ html .CommonLabels.instance }}',
  '<!-- {{ .Status }} secret -->kept {{ .CommonAnnotations.link | urlquery }}',
  '{{ .CommonAnnotations.summary | safeHtml }} <i title="{{ "<b>x</b>" | safeHtml }}">{{ "<u>" }}</i>',
  '<textarea>{{ .CommonAnnotations.summary }}</textarea><title>{{ .CommonLabels.instance }}</title>',
  '{{ define "inner" }}<i>{{ . }}</i>{{ end }}<a onclick="f({{ template "inner" .Status }})">{{ template "inner" .CommonAnnotations.summary }}</a>',
  '{{ if .Alerts }}<a href="/a?{{ .Status }}">{{ else }}<a href="/b#">{{ end }}link</a>',
  '<a href="{{ if eq .Status "firing" }}/x?a={{ else }}/y/{{ end }}{{ .Status }}">amb</a>',
  '<p style="{{ .CommonAnnotations.summary }}">',
];

/** Cases rendered as text (discord's message); those 0.25 fails are listed in FAILING. */
export const TEXT_CASES = [
  '{{ .Receiver }}|{{ .Status }}|{{ .ExternalURL }}|{{ .CommonAnnotations.summary }}',
  '{{ .Nope }}',
  '{{ eq .Status 1 }}',
  '{{ range .Alerts }}{{ .Labels.Nope }}{{ .Nope }}{{ end }}',
  '{{ printf "%s %d %v %T %T" 42 "s" 1.23456789e8 . .Alerts }}',
];
const FAILING = ['t1', 't2', 't3'];

function config(sink: string, who: string): string {
  const tg = (text: string, n: number) => `      - api_url: ${sink}/${who}\n        bot_token: h${n}\n        chat_id: 42\n        parse_mode: HTML\n        message: ${JSON.stringify(text)}\n`;
  const dc = (text: string, n: number) => `      - webhook_url: ${sink}/${who}/discord/t${n}\n        message: ${JSON.stringify(text)}\n`;
  return `global:
  resolve_timeout: 5m
route:
  receiver: 'tmpl.x+'
  group_by: [alertname]
  group_wait: 1s
  group_interval: 5m
  repeat_interval: 1h
receivers:
  - name: 'tmpl.x+'
    telegram_configs:
${HTML_CASES.map(tg).join('')}    discord_configs:
${TEXT_CASES.map(dc).join('')}`;
}

describe.skipIf(!bin)('templates against the real Alertmanager 0.25 (telegram messages)', () => {
  let sink: Server;
  const got: Record<string, Record<string, string>> = { real: {}, ctl: {} };
  let real: RealAlertmanager;
  let d: TestDaemon;

  beforeAll(async () => {
    sink = createServer((req, res) => {
      let b = '';
      req.on('data', (c) => (b += c));
      req.on('end', () => {
        const m = /^\/(real|ctl)\/(?:bot([a-z0-9]+)\/sendMessage|discord\/([a-z0-9]+))$/.exec(req.url ?? '');
        if (m && m[2]) got[m[1]!]![m[2]] = JSON.parse(b).text;
        if (m && m[3]) got[m[1]!]![m[3]] = JSON.parse(b).embeds[0].description;
        res.end('{"ok":true,"result":{"message_id":1,"date":0,"chat":{"id":42,"type":"private"}}}');
      });
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
    real = await startRealAlertmanager(config(url, 'real'), [`--web.external-url=${EXTERNAL}`]);
    d = await startDaemon({ files: { 'alertmanager.yml': config(url, 'ctl') }, ctlYaml: { alertmanager: { 'external-url': EXTERNAL } } });
  });
  afterAll(async () => {
    await real?.stop();
    await d?.cleanup();
    await new Promise((r) => sink.close(r));
  });

  it('renders every case as 0.25 does, and sends nothing where 0.25 fails', async () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    const alerts = [
      {
        labels: { alertname: 'Disk', instance: 'db<1> "x" & y', color: 'red', team: 'a+b' },
        annotations: { summary: 'disk <b>full</b> & "quoted" \'s\' a+b', link: 'javascript:alert(1)', runbook: 'http://run.book/a b?c=d&e=<f>' },
        startsAt: iso(Date.now()),
      },
    ];
    for (const base of [real.url, await d.baseUrl('alertmanager')]) {
      const r = await fetch(`${base}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alerts) });
      expect(r.status).toBe(200);
    }
    const want = HTML_CASES.length + TEXT_CASES.length - FAILING.length;
    const end = Date.now() + 15_000;
    while (Date.now() < end && (Object.keys(got.real!).length < want || Object.keys(got.ctl!).length < Object.keys(got.real!).length)) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 1500));
    for (const k of Object.keys(got.real!)) if (got.real![k] !== got.ctl![k]) console.log(k, JSON.stringify({ real: got.real![k], ctl: got.ctl![k] }));
    expect(got.ctl).toEqual(got.real);
    expect(Object.keys(got.real!).sort()).toEqual([...HTML_CASES.map((_, n) => `h${n}`), ...TEXT_CASES.map((_, n) => `t${n}`).filter((k) => !FAILING.includes(k))].sort());
    // The failed notifications are counted alike (telegram's empty messages are not failures in 0.25).
    const failed = async (base: string) => {
      const text = await (await fetch(`${base}/metrics`)).text();
      return ['discord', 'telegram'].map((i) => new RegExp(`^alertmanager_notifications_failed_total\\{integration="${i}"\\} (\\d+)`, 'm').exec(text)?.[1]);
    };
    const [r, c] = [await failed(real.url), await failed(await d.baseUrl('alertmanager'))];
    // (0.25 lists every integration's counter from the start; ctl once it has counted)
    expect(c.map((x) => Number(x ?? 0))).toEqual(r.map((x) => Number(x ?? 0)));
    expect(Number(r[0])).toBe(FAILING.length);
  });
});
