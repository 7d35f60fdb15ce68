/**
 * End to end through the real daemon (`ctl serve`): the alertmanager server on the control socket
 * (Host: alertmanager) and on its TCP listener, persistence across kill -9, SIGHUP and
 * POST /-/reload.
 */
import { readFileSync, writeFileSync } from 'node:fs';
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

const iso = (ms: number) => new Date(ms).toISOString();

describe('alertmanager through the daemon', () => {
  it('serves the same API on the socket and on TCP', async () => {
    const viaSocket = await d.request('alertmanager', 'GET', '/api/v2/receivers');
    expect(viaSocket.status).toBe(200);
    expect(viaSocket.json.map((r: { name: string }) => r.name)).toEqual(['default', 'team-a', 'team-ab', 'pager']);
    const base = await d.baseUrl('alertmanager');
    const viaTcp = await fetch(`${base}/api/v2/receivers`);
    expect(await viaTcp.text()).toBe(viaSocket.text);
    const status = await d.request('alertmanager', 'GET', '/api/v2/status');
    expect(status.json.cluster).toEqual({ peers: [], status: 'disabled' });
    expect(status.json.versionInfo.version).toBe('0.25.0');
  });

  it('keeps alerts and silences across kill -9', async () => {
    let r = await d.request('alertmanager', 'POST', '/api/v2/alerts', [
      { labels: { alertname: 'Persist', team: 'a' }, endsAt: iso(Date.now() + 3_600_000) },
      { labels: { alertname: 'Persist2' } },
    ]);
    expect(r.status).toBe(200);
    r = await d.request('alertmanager', 'POST', '/api/v2/silences', {
      matchers: [{ name: 'alertname', value: 'Persist', isRegex: false }],
      startsAt: iso(Date.now()),
      endsAt: iso(Date.now() + 3_600_000),
      createdBy: 'e2e',
      comment: 'survives',
    });
    expect(r.status).toBe(200);
    const id = r.json.silenceID;
    const before = (await d.request('alertmanager', 'GET', '/api/v2/alerts')).json;
    await d.kill9();
    await d.start();
    const after = (await d.request('alertmanager', 'GET', '/api/v2/alerts')).json;
    expect(after).toEqual(before);
    const sil = await d.request('alertmanager', 'GET', `/api/v2/silence/${id}`);
    expect(sil.status).toBe(200);
    expect(sil.json.comment).toBe('survives');
    expect(after.find((a: { labels: { alertname: string } }) => a.labels.alertname === 'Persist').status.silencedBy).toEqual([id]);
  });

  it('reloads on SIGHUP and POST /-/reload, keeping the old config on error', async () => {
    const file = join(d.dir, 'alertmanager.yml');
    const good = readFileSync(file, 'utf8');
    writeFileSync(file, 'route:\n  receiver: nope\nreceivers:\n- name: x\n');
    let r = await d.request('alertmanager', 'POST', '/-/reload');
    expect(r.status).toBe(500);
    expect(r.text).toBe('failed to reload config: undefined receiver "nope" used in route\n');
    d.signal('SIGHUP');
    await d.waitLog(/undefined receiver/);
    r = await d.request('alertmanager', 'GET', '/api/v2/receivers');
    expect(r.json.length).toBe(4);

    writeFileSync(file, good.replace('- name: pager', '- name: pager\n  - name: extra'));
    d.signal('SIGHUP');
    for (let i = 0; i < 100; i++) {
      r = await d.request('alertmanager', 'GET', '/api/v2/receivers');
      if (r.json.length === 5) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    expect(r.json.map((x: { name: string }) => x.name)).toContain('extra');
    writeFileSync(file, good);
    r = await d.request('alertmanager', 'POST', '/-/reload');
    expect(r.status).toBe(200);
    expect((await d.request('alertmanager', 'GET', '/api/v2/receivers')).json.length).toBe(4);
    expect((await d.request('alertmanager', 'GET', '/-/healthy')).text).toBe('OK');
  });
});
