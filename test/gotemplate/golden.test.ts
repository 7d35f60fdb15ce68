/**
 * Golden tests of the Go template engine and Alertmanager's template data, against the real thing:
 * `amtool template render` (Alertmanager 0.25) renders each case; ctl must render the same bytes.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Templates } from '../../src/gotemplate/index.js';
import { ALERTMANAGER_FUNCS, templateData, type DataInput } from '../../src/alertmanager/template/data.js';
import { amtoolBinary } from '../alertmanager/real-alertmanager.js';

const amtool = amtoolBinary();

const DATA = {
  receiver: 'team-<x>',
  status: 'firing',
  alerts: [
    { status: 'firing', labels: { alertname: 'DiskFull', instance: 'db1:9100', severity: 'page', job: 'node' }, annotations: { summary: 'Disk <90%> & "full"', runbook: 'http://r/x?a=1&b=2' }, startsAt: '2026-01-02T15:04:05.123456789Z', endsAt: '0001-01-01T00:00:00Z', generatorURL: 'http://prom/graph?g0.expr=up', fingerprint: 'abc123' },
    { status: 'resolved', labels: { alertname: 'DiskFull', instance: 'db2:9100', severity: 'page', job: 'node' }, annotations: { summary: 'ok' }, startsAt: '2026-01-02T03:00:00Z', endsAt: '2026-01-02T04:00:00Z', generatorURL: '', fingerprint: 'def456' },
  ],
  groupLabels: { alertname: 'DiskFull' },
  commonLabels: { alertname: 'DiskFull', severity: 'page', job: 'node' },
  commonAnnotations: {},
  externalURL: 'http://am.example:9093',
};

const CASES = [
  '{{ .Receiver }} {{ .Status }} {{ .ExternalURL }}',
  '{{ len .Alerts }} {{ len .Alerts.Firing }} {{ len .Alerts.Resolved }}',
  '{{ range .Alerts }}[{{ .Status }} {{ .Labels.instance }} {{ .Annotations.summary }}]{{ end }}',
  '{{ range $i, $a := .Alerts }}{{ $i }}:{{ $a.Fingerprint }} {{ end }}',
  '{{ .CommonLabels.SortedPairs }} {{ .CommonLabels.Names }} {{ .CommonLabels.Values }}',
  '{{ range .CommonLabels.SortedPairs }}{{ .Name }}={{ .Value }};{{ end }}',
  '{{ (.CommonLabels.Remove .GroupLabels.Names).SortedPairs }}',
  '{{ .CommonLabels }} {{ .GroupLabels }} {{ .CommonAnnotations }}',
  '{{ range .Alerts }}{{ .StartsAt }}|{{ .EndsAt }}|{{ .StartsAt.Format "2006-01-02 15:04" }}{{ "\\n" }}{{ end }}',
  '{{ if eq .Status "firing" }}F{{ else }}R{{ end }}{{ if gt (len .Alerts.Firing) 1 }}many{{ else if eq (len .Alerts.Firing) 1 }}one{{ else }}none{{ end }}',
  '{{ with .CommonAnnotations.summary }}has {{ . }}{{ else }}no summary{{ end }}',
  '{{ .CommonLabels.missing }}|{{ index .CommonLabels "severity" }}|{{ index .Alerts 0 | printf "%T" }}',
  '{{ toUpper .Status }} {{ toLower "ABC" }} {{ title "hello wide world" }} {{ join ", " .GroupLabels.Values }}',
  '{{ match "^Disk" .GroupLabels.alertname }} {{ reReplaceAll "(db)(\\\\d)" "$2-$1" "db1 db2" }} {{ safeHtml "<b>" }} {{ stringSlice "a" "b" }}',
  '{{ printf "%s|%q|%5s|%-5s|%d|%05d|%x|%.2f|%v|%t|%%" "s" "q\\"" "ab" "ab" 42 42 255 3.14159 .GroupLabels true }}',
  '{{ print "a" 1 2 "b" }} {{ println "x" 1 }}{{ html "<a href=\'x\'>&</a>" }} {{ urlquery "a b&c=d/é" }} {{ js "a\'b\\"c<d>" }}',
  '{{- /* trim */ -}}   a   {{- " b " -}}   c   ',
  '{{ $x := "one" }}{{ $x }}{{ $x = "two" }}{{ $x }}{{ range .Alerts }}{{ $x }}{{ end }}',
  '{{ define "t" }}<{{ . }}>{{ end }}{{ template "t" .Status }}{{ template "t" }}{{ block "b" .Receiver }}[{{ . }}]{{ end }}',
  '{{ range .Alerts }}{{ if eq .Status "resolved" }}{{ break }}{{ end }}{{ .Fingerprint }}{{ end }}|{{ range .Alerts }}{{ if eq .Status "firing" }}{{ continue }}{{ end }}{{ .Fingerprint }}{{ end }}',
  '{{ and 1 0 "x" }} {{ or 0 "" "y" }} {{ not .Alerts }} {{ and .Alerts .Receiver }} {{ or .CommonAnnotations "empty" }}',
  '{{ len "héllo" }} {{ slice "abcdef" 1 3 }} {{ index "abc" 1 }} {{ 1.5 }} {{ 0x1F }} {{ 1e3 }} {{ \'a\' }}',
  '{{ range $k, $v := .CommonLabels }}{{ $k }}:{{ $v }} {{ end }}|{{ range .CommonAnnotations }}x{{ else }}empty{{ end }}',
  '{{ .Alerts.Firing }}',
  '{{ eq .Status "a" "b" "firing" }} {{ ne 1 2 }} {{ le 2 2 }} {{ ge "b" "a" }} {{ lt 1.5 2.5 }}',
  // Go value formatting: the data itself, fmt verbs, %T of every type, Go syntax.
  '{{ . }}',
  '{{ printf "%T|%T|%T|%T|%T|%T|%T|%T|%T" . .Alerts .Alerts.Firing .GroupLabels (index .Alerts 0).StartsAt .CommonLabels.SortedPairs (index .CommonLabels.SortedPairs 0) (stringSlice "a") (safeHtml "x") }}',
  '{{ printf "%s|%d|%v|%x|%q|%U|%5.1f|%g|%e|%v|%t|%s|%d|%c|%08.3f|%+d|%x|%X|%o|%b" 42 "s" 1.23456789e8 "hi" 65 65 3.14159 1e21 123456.0 1e-5 1 true 2.5 9731 -3.14159 5 255 255 8 5 }}',
  '{{ 1e6 }} {{ 1.5e6 }} {{ 100000.5 }} {{ 0.0001 }} {{ 0.00001 }} {{ 1e20 }} {{ -2.5 }} {{ 1e3 }} {{ printf "%v %v %.3g %g" 1234567.0 1e6 1234567.0 0.5 }}',
  '{{ printf "%#v|%+v|%#v|%#v|%#v|%#v" .GroupLabels (index .CommonLabels.SortedPairs 0) "q" 42 (stringSlice "a" "b") true }}',
  '{{ printf "%v|%s|%q" .Alerts.Firing .CommonLabels.Values (stringSlice "a" "b") }} {{ printf "%d %s" }} {{ printf "%d" 1 2 }}',
  // time.Time: methods and every layout element.
  '{{ with (index .Alerts 0).StartsAt }}{{ .Year }}|{{ .Month }}|{{ printf "%d" .Month }}|{{ .Day }}|{{ .Weekday }}|{{ .YearDay }}|{{ .Hour }}|{{ .Minute }}|{{ .Second }}|{{ .Nanosecond }}|{{ .Unix }}|{{ .UnixNano }}|{{ .IsZero }}|{{ .UTC }}{{ end }}',
  '{{ with (index .Alerts 0).StartsAt }}{{ .Format "Mon Monday Jan January 1 01 2 _2 02 __2 002 3 03 15 4 04 5 05 06 2006 PM pm MST -0700 -07:00 -07 Z0700 Z07:00 Z07 .000 .999 .000000000 .999999999 ,000 .9 .0" }}{{ end }}',
  '{{ range .Alerts }}{{ .StartsAt.Format "2006-01-02T15:04:05.999999999Z07:00" }} {{ .EndsAt.Format "Jan _2 3:04:05.000PM" }} {{ .EndsAt.IsZero }} {{ .EndsAt.YearDay }} {{ .StartsAt.Format "_2006 __2" }};{{ end }}',
  '{{ $a := index .Alerts 0 }}{{ $b := index .Alerts 1 }}{{ $a.StartsAt.Before $b.StartsAt }} {{ $a.StartsAt.After $b.StartsAt }} {{ $a.StartsAt.Equal $a.StartsAt }} {{ eq $a.StartsAt.Month 1 }}',
  // Go's case mappings, title's word rules, regexp.Expand, js.
  '{{ title "hello wORLD o\'neil x-y_z ßtraße ǆx 3rd a1b hello.world a..b a:b (ab) ΣΑΣ ﬁne" }}|{{ toUpper "ßǆﬁŉ straße" }}|{{ toLower "ΣİKǅ" }}',
  '{{ reReplaceAll `(?P<w>\\w+) (\\w+)` "${w}-$2W-$1W-${2}x-$$-$9-$" "ab cd ef gh" }}|{{ reReplaceAll "a*" "-" "baaac" }}|{{ reReplaceAll "(x)" "${1" "axb" }}',
  '{{ js "a\u2028b\u2029c<>&=\'\\\"\u0001\u007f\u00a0é" }}|{{ urlquery "a b&c=d/é~" }}|{{ html "<a href=\'x\'>+</a>" }}',
];

