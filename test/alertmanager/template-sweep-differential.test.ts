/**
 * A broad template sweep, differential: many expressions (time.Time methods and every layout
 * element, zones and offsets as posted, fmt verbs with widths and precisions on ints, floats,
 * strings, bools, maps and slices, the builtin and Alertmanager functions, the notification data)
 * rendered by the real Alertmanager 0.25 and by ctl for the same alerts, compared byte for byte.
 * Expressions are batched several to a discord message (`/discord/b<N>`, one sink request per
 * batch keeps the run short); expressions 0.25 fails on each have a message of their own
 * (`/discord/e<N>`), and neither side may send it. The alerts' times are posted with `Z`, numeric
 * offsets and `+00:00`: the webhook payload's and the API's times are compared too, and the API's
 * again after a later post merged into the alerts. A difference is listed expression by expression.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { alertmanagerBinary, startRealAlertmanager, type RealAlertmanager } from './real-alertmanager.js';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

const bin = alertmanagerBinary();
const EXTERNAL = 'http://am.example:9093';

/** Per alert (range .Alerts): the time's methods and layouts, for .StartsAt and .EndsAt. */
const T = (x: string) => [
  `{{ ${x} }}`,
  `{{ ${x}.String }}|{{ ${x}.Location }}|{{ ${x}.UTC }}|{{ ${x}.IsZero }}`,
  `{{ ${x}.Year }} {{ ${x}.Month }} {{ printf "%d %v %s %q" ${x}.Month ${x}.Month ${x}.Month ${x}.Month }} {{ ${x}.Day }} {{ ${x}.Weekday }} {{ printf "%d" ${x}.Weekday }} {{ ${x}.YearDay }}`,
  `{{ ${x}.Hour }}:{{ ${x}.Minute }}:{{ ${x}.Second }}.{{ ${x}.Nanosecond }} {{ ${x}.Unix }} {{ ${x}.UnixMilli }} {{ ${x}.UnixMicro }} {{ ${x}.UnixNano }}`,
  `{{ ${x}.Format "Mon Jan _2 15:04:05 2006" }}|{{ ${x}.Format "Monday, 02-Jan-06 15:04:05 MST" }}|{{ ${x}.Format "3:04PM" }}|{{ ${x}.Format "03:04:05 pm" }}`,
  `{{ ${x}.Format "2006-01-02T15:04:05.000Z07:00" }}|{{ ${x}.Format "2006-01-02T15:04:05.999999999Z07:00" }}|{{ ${x}.Format ".000000 .999 ,000 ,999999" }}`,
  `{{ ${x}.Format "Z0700 Z07 Z07:00:00 Z070000 -0700 -07 -07:00 -07:00:00 -070000 MST" }}`,
  `{{ ${x}.Format "__2 002 _2006 January Jan 1 01 Monday Mon 2 02 _2 06 15h04m05s 5 4" }}|{{ ${x}.Format "" }}|{{ ${x}.Format "Janu 20061 .0x" }}`,
  `{{ ${x}.Format "RFC3339" }}|{{ printf "%v|%s|%d" ${x} ${x} ${x}.Unix }}`,
  `{{ ${x}.Before $.Alerts.Firing }}`,
];

