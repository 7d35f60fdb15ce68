/**
 * ctl's default notification texts against Alertmanager 0.25's: `amtool template render` with the
 * default.tmpl the Debian package installs renders every default name, for several groups (firing
 * and resolved together, resolved only with common annotations, firing only with extra common
 * labels); ctl must produce the same bytes.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { templateData, type DataInput } from '../../src/alertmanager/template/data.js';
import { UPSTREAM_DEFAULT_NAMES } from '../../src/alertmanager/template/defaults.js';
import { defaultTemplates, loadTemplateFiles } from '../../src/alertmanager/template/load.js';
import { amtoolBinary } from './real-alertmanager.js';

const amtool = amtoolBinary();
const UPSTREAM = '/usr/share/prometheus/alertmanager/default.tmpl';

const alert = (status: string, labels: Record<string, string>, annotations: Record<string, string>, generatorURL = 'http://prom/graph?g0.expr=up') => ({
  status,
  labels,
  annotations,
  startsAt: '2026-01-02T03:04:05.123Z',
  endsAt: status === 'firing' ? '0001-01-01T00:00:00Z' : '2026-01-02T04:00:00Z',
  generatorURL,
  fingerprint: 'f' + Object.values(labels).join('').length,
});

const GROUPS = {
  mixed: {
    receiver: 'team-<x> & co',
    status: 'firing',
    alerts: [
      alert('firing', { alertname: 'DiskFull', instance: 'db1:9100', severity: 'page' }, { summary: 'Disk <90%> & "full"' }),
      alert('resolved', { alertname: 'DiskFull', instance: 'db2:9100', severity: 'page' }, { summary: 'ok' }, ''),
    ],
    groupLabels: { alertname: 'DiskFull' },
    commonLabels: { alertname: 'DiskFull', severity: 'page' },
    commonAnnotations: {},
    externalURL: 'http://am.example:9093',
  },
  resolved: {
    receiver: 'ops',
    status: 'resolved',
    alerts: [alert('resolved', { alertname: 'Down', job: 'api' }, { summary: 'api down', runbook: 'r/1' })],
    groupLabels: { job: 'api', alertname: 'Down' },
    commonLabels: { alertname: 'Down', job: 'api' },
    commonAnnotations: { summary: 'api down', runbook: 'r/1' },
    externalURL: 'https://am/prefix',
  },
  firing: {
    receiver: 'pager',
    status: 'firing',
    alerts: [
      alert('firing', { alertname: 'Hot', zone: 'b', rack: '7' }, { description: 'too hot' }),
      alert('firing', { alertname: 'Hot', zone: 'b', rack: '9' }, { description: 'too hot' }),
    ],
    groupLabels: {},
    commonLabels: { alertname: 'Hot', zone: 'b' },
    commonAnnotations: { description: 'too hot' },
    externalURL: 'http://am:9093',
  },
};

function input(g: (typeof GROUPS)[keyof typeof GROUPS]): DataInput {
  return {
    ...(g as unknown as DataInput),
    alerts: g.alerts.map((a) => ({ ...a, status: a.status as 'firing' | 'resolved', startsAt: Date.parse(a.startsAt), endsAt: Date.parse(a.endsAt) })),
  };
}

describe.skipIf(!amtool || !existsSync(UPSTREAM))('default templates against Alertmanager 0.25', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ctl-default-tmpl-'));
  const ours = defaultTemplates();

  for (const [groupName, group] of Object.entries(GROUPS)) {
    const dataFile = join(dir, `${groupName}.json`);
    writeFileSync(dataFile, JSON.stringify(group));
    for (const name of UPSTREAM_DEFAULT_NAMES) {
      it(`${name} (${groupName})`, () => {
        // The alert-list templates take a list of alerts, as their callers pass them.
        const dot = name === '__text_alert_list' || name === 'pagerduty.default.instances' ? '.Alerts' : '.';
        const text = `{{ template "${name}" ${dot} }}`;
        const r = spawnSync(amtool!, ['template', 'render', `--template.glob=${UPSTREAM}`, `--template.text=${text}`, `--template.data=${dataFile}`], { encoding: 'utf8', timeout: 20_000 });
        expect(r.status, r.stderr).toBe(0);
        const mine = ours.parse('_', text).execute('_', templateData(input(group), 'amtool'));
        expect(mine).toBe(r.stdout);
      });
    }
  }

  it('cleans up', () => rmSync(dir, { recursive: true, force: true }));
});

describe('default templates', () => {
  it('a user file can redefine a default name, and other defaults call the new text', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctl-user-tmpl-'));
    try {
      writeFileSync(join(dir, 'mine.tmpl'), '{{ define "__subject" }}custom {{ .Status }}{{ end }}');
      const t = loadTemplateFiles([join(dir, '*.tmpl')]);
      const data = templateData(input(GROUPS.resolved), 'amtool');
      expect(t.parse('_', '{{ template "slack.default.title" . }}|{{ template "email.default.subject" . }}').execute('_', data)).toBe('custom resolved|custom resolved');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the e-mail HTML is 0.25’s page: values escaped as html/template escapes them, firing then resolved alerts', () => {
    // Byte for byte against 0.25 in email-differential.test.ts; here the parts that depend on the data.
    const html = defaultTemplates().execute('email.default.html', templateData(input(GROUPS.mixed)), { html: true });
    expect(html.startsWith('\n\n<!DOCTYPE html PUBLIC')).toBe(true);
    expect(html.endsWith('</body>\n</html>\n\n')).toBe(true);
    expect(html).toContain('summary = Disk &lt;90%&gt; &amp; &#34;full&#34;<br');
    expect(html).toContain('2 alerts for \n                alertname=DiskFull\n              \n            </td>');
    expect(html.indexOf('[1] Firing</strong>')).toBeLessThan(html.indexOf('[1] Resolved</strong>'));
    expect(html).not.toContain('<90%>');
  });

  it('the e-mail page calls __subject, __alertmanagerURL and __alertmanager, so a redefinition shows in it', () => {
    const t = defaultTemplates().parse('mine.tmpl', '{{ define "__subject" }}my subject{{ end }}{{ define "__alertmanager" }}AM{{ end }}');
    const html = t.execute('email.default.html', templateData(input(GROUPS.mixed)), { html: true });
    expect(html).toContain('<title>my subject</title>');
    expect(html).toContain('>View in AM</a>');
    expect(html).toContain('>Sent by AM</a>');
  });

  it('Teams text lists each alert description by state', () => {
    const text = defaultTemplates().execute('msteams.default.text', templateData(input(GROUPS.firing), 'amtool'));
    expect(text).toBe('\n\n# Alerts Firing:\n - too hot\n - too hot\n\n\n\n');
  });
});
