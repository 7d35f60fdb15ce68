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
    { status: 'firing', labels: { alertname: 'DiskFull', instance: 'db1:9100', severity: 'page', job: 'node' }, annotations: { summary: 'Disk <90%> & "full"', runbook: 'http://r/x?a=1&b=2' }, startsAt: '2026-01-02T03:04:05.123Z', endsAt: '0001-01-01T00:00:00Z', generatorURL: 'http://prom/graph?g0.expr=up', fingerprint: 'abc123' },
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
];

describe.skipIf(!amtool)('Go templates against amtool (Alertmanager 0.25)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ctl-tmpl-'));
  const dataFile = join(dir, 'data.json');
  writeFileSync(dataFile, JSON.stringify(DATA));
  const input: DataInput = { ...(DATA as unknown as DataInput), alerts: DATA.alerts.map((a) => ({ ...a, status: a.status as 'firing' | 'resolved', startsAt: Date.parse(a.startsAt), endsAt: Date.parse(a.endsAt) })) };

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