/** Expressions rendered for the whole notification (one group). */
export const CASES: string[] = [
  ...T('.StartsAt').map((e) => `{{ range .Alerts }}{{ .Labels.n }}: ${e};{{ end }}`).filter((e) => !e.includes('.Before $')),
  ...T('.EndsAt').map((e) => `{{ range .Alerts }}{{ .Labels.n }}: ${e};{{ end }}`).filter((e) => !e.includes('.Before $')),
  '{{ range .Alerts }}{{ .StartsAt.Before .EndsAt }} {{ .StartsAt.After .EndsAt }} {{ .StartsAt.Equal .StartsAt }} {{ .EndsAt.Equal .StartsAt }};{{ end }}',
  '{{ range .Alerts }}{{ .StartsAt.Add 3600000000000 }}|{{ .StartsAt.Sub .EndsAt }}|{{ .StartsAt.AddDate 0 1 1 }};{{ end }}',
  '{{ range .Alerts }}{{ .StartsAt.Local }}|{{ printf "%#v" .StartsAt }}|{{ .StartsAt.GoString }};{{ end }}',
  '{{ range .Alerts }}{{ . }};{{ end }}',
  '{{ .Alerts }}',
  '{{ .Alerts.Firing }}|{{ .Alerts.Resolved }}',
  // fmt verbs on ints
  '{{ printf "%v|%d|%5d|%-5d|%05d|%x|%X|%o|%O|%b|%c|%q|%U|%#U|%+d|% d|%#x|%#o" 42 42 42 42 42 255 255 8 8 5 65 65 128512 65 7 7 255 8 }}',
  '{{ printf "%d|%d|%x|%08.3d|%-8d|%+.3d" -42 9223372036854775807 -255 7 -7 7 }}',
  // floats
  '{{ printf "%v|%v|%v|%v|%v|%v|%v" 1.0 1e6 1e21 0.000001 1.5e-7 123456789.0 100000000000000000000.0 }}',
  '{{ printf "%e|%E|%f|%.2f|%8.3f|%-8.1f|%g|%G|%.3g|%10.4e|%+f|%x" 1234.5678 1234.5678 3.14159 3.14159 3.14159 3.14159 1e21 1e-7 1234.5678 1234.5678 2.5 1.5 }}',
  '{{ 1.5 }} {{ 1e6 }} {{ 3 }} {{ 0x10 }} {{ 1_000 }} {{ 0o17 }} {{ 0b101 }} {{ -0 }} {{ 1.0 }} {{ 2e0 }} {{ .5 }}',
  "{{ 'a' }} {{ printf \"%c|%q|%v|%T\" 'x' 'y' 'z' 'w' }}",
  // strings
  '{{ printf "%s|%q|%x|%X|% x|%10s|%-10s|%.2s|%v|%5.1q|%#q|%+q" "héllo" "a\\"b\\n" "hi" "hi" "hi" "r" "l" "trunc" "s" "abc" "back`q" "é" }}',
  '{{ printf "%d|%t|%x" "str" "str" "é" }}',
  '{{ "tab\\there" }}|{{ `raw\\n` }}|{{ "\\u00e9\\x41" }}',
  // bools
  '{{ printf "%t|%v|%d|%s|%q" true false true false true }}|{{ true }}|{{ not 0 }}',
  // maps, slices
  '{{ printf "%v|%s|%q|%d" .CommonLabels .CommonLabels .CommonLabels .CommonLabels }}',
  '{{ printf "%#v" .CommonLabels }}|{{ printf "%T|%T|%T" .CommonLabels .GroupLabels.Names .Alerts }}',
  '{{ printf "%v|%q|%s|%x|%d|%#v" .GroupLabels.Names .GroupLabels.Names .GroupLabels.Names .GroupLabels.Names .GroupLabels.Names .GroupLabels.Names }}',
  '{{ stringSlice "a" "b c" }}|{{ printf "%q %v %T" (stringSlice "x" "y") (stringSlice) (stringSlice "z") }}',
  '{{ .CommonLabels.Names }}|{{ .CommonLabels.Values }}|{{ .CommonLabels.SortedPairs }}|{{ .CommonLabels.Remove (stringSlice "team") }}',
  '{{ range .CommonLabels.SortedPairs }}{{ .Name }}={{ .Value }},{{ end }}|{{ range $k, $v := .CommonLabels }}{{ $k }}:{{ $v }};{{ end }}',
  '{{ printf "%v" .CommonLabels.SortedPairs }}|{{ printf "%+v" .CommonLabels.SortedPairs }}|{{ printf "%#v" (index .CommonLabels.SortedPairs 0) }}',
  '{{ .GroupLabels }}|{{ .GroupLabels.Names }}|{{ .CommonAnnotations }}|{{ .ExternalURL }}|{{ .Receiver }}|{{ .Status }}',
  // widths, precisions, argument indexes, errors inside fmt
  '{{ printf "%*d|%-*d|%.*f" 5 42 5 42 2 3.14159 }}|{{ printf "%[2]d %[1]d" 1 2 }}|{{ printf "%[3]*.[2]*[1]f|%d" 12.0 2 6 }}|{{ printf "%[2]*d|%[0]d|%[x]d|%[1]5d" 1 2 }}|{{ printf "%*d|%.*d" "a" 1 -3 7 }}',
  '{{ printf "%.0x|%#.3o|%.0d|%-+5d|%+x|%08.3f|%-08d|%#X|%#b" 0 8 0 3 -255 -3.14159 5 255 5 }}|{{ printf "%.3v|%.5x" 7 "abcdef" }}',
  '{{ printf "%e|%.0e|%.1e|%.2e|%g|%.1f|%.2f|%.1f" 2.5 2.5 0.25 1.125 0.000012345 0.05 1.005 0.25 }}',
  '{{ printf "%x|%X|%.2x|%x|%x|%x" 1.0 -0.1 3.14159 0.0 1e300 2.5e-310 }}',
  '{{ printf "%d %d" 1 }}|{{ printf "%d" 1 2 }}|{{ printf "%z" 1 }}|{{ printf "%!" }}|{{ printf "100%%" }}|{{ printf "%" }}|{{ printf "%[5]d" 1 }}',
  '{{ printf "%s" nil }}|{{ printf "%v %d" nil nil }}|{{ print nil }}|{{ printf "%s" .CommonLabels.nope }}',
  '{{ printf "%6.2f%%|%-6.2f|%06.2f|%+06.1f" 12.345 1.0 -1.5 2.25 }}',
  '{{ printf "%v %v" 0.1 0.30000000000000004 }}|{{ printf "%.0f %.0f %.0f" 0.5 1.5 2.5 }}|{{ printf "%g %g" 100000.0 1000000.0 }}',
  '{{ print 1 2 "a" "b" 3 true }}|{{ println "x" 1 2 }}|{{ print }}|{{ print "a" 1 }}',
  // builtins
  '{{ len .Alerts }} {{ len .CommonLabels }} {{ len "héllo" }} {{ index .CommonLabels "alertname" }} {{ index "abc" 1 }} {{ slice "abcdef" 1 3 }} {{ slice "abc" 1 }}',
  '{{ html "<a href=\'x\'>&\\"" }}|{{ js "<a>\'\\"\\\\ \\u2028 =" }}|{{ urlquery "a b&c=d/é" }}|{{ "x y" | urlquery }}',
  '{{ and 1 0 "x" }}|{{ or 0 "" "y" }}|{{ not "" }}|{{ and 1 }}|{{ or 0 }}',
  '{{ eq 1 1 2 }}|{{ eq "a" "b" "a" }}|{{ ne 1 2 }}|{{ lt 1 2 }}|{{ le 2 2 }}|{{ gt 1.5 1.2 }}|{{ ge "b" "a" }}|{{ lt -1 2 }}',
  '{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}|{{ with .CommonLabels.nope }}a{{ else }}b{{ end }}',
  '{{- /* comment */ -}}  x  {{- " y " -}}  z',
  '{{ range $i, $e := .Alerts }}{{ $i }}:{{ $e.Labels.n }},{{ end }}|{{ range .Alerts }}{{ if eq .Labels.n "2" }}{{ break }}{{ end }}{{ .Labels.n }}{{ end }}|{{ range .Alerts }}{{ if eq .Labels.n "1" }}{{ continue }}{{ end }}{{ .Labels.n }}{{ end }}',
  '{{ range .Alerts.Firing }}F{{ .Labels.n }}{{ end }}|{{ range .Alerts.Resolved }}R{{ .Labels.n }}{{ end }}|{{ len .Alerts.Firing }}/{{ len .Alerts.Resolved }}',
  '{{ block "blk" . }}B{{ .Status }}{{ end }}|{{ define "d2" }}D{{ . }}{{ end }}{{ template "d2" 5 }}',
  // Alertmanager functions
  '{{ toUpper "héllo ß ǆ" }}|{{ toLower "HÉLLO İ" }}|{{ title "hello wORLD o\'neil foo-bar x_y 1st" }}',
  '{{ join ", " .GroupLabels.Names }}|{{ join "-" (stringSlice "a" "b") }}|{{ .CommonLabels.Values | join "+" }}',
  '{{ match "^d.*" "disk" }}|{{ match "b+" "abba" }}|{{ match "^(?i)X" "xy" }}',
  '{{ reReplaceAll "(a)(b)" "$2$1" "abab" }}|{{ reReplaceAll "x" "${1}z" "axb" }}|{{ reReplaceAll "(?P<w>\\\\w+)" "<$w>" "hi there" }}|{{ reReplaceAll "" "-" "abc" }}',
  '{{ safeHtml "<b>x</b>" }}|{{ printf "%v %T" (safeHtml "<i>") (safeHtml "y") }}',
  // default templates
  '{{ template "__subject" . }}|{{ template "__alertmanagerURL" . }}',
  '{{ template "__text_alert_list" .Alerts.Firing }}',
  '{{ template "discord.default.message" . }}',
  // more fmt
  '{{ printf "%s|%d|%t|%x" 42 3.5 1 true }}|{{ printf "%c|%c|%q|%q|%q" 128512 -1 128512 7 39 }}',
  '{{ printf "%x|%X|%d" .CommonLabels .GroupLabels .CommonLabels }}|{{ printf "%10.3v|%-10v|%6.2v" 3.14159 "ab" "xyz" }}',
  '{{ printf "%T %T %T %T %T %T" 1 1.5 "s" true nil (index .Alerts 0) }}|{{ printf "%T %T" .Alerts.Firing (index .Alerts 0).StartsAt }}',
  '{{ 1e100 }} {{ -1.5e-10 }} {{ 0x1p-2 }} {{ 1e20 }} {{ 123456789.0 }} {{ 0.000001 }} {{ 0.0000001 }} {{ 9007199254740993 }} {{ -9223372036854775808 }}',
  '{{ printf "%v|%+v" (index .Alerts.Firing 0).Labels (index .Alerts.Firing 0).Labels.SortedPairs }}',
  '{{ printf "%+v" (index .Alerts 1) }}',
  '{{ printf "%#v" (index .Alerts 1) }}',
  '{{ printf "%s|%v|%q" (safeHtml "<b>") (stringSlice "a" "b") .Status }}|{{ printf "%5s|%-5s|%05s|%05d|%05.1f|%06.2d|%05t|%-05d" "ab" "cd" "ef" -3 -2.5 4 true 7 }}',
  '{{ printf "%v %.3e %.10g %g %g %G" 1e-320 123456.789 1.0000000001 1e-5 123456789.0 1e-10 }}',
  '{{ printf "%.1f %.1f %.1f %.1f %.2f %.3f" 0.05 0.15 0.25 0.35 2.675 1.0005 }}',
  '{{ printf "%e %e %.1e %.0e %.0e" 0.0 -1.0 9.95 0.5 1.5 }}',
  // %g's rounding of an exact tie (to even), widths counted in runes, the flags inside %!verb(...), widths per element
  '{{ printf "%.1g|%.2g|%.3g|%.1g|%.1g|%.3g|%.2G|%.1g|%.2g|%.1e" 0.25 0.125 1.125 2.5 0.5 2.675 0.375 -0.25 1250.0 0.25 }}',
  '{{ printf "%5s|%-4s|%3s|%2s|%6q|%-3c|%4v|%-6.1s|" "é" "日本" "😀" "😀😀" "é" 233 "ß" "日本" }}',
  '{{ printf "%5d|%.2d|%-5d|%05d|%+d|%5t|%6x|%7v|%7s|%4d" "x" "abc" "y" "z" 3.5 "q" true nil nil nil }}',
  '{{ printf "%5s|%-3d|%4v|%8v" .GroupLabels.Names .GroupLabels.Names .CommonLabels (stringSlice "a" "é") }}',
  // data
  '{{ index .Alerts 0 | printf "%T" }}|{{ (index .Alerts 0).Labels.SortedPairs }}|{{ range .Alerts }}{{ .Annotations.SortedPairs.Values | join "," }};{{ end }}',
  '{{ .CommonLabels.Remove (stringSlice "alertname") | len }}|{{ .Alerts.Firing | len }}|{{ len .GroupLabels.SortedPairs }}|{{ .GroupLabels.SortedPairs.Names }}',
  '{{ range $i, $p := .CommonLabels.SortedPairs }}{{ $i }}={{ $p }}{{ end }}|{{ range $k, $v := .GroupLabels }}{{ $k }}{{ $v }}{{ end }}|{{ range .Alerts }}{{ .Fingerprint }} {{ .GeneratorURL }} {{ .Status }};{{ end }}',
  // functions, Go's case mappings
  '{{ title "ǆemal ǈ élan" }}|{{ toUpper "ﬀ ŉ ǰ" }}|{{ toLower "ǅ Σ ΑΣ" }}|{{ title "" }}|{{ title "a.b c-d e_f g\th" }}',
  '{{ reReplaceAll "a|" "x" "banana" }}|{{ reReplaceAll "(?i)A" "$0$0" "aA" }}|{{ reReplaceAll `(\\d+)` "<$1>" "a1b22" }}|{{ match "" "" }}|{{ match `\\pL+` "é" }}',
  '{{ urlquery "é" "?" }}|{{ js "é</script>\u0000" }}|{{ html "é<>" 1 }}|{{ print "a" "b" 1 2 "c" }}|{{ println }}|{{ printf "%v" (print 1 2) }}',
  // default templates of other integrations
  '{{ template "slack.default.title" . }}|{{ template "slack.default.text" . }}',
  '{{ template "pagerduty.default.description" . }}|{{ template "opsgenie.default.message" . }}',
  '{{ template "opsgenie.default.description" . }}',
  '{{ template "email.default.subject" . }}|{{ template "pushover.default.title" . }}',
  '{{ template "telegram.default.message" . }}',
  '{{ template "webex.default.message" . }}',
];