describe.skipIf(!amtool)('Go templates against amtool (Alertmanager 0.25)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ctl-tmpl-'));
  const dataFile = join(dir, 'data.json');
  writeFileSync(dataFile, JSON.stringify(DATA));
  // Nanoseconds past the millisecond, which Date.parse drops.
  const subMs = (t: string) => Number((/\.\d{3}(\d{1,6})Z$/.exec(t)?.[1] ?? '').padEnd(6, '0'));
  const input: DataInput = {
    ...(DATA as unknown as DataInput),
    alerts: DATA.alerts.map((a) => ({ ...a, status: a.status as 'firing' | 'resolved', startsAt: Date.parse(a.startsAt), endsAt: Date.parse(a.endsAt), startsAtNs: subMs(a.startsAt), endsAtNs: subMs(a.endsAt) })),
  };

  CASES.forEach((text, n) => {
    it(`case ${n}: ${text.slice(0, 60)}`, () => {
      const r = spawnSync(amtool!, ['template', 'render', `--template.glob=${join(dir, 'none.tmpl')}`, `--template.text=${text}`, `--template.data=${dataFile}`], { encoding: 'utf8', timeout: 20_000 });
      expect(r.status, r.stderr).toBe(0);
      const ours = new Templates(ALERTMANAGER_FUNCS).parse('_', text).execute('_', templateData(input, 'amtool'));
      // amtool prints the rendered text as it is.
      expect(ours).toBe(r.stdout);
    });
  });

  it('cleans up', () => rmSync(dir, { recursive: true, force: true }));
});
