/** The behaviour notes' §12 acceptance cases against the component, with a manual clock. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NOTES_CONFIG, NOW, startHarness, type Harness } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness({ config: NOTES_CONFIG });
});
afterEach(async () => {
  await h.close();
});

const iso = (ms: number) => new Date(ms).toISOString();
const H = 3_600_000;
const silence = (over: Record<string, unknown> = {}) => ({
  matchers: [{ name: 'alertname', value: 'R4', isRegex: false }],
  startsAt: iso(NOW - 60_000),
  endsAt: iso(NOW + H),
  createdBy: 'me',
  comment: 'c',
  ...over,
});
const post = (path: string, body: unknown) => h.request('POST', path, body);
const get = (path: string) => h.request('GET', path);

describe('silences (§12 1-14)', () => {
  // Common bodies are read in one pass, the others by the full go-openapi decoder: both readings agree.
  it.each([
    ['plain', silence(), { comment: 'c', createdBy: 'me', matchers: [{ isEqual: true, isRegex: false, name: 'alertname', value: 'R4' }] }],
    ['isEqual false, an unknown field, an empty id', silence({ id: '', extra: [1, { a: null }], matchers: [{ name: 'alertname', value: 'R4', isRegex: true, isEqual: false }] }), { matchers: [{ isEqual: false, isRegex: true, name: 'alertname', value: 'R4' }] }],
    ['isEqual null', silence({ matchers: [{ name: 'alertname', value: 'R4', isRegex: false, isEqual: null }] }), { matchers: [{ isEqual: true }] }],
    ['field names in another case (Go matches them)', { ...silence({ comment: undefined, createdBy: undefined }), Comment: 'C2', CREATEDBY: 'them' }, { comment: 'C2', createdBy: 'them' }],
    ['a matcher field in another case', silence({ matchers: [{ Name: 'alertname', value: 'R4', isRegex: false }] }), { matchers: [{ name: 'alertname' }] }],
    ['escapes and a lone surrogate', silence({ comment: 'a\u00e9\ud800', createdBy: 'x\ty' }), { comment: 'a\u00e9\ufffd', createdBy: 'x\ty' }],
    ['times in other layouts', silence({ endsAt: '2030-01-02 00:00:00' }), { endsAt: '2030-01-02T00:00:00.000Z' }],
  ])('reads a silence body: %s', async (_, body, expected) => {
    const r = await post('/api/v2/silences', body);
    expect(r.status, r.text).toBe(200);
    expect((await get(`/api/v2/silence/${r.json().silenceID}`)).json()).toMatchObject(expected);
  });

  it('1: creates with the start clamped to now', async () => {
    const r = await post('/api/v2/silences', silence());
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/^\{"silenceID":"[0-9a-f-]{36}"\}\n$/);
    const s = (await get(`/api/v2/silence/${r.json().silenceID}`)).json();
    expect(s).toMatchObject({ startsAt: iso(NOW), updatedAt: iso(NOW), status: { state: 'active' }, matchers: [{ isEqual: true, isRegex: false, name: 'alertname', value: 'R4' }] });
  });
  it.each([
    [silence({ startsAt: iso(NOW + H), endsAt: iso(NOW + H) }), 400, '"Failed to create silence: start time must be before end time"\n'],
    [silence({ startsAt: iso(NOW + H), endsAt: iso(NOW - H) }), 400, '"Failed to create silence: start time must be before end time"\n'],
    [silence({ endsAt: iso(NOW - 1) }), 400, '"Failed to create silence: end time can\'t be in the past"\n'],
    [silence({ matchers: [{ name: 'a', value: '', isRegex: false }] }), 400, '"silence invalid: at least one matcher must not match the empty string"\n'],
    [silence({ matchers: [{ name: 'a', value: '(foo', isRegex: true }] }), 400, '"silence invalid: invalid label matcher 0: invalid regular expression \\"(foo\\": error parsing regexp: missing closing ): `(foo`"\n'],
    [silence({ matchers: [{ name: 'a:b', value: 'x', isRegex: false }] }), 400, '"silence invalid: invalid label matcher 0: invalid label name \\"a:b\\""\n'],
    [silence({ matchers: [] }), 422, '{"code":612,"message":"matchers in body should have at least 1 items"}'],
    [silence({ createdBy: undefined }), 422, '{"code":602,"message":"createdBy in body is required"}'],
    [silence({ id: '00000000-0000-4000-8000-000000000000' }), 404, '"silence not found"\n'],
    ['', 422, '{"code":602,"message":"silence in body is required"}'],
    ['{"comment":"c","createdBy":"a","startsAt":"x"', 400, '{"code":400,"message":"parsing silence body from \\"\\" failed, because unexpected EOF"}'],
  ])('rejects %j', async (body, status, text) => {
    const r = await post('/api/v2/silences', body);
    expect(r.status).toBe(status);
    expect(r.text).toBe(text);
  });
  it('9-11: update in place, replace on changed matchers, never revive an expired one', async () => {
    const id = (await post('/api/v2/silences', silence())).json().silenceID;
    h.clock.advance(1000);
    let r = await post('/api/v2/silences', silence({ id, startsAt: iso(NOW), endsAt: iso(NOW + 2 * H), comment: 'new' }));
    expect(r.json().silenceID).toBe(id);
    expect((await get(`/api/v2/silence/${id}`)).json()).toMatchObject({ comment: 'new', updatedAt: iso(NOW + 1000) });
    r = await post('/api/v2/silences', silence({ id, matchers: [{ name: 'alertname', value: 'R5', isRegex: false }] }));
    const id2 = r.json().silenceID;
    expect(id2).not.toBe(id);
    expect((await get(`/api/v2/silence/${id}`)).json()).toMatchObject({ status: { state: 'expired' }, endsAt: iso(NOW + 1000) });
    r = await post('/api/v2/silences', silence({ id }));
    expect(r.json().silenceID).not.toBe(id);
    expect((await get(`/api/v2/silence/${id}`)).json().endsAt).toBe(iso(NOW + 1000));
  });
  it('12-13: get and delete by id', async () => {
    expect((await get('/api/v2/silence/00000000-0000-4000-8000-000000000000')).text).toBe('');
    expect((await get('/api/v2/silence/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const bad = await get('/api/v2/silence/abc');
    expect([bad.status, bad.text]).toEqual([422, '{"code":601,"message":"silenceID in path must be of type uuid: \\"abc\\""}']);
    const id = (await post('/api/v2/silences', silence())).json().silenceID;
    let r = await h.request('DELETE', `/api/v2/silence/${id}`);
    expect([r.status, r.text, r.headers['content-type']]).toEqual([200, '', undefined]);
    expect((await get(`/api/v2/silence/${id}`)).json().status.state).toBe('expired');
    r = await h.request('DELETE', `/api/v2/silence/${id}`);
    expect(r.status).toBe(200);
    r = await h.request('DELETE', '/api/v2/silence/00000000-0000-4000-8000-000000000000');
    expect([r.status, r.text]).toEqual([404, '']);
    expect((await get(`/api/v2/silence/${id.toUpperCase()}`)).status).toBe(404);
  });
  it('14: list order and structural filter', async () => {
    const a = (await post('/api/v2/silences', silence({ endsAt: iso(NOW + 2 * H) }))).json().silenceID;
    const b = (await post('/api/v2/silences', silence({ endsAt: iso(NOW + H) }))).json().silenceID;
    const p = (await post('/api/v2/silences', silence({ startsAt: iso(NOW + H), endsAt: iso(NOW + 3 * H) }))).json().silenceID;
    const e1 = (await post('/api/v2/silences', silence({ matchers: [{ name: 'job', value: 'a.*', isRegex: true }] }))).json().silenceID;
    h.clock.advance(1000);
    await h.request('DELETE', `/api/v2/silence/${e1}`);
    const e2 = (await post('/api/v2/silences', silence())).json().silenceID;
    h.clock.advance(1000);
    await h.request('DELETE', `/api/v2/silence/${e2}`);
    expect((await get('/api/v2/silences')).json().map((s: { id: string }) => s.id)).toEqual([b, a, p, e2, e1]);
    expect((await get('/api/v2/silences?filter=job%3D~a.*')).json().map((s: { id: string }) => s.id)).toEqual([e1]);
    expect((await get('/api/v2/silences?filter=job%3D~%22a.*%22')).json().length).toBe(1);
    expect((await get('/api/v2/silences?filter=job%3D%22a.*%22')).json()).toEqual([]);
    const r = await get('/api/v2/silences?filter=%7Ba%3D%22b%22%7D');
    expect([r.status, r.text]).toEqual([400, '"bad matcher format: {a=\\"b\\"}"\n']);
  });
});

describe('alerts (§12 15-25)', () => {
  it('15: defaults', async () => {
    const r = await post('/api/v2/alerts', [{ labels: { alertname: 'A1', instance: 'i1', job: 'j' } }]);
    expect([r.status, r.text, r.headers['content-length']]).toEqual([200, '', '0']);
    const [a] = (await get('/api/v2/alerts')).json();
    expect(a).toEqual({
      annotations: {},
      endsAt: iso(NOW + 300_000),
      fingerprint: '38931c9c3c4dad16',
      receivers: [{ name: 'default' }],
      startsAt: iso(NOW),
      status: { inhibitedBy: [], mutedBy: [], silencedBy: [], state: 'active' },
      updatedAt: iso(NOW),
      labels: { alertname: 'A1', instance: 'i1', job: 'j' },
    });
  });
  it('16-18: validation, best effort, all-or-nothing 422', async () => {
    const cases: [unknown, number, string][] = [
      [[{ labels: {} }], 400, '"at least one label pair required"\n'],
      [[{ labels: { alertname: '' } }], 400, '"at least one label pair required"\n'],
      [[{ labels: { '1bad': 'x' } }], 400, '"invalid label set: invalid name \\"1bad\\""\n'],
      [[{ labels: { a: 'b' }, annotations: { 'bad-name': 'x' } }], 400, '"invalid annotations: invalid name \\"bad-name\\""\n'],
      [[{ labels: { a: 'b' }, generatorURL: 'foo' }], 422, '{"code":601,"message":"0.generatorURL in body must be of type uri: \\"foo\\""}'],
      [[{}], 422, '{"code":602,"message":"0.labels in body is required"}'],
    ];
    for (const [body, status, text] of cases) {
      const r = await post('/api/v2/alerts', body);
      expect([r.status, r.text], JSON.stringify(body)).toEqual([status, text]);
    }
    expect((await get('/api/v2/alerts')).json()).toEqual([]);
    const r = await post('/api/v2/alerts', [
      { labels: { alertname: 'M1' } },
      { labels: {} },
      { labels: { alertname: 'M2' } },
      { labels: { alertname: 'M3' }, startsAt: iso(NOW + 60_000), endsAt: iso(NOW) },
    ]);
    expect([r.status, r.text]).toEqual([400, '"at least one label pair required; start time must be before end time"\n']);
    expect((await get('/api/v2/alerts')).json().map((a: { labels: { alertname: string } }) => a.labels.alertname).sort()).toEqual(['M1', 'M2']);
  });
  it('19-21: time defaults, zero times, merging, resolution', async () => {
    let r = await post('/api/v2/alerts', [{ labels: { alertname: 'F' }, startsAt: iso(NOW + 600_000) }]);
    expect(r.text).toBe('"start time must be before end time"\n');
    await post('/api/v2/alerts', [{ labels: { alertname: 'E' }, endsAt: iso(NOW + 600_000) }]);
    await post('/api/v2/alerts', [{ labels: { alertname: 'Z' }, startsAt: '0001-01-01T00:00:00.000Z', endsAt: '0001-01-01T00:00:00.000Z' }]);
    let list = (await get('/api/v2/alerts')).json();
    expect(list.find((a: { labels: { alertname: string } }) => a.labels.alertname === 'E')).toMatchObject({ startsAt: iso(NOW + 600_000), endsAt: iso(NOW + 600_000) });
    expect(list.find((a: { labels: { alertname: string } }) => a.labels.alertname === 'Z')).toMatchObject({ startsAt: iso(NOW), endsAt: iso(NOW + 300_000) });
    h.clock.advance(2000);
    await post('/api/v2/alerts', [{ labels: { alertname: 'Z' }, annotations: { v: '2' } }]);
    list = (await get('/api/v2/alerts?filter=alertname%3DZ')).json();
    expect(list[0]).toMatchObject({ startsAt: iso(NOW), endsAt: iso(NOW + 302_000), updatedAt: iso(NOW + 2000), annotations: { v: '2' } });
    await post('/api/v2/alerts', [{ labels: { alertname: 'Z' }, endsAt: iso(NOW + 2000) }]);
    h.clock.advance(1);
    expect((await get('/api/v2/alerts?filter=alertname%3DZ')).json()).toEqual([]);
    expect((await get('/api/v2/alerts/groups?filter=alertname%3DZ')).json()).toEqual([]);
    r = await post('/api/v2/alerts', [{ labels: { alertname: 'Z' } }]);
    expect((await get('/api/v2/alerts?filter=alertname%3DZ')).json()[0].startsAt).toBe(iso(NOW + 2001));
  });
  it('reads the times of each alert when a batch repeats, changes and zeroes them', async () => {
    const t1 = iso(NOW + 600_000);
    const t2 = iso(NOW + 900_000);
    const batch = [
      { labels: { alertname: 'T1' }, endsAt: t1 },
      { labels: { alertname: 'T2' }, endsAt: t1 },
      { labels: { alertname: 'T3' }, endsAt: t2 },
      { labels: { alertname: 'T4' }, startsAt: '0001-01-01T00:00:00.000Z', endsAt: t2 },
      { labels: { alertname: 'T5' }, startsAt: '0001-01-01T00:00:00.000Z', endsAt: '0001-01-01T00:00:00.000Z' },
    ];
    expect((await post('/api/v2/alerts', batch)).status).toBe(200);
    const byName = new Map((await get('/api/v2/alerts')).json().map((a: { labels: { alertname: string } }) => [a.labels.alertname, a]));
    expect(byName.get('T1')).toMatchObject({ startsAt: t1, endsAt: t1 });
    expect(byName.get('T2')).toMatchObject({ startsAt: t1, endsAt: t1 });
    expect(byName.get('T3')).toMatchObject({ startsAt: t2, endsAt: t2 });
    expect(byName.get('T4')).toMatchObject({ startsAt: t2, endsAt: t2 });
    expect(byName.get('T5')).toMatchObject({ startsAt: iso(NOW), endsAt: iso(NOW + 300_000) });
    const bad = await post('/api/v2/alerts', [{ labels: { alertname: 'T6' }, endsAt: t1 }, { labels: { alertname: 'T7' }, endsAt: 'soon' }]);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('soon');
  });
  it('reads lone surrogates escaped in the JSON text as U+FFFD, as Go does', async () => {
    const r = await post('/api/v2/alerts', '[{"labels":{"alertname":"Esc\\ud800x","v":"\\u00e9"},"annotations":{"a":"b\\udc00"}}]');
    expect(r.status).toBe(200);
    const [a] = (await get('/api/v2/alerts?filter=v%3D%C3%A9')).json();
    expect(a.labels).toEqual({ alertname: 'Esc\ufffdx', v: '\u00e9' });
    expect(a.annotations).toEqual({ a: 'b\ufffd' });
    // Stored as U+FFFD, not as the lone surrogate: an equality matcher on U+FFFD finds it.
    const found = (await get(`/api/v2/alerts?filter=${encodeURIComponent('alertname="Esc\ufffdx"')}`)).json();
    expect(found).toHaveLength(1);
  });
  it('22-25: receivers, silencing, inhibition, flags and filters', async () => {
    await post('/api/v2/alerts', [
      { labels: { alertname: 'R1', team: 'a' } },
      { labels: { alertname: 'R2', severity: 'warning' } },
      { labels: { alertname: 'R2', severity: 'critical' } },
      { labels: { alertname: 'R4' } },
    ]);
    const sil = (await post('/api/v2/silences', silence())).json().silenceID;
    const all = (await get('/api/v2/alerts')).json();
    const by = (n: string, sev?: string) => all.find((a: { labels: Record<string, string> }) => a.labels.alertname === n && a.labels.severity === sev);
    expect(all.map((a: { fingerprint: string }) => a.fingerprint)).toEqual([...all.map((a: { fingerprint: string }) => a.fingerprint)].sort());
    expect(by('R1').receivers).toEqual([{ name: 'team-a' }, { name: 'team-ab' }]);
    expect(by('R4').status).toEqual({ inhibitedBy: [], mutedBy: [], silencedBy: [sil], state: 'suppressed' });
    expect(by('R2', 'warning').status.inhibitedBy).toEqual([by('R2', 'critical').fingerprint]);
    const names = async (q: string) => (await get(`/api/v2/alerts?${q}`)).json().map((a: { labels: Record<string, string> }) => `${a.labels.alertname}${a.labels.severity ? '/' + a.labels.severity : ''}`).sort();
    expect(await names('active=false')).toEqual(['R2/warning', 'R4']);
    expect(await names('silenced=false&inhibited=false')).toEqual(['R1', 'R2/critical']);
    expect(await names('active=no')).toEqual(await names('active=foo'));
    expect(await names('unprocessed=false')).toEqual(await names(''));
    expect(await names('filter=severity%3D')).toEqual(['R1', 'R4']);
    expect(await names('filter=severity!%3D')).toEqual(['R2/critical', 'R2/warning']);
    expect(await names('filter=alertname%3D~R')).toEqual([]);
    expect(await names('receiver=team')).toEqual([]);
    expect(await names('receiver=team.*')).toEqual(['R1']);
    const r = await get('/api/v2/alerts?receiver=(bad');
    expect([r.status, r.text]).toEqual([400, '"failed to parse receiver param: error parsing regexp: missing closing ): `^(?:(bad)$`"\n']);
  });
  it('26: groups', async () => {
    await post('/api/v2/alerts', [
      { labels: { alertname: 'G', team: 'a', job: 'b', instance: '2' } },
      { labels: { alertname: 'G', team: 'a', job: 'a' } },
      { labels: { alertname: 'G', team: 'a', job: 'a', instance: '1' } },
      { labels: { zzz: '1' } },
    ]);
    const groups = (await get('/api/v2/alerts/groups')).json();
    expect(groups.map((g: { labels: object; receiver: { name: string } }) => [g.labels, g.receiver.name])).toEqual([
      [{}, 'default'],
      [{ alertname: 'G' }, 'team-a'],
      [{ alertname: 'G' }, 'team-ab'],
    ]);
    const g = groups[1];
    expect(g.alerts.map((a: { labels: Record<string, string> }) => `${a.labels.job}/${a.labels.instance ?? '-'}`)).toEqual(['a/1', 'a/-', 'b/2']);
    expect(g.alerts[0].receivers).toEqual([{ name: 'team-a' }, { name: 'team-ab' }]);
    expect((await get('/api/v2/alerts/groups?receiver=team-ab')).json().length).toBe(1);
  });
  it('26 (ctl): ctl_groups and ctl_alerts_per_group page the groups, with the totals in headers', async () => {
    await post('/api/v2/alerts', [
      { labels: { alertname: 'G', team: 'a', job: 'b', instance: '2' } },
      { labels: { alertname: 'G', team: 'a', job: 'a' } },
      { labels: { alertname: 'G', team: 'a', job: 'a', instance: '1' } },
      { labels: { zzz: '1' } },
    ]);
    const whole = await get('/api/v2/alerts/groups');
    expect(whole.headers['ctl-groups-total']).toBeUndefined();
    expect(whole.text).not.toContain('ctlAlertsTotal');
    const r = await get('/api/v2/alerts/groups?ctl_groups=2&ctl_alerts_per_group=2');
    expect(r.status).toBe(200);
    expect([r.headers['ctl-groups-total'], r.headers['ctl-alerts-total']]).toEqual(['3', '7']);
    const paged = r.json();
    const all = whole.json();
    // The first groups, each cut to its first alerts in the same order, with its number before the cut.
    expect(paged).toEqual(all.slice(0, 2).map((g: { alerts: unknown[] }) => ({ ...g, alerts: g.alerts.slice(0, 2), ctlAlertsTotal: g.alerts.length })));
    // The 0.25 parameters apply first.
    const f = await get(`/api/v2/alerts/groups?receiver=team-ab&ctl_groups=5&ctl_alerts_per_group=0`);
    expect([f.headers['ctl-groups-total'], f.headers['ctl-alerts-total']]).toEqual(['1', '3']);
    expect(f.json()).toEqual([{ alerts: [], labels: { alertname: 'G' }, receiver: { name: 'team-ab' }, ctlAlertsTotal: 3 }]);
    const bad = await get('/api/v2/alerts/groups?ctl_groups=-1');
    expect([bad.status, bad.text]).toEqual([400, '"ctl_groups: want a whole number from 0 to 1000000, got \\"-1\\""\n']);
  });
});

describe('status, receivers, HTTP (§12 27-29)', () => {
  it('27-28', async () => {
    const s = (await get('/api/v2/status')).json();
    expect(s.cluster).toEqual({ peers: [], status: 'disabled' });
    expect(s.uptime).toBe(iso(NOW));
    expect(s.config.original).toContain('receiver: team-a');
    expect(Object.keys(s.versionInfo).sort()).toEqual(['branch', 'buildDate', 'buildUser', 'goVersion', 'revision', 'version']);
    expect((await get('/api/v2/receivers')).text).toBe('[{"name":"default"},{"name":"team-a"},{"name":"team-ab"},{"name":"pager"}]\n');
  });
  it('29', async () => {
    let r = await h.request('PUT', '/api/v2/silences');
    expect([r.status, r.headers.allow, r.text]).toEqual([405, 'GET,POST', '{"code":405,"message":"method PUT is not allowed, but [GET,POST] are"}']);
    r = await h.request('POST', '/api/v2/silences', '{}', { 'content-type': 'text/plain' });
    expect([r.status, r.text]).toEqual([415, '{"code":415,"message":"unsupported media type \\"text/plain\\", only [application/json] are allowed"}']);
    r = await get('/api/v2/foo');
    expect([r.status, r.text]).toEqual([404, '{"code":404,"message":"path /api/v2/foo was not found"}']);
    r = await h.request('GET', '/api/v2/status', undefined, { accept: 'text/plain' });
    expect(r.status).toBe(406);
    expect((await get('/api/v2/alerts/')).status).toBe(200);
    expect((await h.request('GET', '/api/v2/receivers', undefined, { origin: 'http://x' })).headers['access-control-allow-origin']).toBe('*');
  });
});

describe('persistence', () => {
  it('silences and alerts survive a restart; GC runs on start', async () => {
    await post('/api/v2/alerts', [{ labels: { alertname: 'P' } }, { labels: { alertname: 'Gone' }, endsAt: iso(NOW + 1000) }]);
    const id = (await post('/api/v2/silences', silence())).json().silenceID;
    h.clock.advance(2000);
    await h.restart();
    expect((await get('/api/v2/alerts')).json().map((a: { labels: { alertname: string } }) => a.labels.alertname)).toEqual(['P']);
    expect(h.engine.alerts.size).toBe(1); // the resolved one was collected at start
    expect((await get(`/api/v2/silence/${id}`)).status).toBe(200);
  });
});

describe('large responses', () => {
  it('are streamed chunked (as Go does past its buffer); small ones carry a Content-Length', async () => {
    for (let b = 0; b < 3; b++) {
      const batch = Array.from({ length: 500 }, (_, i) => ({ labels: { alertname: `Big${i % 7}`, instance: `host-${b * 500 + i}`, team: 'a' }, annotations: { summary: 'x'.repeat(100) } }));
      expect((await post('/api/v2/alerts', batch)).status).toBe(200);
    }
    const all = await get('/api/v2/alerts');
    expect(all.headers['transfer-encoding']).toBe('chunked');
    expect(all.headers['content-length']).toBeUndefined();
    const list = all.json() as { fingerprint: string; labels: Record<string, string>; annotations: Record<string, string> }[];
    expect(list).toHaveLength(1500);
    expect(list.map((a) => a.fingerprint)).toEqual(list.map((a) => a.fingerprint).sort());
    // Rendered in several pieces: every alert whole, none repeated or lost at a piece boundary.
    expect(new Set(list.map((a) => a.labels.instance)).size).toBe(1500);
    expect(list.every((a) => a.annotations.summary === 'x'.repeat(100) && a.labels.team === 'a')).toBe(true);
    const groups = await get('/api/v2/alerts/groups');
    expect(groups.headers['transfer-encoding']).toBe('chunked');
    expect((groups.json() as { alerts: unknown[] }[]).reduce((n, g) => n + g.alerts.length, 0)).toBe(1500 * 2); // team-a and team-ab
    const one = await get(`/api/v2/alerts?filter=${encodeURIComponent('instance="host-7"')}`);
    expect(Number(one.headers['content-length'])).toBe(Buffer.byteLength(one.text));
    expect(one.json()).toHaveLength(1);
  });
});