/** For alerts posted without startsAt (the times 0.25 picks with time.Now() are in Go's Local zone), the digits of now masked. */
export const NOW_CASE =
  '{{ range .Alerts }}{{ .Labels.n }}: {{ .StartsAt.Location }}|{{ .EndsAt.Location }}|{{ printf "%#v|%v" .StartsAt .EndsAt | reReplaceAll "[0-9]" "N" }};{{ end }}';

/** Expressions 0.25 fails on (the notification is not sent). */
export const ERROR_CASES: string[] = [
  '{{ .Nope }}',
  '{{ index .Alerts 99 }}',
  '{{ date "x" }}',
  '{{ tz "UTC" }}',
  '{{ printf }}',
  '{{ and }}',
  '{{ slice "abc" 5 }}',
  '{{ len 3 }}',
  '{{ (index .Alerts 0).StartsAt.Zone }}',
  '{{ (index .Alerts 0).StartsAt.Date }}',
  '{{ template "nope" }}',
  '{{ lt 1 "a" }}',
  '{{ eq .Alerts 1 }}',
  '{{ (index .Alerts 0).StartsAt.Add "x" }}',
  '{{ humanize 3 }}',
  '{{ match "\\pL+" "é" }}',
  '{{ match "(" "x" }}',
  '{{ reReplaceAll "(" "x" "y" }}',
  '{{ join "," .CommonLabels }}',
  '{{ index .CommonLabels 1 }}',
  '{{ printf "%d" (index .Alerts 0).StartsAt.Nope }}',
  '{{ (index .Alerts 0).StartsAt.AddDate 1 }}',
  '{{ slice .Alerts 1 0 }}',
  '{{ not 1 2 }}',
];

