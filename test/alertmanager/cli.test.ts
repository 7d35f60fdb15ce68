/** `ctl silence|alert|config` through the daemon's control socket. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { NOTES_CONFIG } from './harness.js';

let d: TestDaemon;
beforeAll(async () => {
  d = await startDaemon({ files: { 'alertmanager.yml': NOTES_CONFIG } });
});
afterAll(async () => {
  await d?.cleanup();
});

describe('ctl alert', () => {
  it('adds and queries alerts', async () => {
    expect((await d.cli(['alert', 'add', 'CliA', 'team=a', '--annotation', 'summary=hello there'])).code).toBe(0);
    expect((await d.cli(['alert', 'add', 'CliB', 'severity=critical', 'service=db1', '--generator-url', 'http://127.0.0.1/g'])).code).toBe(0);
    const q = await d.cli(['alert', 'query']);
    expect(q.code).toBe(0);
    expect(q.stdout).toMatch(/^ALERTNAME\s+STARTS AT\s+SUMMARY\s+STATE\s+LABELS\n/);
    expect(q.stdout).toMatch(/CliA\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\s+hello there\s+active\s+team="a"/);
    const json = await d.cli(['alert', 'query', 'CliB', '-o', 'json']);
    const list = JSON.parse(json.stdout);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ labels: { alertname: 'CliB' }, generatorURL: 'http://127.0.0.1/g', receivers: [{ name: 'pager' }] });
    expect((await d.cli(['alert', 'query', '-r', 'team-.*', '-q'])).stdout.trim().split('\n')).toHaveLength(1);
    const groups = await d.cli(['alert', 'groups']);
    expect(groups.stdout).toMatch(/team-ab\s+alertname="CliA"\s+1\s+0/);
  });
  it('rejects bad input with exit 1 (API) or 2 (usage)', async () => {
    const bad = await d.cli(['alert', 'add', 'X', '1bad=x']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('invalid label set: invalid name \\"1bad\\"'.replace(/\\"/g, '"'));
    expect((await d.cli(['alert', 'add', 'X', 'novalue'])).code).toBe(2);
    expect((await d.cli(['alert', 'query', 'a=~(x'])).code).toBe(1);
  });
});

describe('ctl silence', () => {
  it('add, query, update, expire, import', async () => {
    const add = await d.cli(['silence', 'add', 'alertname=CliA', 'team=~"a|b"', '-c', 'maintenance', '-a', 'ops', '-d', '2h']);
    expect(add.code).toBe(0);
    const id = add.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    let q = await d.cli(['silence', 'query']);
    expect(q.stdout).toContain(`${id}  alertname="CliA" team=~"a|b"  active`);
    expect((await d.cli(['silence', 'query', '-q', 'alertname=CliA'])).stdout.trim()).toBe(id);
    expect((await d.cli(['silence', 'query', '-q', 'alertname=Other'])).stdout.trim()).toBe('');
    const alerts = await d.cli(['alert', 'query', '-s', '-o', 'json']);
    expect(JSON.parse(alerts.stdout)[0].status.silencedBy).toEqual([id]);

    const up = await d.cli(['silence', 'update', id, '-c', 'longer', '-d', '3h', '-q']);
    expect(up.stdout.trim()).toBe(id);
    q = await d.cli(['silence', 'query', '-o', 'json']);
    expect(JSON.parse(q.stdout)[0].comment).toBe('longer');

    expect((await d.cli(['silence', 'expire', id])).code).toBe(0);
    expect((await d.cli(['silence', 'query', '-q'])).stdout.trim()).toBe('');
    expect((await d.cli(['silence', 'query', '--expired', '-q'])).stdout.trim()).toBe(id);
    const missing = await d.cli(['silence', 'expire', '00000000-0000-4000-8000-000000000000']);
    expect([missing.code, missing.stderr.trim()]).toEqual([1, 'Error: silence 00000000-0000-4000-8000-000000000000 not found']);

    // import: a known id is updated in place or replaced, an unknown id is created anew
    const file = join(d.dir, 'silences.json');
    const end = new Date(Date.now() + 3_600_000).toISOString();
    writeFileSync(
      file,
      JSON.stringify([
        { id: '00000000-0000-4000-8000-000000000001', matchers: [{ name: 'job', value: 'x', isRegex: false, isEqual: true }], startsAt: new Date().toISOString(), endsAt: end, createdBy: 'me', comment: 'imported' },
      ]),
    );
    const imp = await d.cli(['silence', 'import', file]);
    expect([imp.code, imp.stdout]).toEqual([0, 'imported 1 of 1 silences\n']);
    expect((await d.cli(['silence', 'query', 'job=x', '-o', 'json'])).stdout).toContain('"comment": "imported"');
  });
  it('usage errors exit 2', async () => {
    expect((await d.cli(['silence', 'add', 'a=b'])).code).toBe(2); // no comment
    expect((await d.cli(['silence', 'add', 'a=b', '-c', 'x', '-d', 'soon'])).code).toBe(2);
  });
});

describe('ctl config', () => {
  it('show, routes, routes test', async () => {
    const show = await d.cli(['config', 'show']);
    expect(show.stdout).toContain('receiver: team-a');
    const routes = await d.cli(['config', 'routes']);
    expect(routes.stdout).toBe(
      'Routing tree:\n.\n└── default-route  receiver: default\n    ├── {team="a"}  continue: true  receiver: team-a\n    ├── {team=~"a|b"}  receiver: team-ab\n    └── {service=~"^(?:db.*)$",severity="critical"}  receiver: pager\n',
    );
    expect((await d.cli(['config', 'routes', 'test', 'team=a'])).stdout).toBe('team-a,team-ab\n');
    expect((await d.cli(['config', 'routes', 'test', 'severity=critical', 'service=db7'])).stdout).toBe('pager\n');
    const verify = await d.cli(['config', 'routes', 'test', '--verify-receivers', 'pager', 'team=a']);
    expect(verify.code).toBe(1);
    const ok = await d.cli(['config', 'routes', 'test', '--verify-receivers', 'team-a,team-ab', 'team=a']);
    expect(ok.code).toBe(0);
  });
  it('exit 3 when the daemon is unreachable', async () => {
    const r = await d.cli(['--socket', join(d.dir, 'nope.socket'), 'silence', 'query']);
    expect(r.code).toBe(3);
  });
});