const PER_BATCH = 5;
const SEP = (n: number) => `\n@@${n}@@|`;
const batches: string[][] = [];
for (let i = 0; i < CASES.length; i += PER_BATCH) batches.push(CASES.slice(i, i + PER_BATCH));

function config(sink: string, who: string): string {
  const dc = (text: string, key: string) => `      - webhook_url: ${sink}/${who}/discord/${key}\n        message: ${JSON.stringify(text)}\n`;
  return `global:
  resolve_timeout: 5m
route:
  receiver: sweep
  group_by: [alertname]
  group_wait: 1s
  group_interval: 5m
  repeat_interval: 1h
  routes:
    - matchers: [alertname="Now"]
      receiver: now
receivers:
  - name: now
    discord_configs:
${dc(NOW_CASE, 'now')}  - name: sweep
    webhook_configs:
      - url: ${sink}/${who}/hook
        send_resolved: true
    discord_configs:
${batches.map((b, n) => dc(b.map((e, i) => SEP(i) + e).join(''), `b${n}`)).join('')}${ERROR_CASES.map((e, n) => dc(e, `e${n}`)).join('')}`;
}

/** The times as clients post them: Z, numeric offsets (+00:00 too), nanoseconds. */
export function sweepAlerts(now = Date.now()) {
  const ahead = (ms: number, off: string) => {
    const [sign, hh, mm] = [off[0] === '-' ? -1 : 1, Number(off.slice(1, 3)), Number(off.slice(4, 6))];
    return new Date(now + ms + sign * (hh * 60 + mm) * 60_000).toISOString().replace(/\.(\d+)Z$/, `.$1456${off}`);
  };
  return [
    { labels: { alertname: 'Sweep', n: '1', team: 'a+b' }, annotations: { summary: 'one <b>' }, startsAt: '2026-01-02T03:04:05.123456789Z', endsAt: ahead(3_600_000, 'Z').replace('456Z', '456Z').replace(/Z(?=Z)/, '') },
    { labels: { alertname: 'Sweep', n: '2', team: 'a+b' }, annotations: { summary: 'two' }, startsAt: '2026-03-08T23:59:59.5+02:00', endsAt: ahead(7_200_000, '-05:30') },
    { labels: { alertname: 'Sweep', n: '3', team: 'a+b' }, annotations: { summary: 'three' }, startsAt: '2025-12-31T23:00:00-01:00', endsAt: '2026-01-01T00:30:00.000000001+00:00' },
    { labels: { alertname: 'Sweep', n: '4', team: 'c' }, annotations: { summary: 'four' }, startsAt: '2024-02-29T12:00:00+14:00', endsAt: '2024-02-29T13:00:00.25-09:45' },
  ];
}

describe.skipIf(!bin)('a broad template sweep against the real Alertmanager 0.25', () => {
  let sink: Server;
  const got: Record<string, Record<string, string>> = { real: {}, ctl: {} };
  const hooks: Record<string, any> = {};
  let real: RealAlertmanager;
  let d: TestDaemon;

  beforeAll(async () => {
    sink = createServer((req, res) => {
      let b = '';
      req.on('data', (c) => (b += c));
      req.on('end', () => {
        const m = /^\/(real|ctl)\/(?:hook|discord\/([a-z0-9]+))$/.exec(req.url ?? '');
        if (m && m[2]) got[m[1]!]![m[2]] = JSON.parse(b).embeds[0].description;
        else if (m) hooks[m[1]!] = JSON.parse(b);
        res.end('{}');
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
    await new Promise((r) => sink?.close(r));
  });

  it(`renders ${CASES.length} expressions as 0.25 does, and fails the ${ERROR_CASES.length} it fails`, async () => {
    const alerts = sweepAlerts();
    const bases = { real: real.url, ctl: await d.baseUrl('alertmanager') };
    for (const base of Object.values(bases)) {
      const r = await fetch(`${base}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alerts) });
      expect(r.status).toBe(200);
    }
    const end = Date.now() + 20_000;
    const done = () => Object.keys(got.real!).length + Object.keys(got.ctl!).length;
    while (Date.now() < end && (!hooks.real || !hooks.ctl || Object.keys(got.ctl!).length < Object.keys(got.real!).length || Object.keys(got.real!).length < batches.length)) await new Promise((r) => setTimeout(r, 200));
    const before = done();
    await new Promise((r) => setTimeout(r, 1500));
    expect(done()).toBe(before);

    // Split each message back into its expressions.
    const split = (text: string | undefined) => {
      const out: Record<number, string> = {};
      for (const part of (text ?? '').split(/\n@@(?=\d+@@\|)/).slice(1)) {
        const m = /^(\d+)@@\|([\s\S]*)$/.exec(part)!;
        out[Number(m[1])] = m[2]!;
      }
      return out;
    };
    const diffs: string[] = [];
    batches.forEach((b, n) => {
      const [r, c] = [split(got.real![`b${n}`]), split(got.ctl![`b${n}`])];
      b.forEach((e, i) => {
        if (r[i] === undefined) diffs.push(`not rendered by 0.25: ${e}`);
        else if (r[i] !== c[i]) diffs.push(`${e}\n  0.25: ${JSON.stringify(r[i])}\n  ctl:  ${JSON.stringify(c[i])}`);
      });
    });
    ERROR_CASES.forEach((e, n) => {
      if (got.real![`e${n}`] !== got.ctl![`e${n}`]) diffs.push(`${e}\n  0.25: ${JSON.stringify(got.real![`e${n}`])}\n  ctl:  ${JSON.stringify(got.ctl![`e${n}`])}`);
    });
    if (diffs.length) console.log(`${diffs.length} of ${CASES.length + ERROR_CASES.length} differ:\n${diffs.join('\n')}`);

    // The webhook's times as posted (offsets kept).
    const times = (hook: any) => Object.fromEntries((hook?.alerts ?? []).map((a: any) => [a.labels.n, [a.status, a.startsAt, a.endsAt]]));
    const [hr, hc] = [times(hooks.real), times(hooks.ctl)];
    if (JSON.stringify(hr) !== JSON.stringify(hc)) console.log('webhook times differ', JSON.stringify({ real: hr, ctl: hc }));
    // The API's times.
    const api = async (base: string) => {
      const list = (await (await fetch(`${base}/api/v2/alerts`)).json()) as { labels: { alertname: string; n: string }; startsAt: string; endsAt: string; updatedAt: string }[];
      return Object.fromEntries(list.filter((a) => a.labels.alertname === 'Sweep').map((a) => [a.labels.n, [a.startsAt, a.endsAt]]));
    };
    const [ar, ac] = [await api(bases.real), await api(bases.ctl)];
    if (JSON.stringify(ar) !== JSON.stringify(ac)) console.log('API times differ', JSON.stringify({ real: ar, ctl: ac }));
    expect(diffs).toEqual([]);
    expect(hc).toEqual(hr);
    expect(ac).toEqual(ar);
    // What 0.25 printed (so a change on both sides cannot pass unnoticed).
    expect(hr['4']).toEqual(['resolved', '2024-02-29T12:00:00+14:00', '2024-02-29T13:00:00.25-09:45']);
    expect(ar['2']![0]).toBe('2026-03-08T23:59:59.500+02:00');

    // Times 0.25 picks itself: Local (alert 1 has neither time, alert 2 starts at its posted endsAt, in UTC).
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const now = [{ labels: { alertname: 'Now', n: 'now1' } }, { labels: { alertname: 'Now', n: 'now2' }, endsAt: future }];
    for (const base of Object.values(bases)) {
      const r = await fetch(`${base}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(now) });
      expect(r.status).toBe(200);
    }
    const nowEnd = Date.now() + 20_000;
    while (Date.now() < nowEnd && (!got.real!.now || !got.ctl!.now)) await new Promise((r) => setTimeout(r, 200));
    expect(got.real!.now).toContain('now1: Local|UTC|time.Date(');
    expect(got.ctl!.now).toBe(got.real!.now);

    // Merged with later posts: the earlier start and the later end are kept, each in its zone.
    const later = sweepAlerts();
    later[0]!.startsAt = '2026-01-02T09:00:00+05:00';
    later[1]!.startsAt = '2026-03-08T17:00:00.25-03:00';
    const localEnd = later[1]!.endsAt.replace(/-05:30$/, '');
    later[1]!.endsAt = new Date(Date.parse(localEnd + 'Z') + 5.5 * 3_600_000 + 60_000).toISOString().replace(/Z$/, '+00:00');
    for (const base of Object.values(bases)) {
      const r = await fetch(`${base}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(later.slice(0, 2)) });
      expect(r.status).toBe(200);
    }
    const [mr, mc] = [await api(bases.real), await api(bases.ctl)];
    expect(mc).toEqual(mr);
    expect(mr['1']![0]).toBe('2026-01-02T03:04:05.123Z');
    expect(mr['2']![0]).toBe('2026-03-08T17:00:00.250-03:00');
  }, 60_000);
});
