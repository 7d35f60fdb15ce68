/**
 * Differential tests: the same requests against the real Alertmanager 0.25 and ctl; answers
 * must match after normalising ids and times (see diff-pair.ts). Skipped, with one line, when
 * the Debian `prometheus-alertmanager` package is not installed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { alertmanagerBinary } from './real-alertmanager.js';
import { Pair } from './diff-pair.js';
import { NOTES_CONFIG } from './harness.js';

const bin = alertmanagerBinary();
if (!bin) console.log('SKIP differential tests: prometheus-alertmanager is not installed (apt-get install prometheus-alertmanager)');

const iso = (ms: number) => new Date(ms).toISOString();
const silence = (over: Record<string, unknown> = {}) => ({
  matchers: [{ name: 'alertname', value: 'R4', isRegex: false }],
  startsAt: iso(Date.now() - 60_000),
  endsAt: iso(Date.now() + 3_600_000),
  createdBy: 'tester',
  comment: 'diff',
  ...over,
});

let pair: Pair | undefined;
afterEach(async () => {
  await pair?.stop();
  pair = undefined;
});

describe.skipIf(!bin)('differential: silences', () => {
  it('create, read, update in place, replace, expire', async () => {
    pair = await Pair.start(NOTES_CONFIG);
    const p = pair;
    p.name('s1', await p.same('POST', '/api/v2/silences', silence()));
    await p.same('GET', '/api/v2/silence/$s1');
    // same matchers and start, new end and comment: updated in place
    // Each server stamped the start with its own clock: send each its own (a ms apart would be a change).
    const [t, o] = await p.both('GET', '/api/v2/silence/$s1');
    p.ids.set('s1start', [JSON.parse(t.text).startsAt, JSON.parse(o.text).startsAt]);
    const [t2, o2] = await p.same('POST', '/api/v2/silences', silence({ id: '$s1', startsAt: '$s1start', endsAt: iso(Date.now() + 7_200_000), comment: 'longer' }));
    expect(JSON.parse(t2.text).silenceID).toBe(p.ids.get('s1')![0]);
    expect(JSON.parse(o2.text).silenceID).toBe(p.ids.get('s1')![1]);
    // changed matchers: new id, old one expired
    p.name('s2', await p.same('POST', '/api/v2/silences', silence({ id: '$s1', matchers: [{ name: 'alertname', value: 'R5', isRegex: false }] })));
    await p.same('GET', '/api/v2/silence/$s1');
    await p.same('GET', '/api/v2/silence/$s2');
    // re-posting the expired one: new id, old untouched
    p.name('s3', await p.same('POST', '/api/v2/silences', silence({ id: '$s1' })));
    await p.same('GET', '/api/v2/silence/$s1');
    // pending silence, then expire it
    p.name('s4', await p.same('POST', '/api/v2/silences', silence({ startsAt: iso(Date.now() + 600_000), endsAt: iso(Date.now() + 900_000), matchers: [{ name: 'job', value: 'a.*', isRegex: true }] })));
    await p.same('GET', '/api/v2/silences');
    await p.same('DELETE', '/api/v2/silence/$s4');
    await p.same('DELETE', '/api/v2/silence/$s4');
    await p.same('GET', '/api/v2/silence/$s4');
    await p.same('DELETE', '/api/v2/silence/$s3');
    await p.same('GET', '/api/v2/silences');
    await p.same('GET', '/api/v2/silences?filter=job%3D~a.*');
    await p.same('GET', '/api/v2/silences?filter=job%3D~%22a.*%22');
    await p.same('GET', '/api/v2/silences?filter=job%3D%22a.*%22');
    await p.same('GET', '/api/v2/silences?filter=%7Ba%3D%22b%22%7D');
    await p.same('GET', '/api/v2/silences?filter=foo');
    await p.same('GET', '/api/v2/silence/00000000-0000-4000-8000-000000000000');
    await p.same('GET', '/api/v2/silence/abc');
    await p.same('DELETE', '/api/v2/silence/abc');
    await p.same('GET', '/api/v2/silence/');
    // 0.25 answers 500 "silence not found"; ctl takes the 0.26 fix (404, empty body)
    const [tu, ou] = await p.both('DELETE', '/api/v2/silence/00000000-0000-4000-8000-000000000000');
    expect([tu.status, ou.status]).toEqual([500, 404]);
  });

  it('validation errors', async () => {
    pair = await Pair.start(NOTES_CONFIG);
    const p = pair;
    const bad: unknown[] = [
      '',
      '{}',
      'null',
      '[]',
      'xx',
      '{"a":1} x',
      '{"comment":1}',
      silence({ startsAt: iso(Date.now() + 3_600_000), endsAt: iso(Date.now() + 3_600_000) }),
      silence({ startsAt: iso(Date.now() + 3_600_000), endsAt: iso(Date.now() - 3_600_000) }),
      silence({ endsAt: iso(Date.now() - 3_600_000) }),
      silence({ matchers: [{ name: 'a', value: '', isRegex: false }] }),
      silence({ matchers: [{ name: 'a', value: '.*', isRegex: true }] }),
      silence({ matchers: [{ name: 'a', value: '(foo', isRegex: true }] }),
      silence({ matchers: [{ name: 'a:b', value: 'x', isRegex: false }] }),
      silence({ matchers: [{ name: '1abc', value: 'x', isRegex: false }] }),
      silence({ matchers: [{ name: 'env', value: 'prod', isRegex: false, isEqual: false }] }),
      silence({ matchers: [] }),
      silence({ matchers: [{ name: 'a' }] }),
      silence({ matchers: [{ isRegex: true }] }),
      silence({ matchers: [{ name: 'a', isRegex: false }] }),
      silence({ matchers: {} }),
      silence({ matchers: ['x'] }),
      silence({ createdBy: undefined }),
      silence({ createdBy: '', comment: '' }),
      silence({ startsAt: '2030-01-01' }),
      silence({ startsAt: 5 }),
      silence({ id: 5 }),
      silence({ id: 'nope' }),
      silence({ id: '00000000-0000-4000-8000-000000000000' }),
      silence({ matchers: [{ name: 'a', value: 'b', isRegex: 'x' }] }),
      silence({ status: { state: 'active' }, foo: 1 }),
      // \Q quotes to the end of the pattern (no \E): the anchoring group Alertmanager adds never closes.
      silence({ matchers: [{ name: 'a', value: '\\Qx', isRegex: true }] }),
      silence({ matchers: [{ name: 'a', value: '\\Qa.b\\E', isRegex: true }] }),
      // Nesting: Go's scanner stops at 10,000 levels; deep but valid JSON is a type error.
      '['.repeat(10_001),
      '['.repeat(10_001) + ']'.repeat(10_001),
      '['.repeat(9_000) + ']'.repeat(9_000) + ' x',
      '{"comment":' + '['.repeat(5_000) + ']'.repeat(5_000) + '}',
    ];
    for (const b of bad) await p.same('POST', '/api/v2/silences', b);
    await p.same('POST', '/api/v2/silences', '{}', { 'content-type': 'text/plain' });
    await p.same('POST', '/api/v2/silences', JSON.stringify(silence()), { 'content-type': 'application/json; charset=utf-8' });
  });
});

describe.skipIf(!bin)('differential: alerts and groups', () => {
  it('posting, defaults, validation, filters', async () => {
    pair = await Pair.start(NOTES_CONFIG);
    const p = pair;
    const now = Date.now();
    await p.same('POST', '/api/v2/alerts', [{ labels: { alertname: 'A1', instance: 'i1', job: 'j' } }]);
    await p.same('POST', '/api/v2/alerts', []);
    await p.same('POST', '/api/v2/alerts', 'null');
    await p.same('POST', '/api/v2/alerts', '');
    await p.same('POST', '/api/v2/alerts', '{}');
    await p.same('POST', '/api/v2/alerts', [{}]);
    await p.same('POST', '/api/v2/alerts', [{ labels: {} }]);
    await p.same('POST', '/api/v2/alerts', [{ labels: { alertname: '' } }]);
    await p.same('POST', '/api/v2/alerts', [{ labels: { '1bad': 'x' } }]);
    await p.same('POST', '/api/v2/alerts', [{ labels: { a: 'b' }, annotations: { 'bad-name': 'x' } }]);
    await p.same('POST', '/api/v2/alerts', [
      { labels: { alertname: 'M1' } },
      { labels: {} },
      { labels: { alertname: 'M2' } },
      { labels: { alertname: 'M3' }, startsAt: iso(now + 60_000), endsAt: iso(now) },
    ]);
    await p.same('POST', '/api/v2/alerts', [{ labels: { a: 'b' } }, { labels: { a: 'c' }, generatorURL: 'foo' }]);
    await p.same('POST', '/api/v2/alerts', [{ labels: { a: 1 } }]);
    await p.same('POST', '/api/v2/alerts', [{ labels: { a: 'b' }, startsAt: 'x' }]);
    await p.same('POST', '/api/v2/alerts', [1]);
    await p.same('POST', '/api/v2/alerts', [{ labels: [] }]);
    await p.same('POST', '/api/v2/alerts', '[{"labels":{"a":"b"},}]');
    await p.same('POST', '/api/v2/alerts', '[{"labels":{"a":"b"}}');
    await p.same('POST', '/api/v2/alerts', [{ labels: { alertname: 'F1' }, startsAt: iso(now + 600_000) }]);
    await p.same('POST', '/api/v2/alerts', [{ labels: { alertname: 'F2' }, endsAt: iso(now + 600_000) }]);
    await p.same('POST', '/api/v2/alerts', [{ labels: { alertname: 'Z1' }, startsAt: '0001-01-01T00:00:00.000Z', endsAt: '0001-01-01T00:00:00.000Z', generatorURL: '/graph?x=1', annotations: { summary: 'x<y & z', empty: '' } }]);
    await p.same('POST', '/api/v2/alerts', [{ Labels: { alertname: 'CaseInsensitive' } }]);
    await p.same('GET', '/api/v2/alerts');
    await p.same('GET', '/api/v2/alerts?filter=alertname%3D~M.');
    await p.same('GET', '/api/v2/alerts?filter=alertname%3D~M');
    await p.same('GET', '/api/v2/alerts?filter=instance%3D');
    await p.same('GET', '/api/v2/alerts?filter=instance!%3D');
    await p.same('GET', '/api/v2/alerts?filter=%7Balertname%3D%22M1%22%7D');
    await p.same('GET', '/api/v2/alerts?filter=a%3Db&filter=');
    await p.same('GET', '/api/v2/alerts?receiver=team');
    await p.same('GET', '/api/v2/alerts?receiver=defa.*');
    await p.same('GET', '/api/v2/alerts?receiver=(bad');
    await p.same('GET', '/api/v2/alerts/groups');
    // resolve one; it disappears at once
    await p.same('POST', '/api/v2/alerts', [{ labels: { alertname: 'M2' }, endsAt: iso(Date.now()) }]);
    await p.same('GET', '/api/v2/alerts');
  });

  it('status: routing, silencing, inhibition, flags, groups', async () => {
    pair = await Pair.start(NOTES_CONFIG);
    const p = pair;
    await p.same('POST', '/api/v2/alerts', [
      { labels: { alertname: 'R1', team: 'a', job: 'j2', instance: 'b' } },
      { labels: { alertname: 'R1', team: 'a', job: 'j1', instance: 'a' } },
      { labels: { alertname: 'R2', team: 'b' } },
      { labels: { alertname: 'R3', severity: 'critical', service: 'db1', instance: 'x' } },
      { labels: { alertname: 'R3', severity: 'warning' } },
      { labels: { alertname: 'R4', team: 'a', severity: 'critical', service: 'dbx' } },
      { labels: { alertname: 'R5' } },
    ]);
    p.name('s1', await p.same('POST', '/api/v2/silences', silence()));
    p.name('s2', await p.same('POST', '/api/v2/silences', silence({ matchers: [{ name: 'team', value: 'a', isRegex: false }], endsAt: iso(Date.now() + 7_200_000) })));
    p.name('s3', await p.same('POST', '/api/v2/silences', silence({ matchers: [{ name: 'alertname', value: 'R5', isRegex: false }], startsAt: iso(Date.now() + 600_000) })));
    await p.same('GET', '/api/v2/alerts');
    for (const q of [
      'active=false',
      'silenced=false&inhibited=false',
      'active=no',
      'active=0',
      'active=foo',
      'active=true&silenced=false&inhibited=false&unprocessed=false',
      'unprocessed=false',
      'silenced=false',
      'inhibited=false',
      'active=false&active=true',
      'receiver=team-a',
      'filter=team%3Da&silenced=false',
    ]) {
      await p.same('GET', `/api/v2/alerts?${q}`);
      await p.same('GET', `/api/v2/alerts/groups?${q}`);
    }
    await p.same('GET', '/api/v2/alerts/groups?receiver=pager');
    await p.same('GET', '/api/v2/alerts/groups?filter=%7Bx%7D');
    await p.same('DELETE', '/api/v2/silence/$s2');
    await p.same('GET', '/api/v2/alerts');
    await p.same('GET', '/api/v2/alerts/groups');
    await p.same('GET', '/api/v2/silences');
  });

  it('duplicate receivers with continue and group_by variants', async () => {
    const config = `
route:
  receiver: r0
  group_by: ['...']
  routes:
    - {receiver: r1, matchers: ['a="1"'], continue: true}
    - {receiver: r1, matchers: ['a="1"'], continue: true, group_by: [b]}
    - {receiver: r2, matchers: ['a=~"1|2"'], group_by: []}
    - {receiver: r3, match: {c: x}, routes: [{receiver: r2, match_re: {d: 'y+'}}]}
receivers: [{name: r0}, {name: r1}, {name: r2}, {name: r3}]
`;
    pair = await Pair.start(config);
    const p = pair;
    await p.same('POST', '/api/v2/alerts', [
      { labels: { alertname: 'X', a: '1', b: 'q' } },
      { labels: { alertname: 'X', a: '1', b: 'p', job: 'z' } },
      { labels: { alertname: 'Y', a: '2' } },
      { labels: { alertname: 'Z', c: 'x', d: 'yy' } },
      { labels: { alertname: 'Z', c: 'x', d: 'n' } },
      { labels: { alertname: 'W' } },
    ]);
    await p.same('GET', '/api/v2/alerts');
    await p.same('GET', '/api/v2/alerts/groups');
    await p.same('GET', '/api/v2/alerts/groups?receiver=r1');
    await p.same('GET', '/api/v2/receivers');
  });

  it('merging and resolution over time', async () => {
    pair = await Pair.start(NOTES_CONFIG);
    const p = pair;
    const l = { alertname: 'MERGE' };
    await p.same('POST', '/api/v2/alerts', [{ labels: l, annotations: { v: '1' } }]);
    await new Promise((r) => setTimeout(r, 1200));
    await p.same('POST', '/api/v2/alerts', [{ labels: l, annotations: { v: '2' } }]);
    await p.same('GET', '/api/v2/alerts');
    const [t] = await p.both('GET', '/api/v2/alerts');
    const start = JSON.parse(t.text)[0].startsAt;
    await p.same('POST', '/api/v2/alerts', [{ labels: l, startsAt: start, endsAt: iso(Date.now() + 3_600_000) }]);
    await p.same('POST', '/api/v2/alerts', [{ labels: l, annotations: { v: '3' } }]);
    await p.same('GET', '/api/v2/alerts');
    await p.same('POST', '/api/v2/alerts', [{ labels: l, endsAt: iso(Date.now()) }]);
    await p.same('GET', '/api/v2/alerts');
    await new Promise((r) => setTimeout(r, 1100));
    await p.same('POST', '/api/v2/alerts', [{ labels: l }]);
    await p.same('GET', '/api/v2/alerts');
  });
});

describe.skipIf(!bin)('differential: encodings and odd inputs', () => {
  it('escaping, unicode, duplicates, empty values', async () => {
    pair = await Pair.start('route:\n  receiver: r\nreceivers:\n- name: r\n');
    const p = pair;
    await p.same('POST', '/api/v2/alerts', [
      { labels: { alertname: 'Esc', v: '<a href="x">&amp;</a>', u: 'héllo ✓ 🚀', e: '' }, annotations: { s: 'line1\nline2\ttab \u2028 \u0001', z: '' } },
      { labels: { alertname: 'Dup', n: '1' }, annotations: { v: 'first' } },
      { labels: { alertname: 'Dup', n: '1' }, annotations: { v: 'second' } },
    ]);
    await p.same('POST', '/api/v2/alerts', '[{"labels":{"alertname":"Sur\ud800"}}]');
    // The same as escapes in the JSON text: JSON.parse keeps the lone surrogate, Go reads U+FFFD.
    await p.same('POST', '/api/v2/alerts', '[{"labels":{"alertname":"Esc\\ud800x","v":"\\u00e9\\ud83d\\ude80"},"annotations":{"a":"b\\udc00"}}]');
    await p.same('GET', `/api/v2/alerts?filter=${encodeURIComponent('alertname="Esc\ufffdx"')}`);
    await p.same('GET', '/api/v2/alerts');
    await p.same('GET', '/api/v2/alerts/groups');
    await p.same('GET', `/api/v2/alerts?filter=${encodeURIComponent('u=~"h.llo.*"')}`);
    await p.same('GET', `/api/v2/alerts?filter=${encodeURIComponent('v="<a href=\\"x\\">&amp;</a>"')}`);
    await p.same('GET', '/api/v2/alerts?receiver=');
    await p.same('GET', `/api/v2/alerts?filter=${encodeURIComponent('alertname=~"(?i)esc"')}`);
    await p.same('GET', `/api/v2/alerts?filter=${encodeURIComponent('alertname=~"[[:alpha:]]+"')}`);
    p.name('s1', await p.same('POST', '/api/v2/silences', silence({ matchers: [{ name: 'u', value: 'héllo.*', isRegex: true }, { name: 'x', value: 'y', isRegex: false, isEqual: false }], comment: '<b>ünïcode</b> & co' })));
    p.name('s2', await p.same('POST', '/api/v2/silences', silence({ matchers: [{ name: 'alertname', value: 'Dup', isRegex: true, isEqual: false }, { name: 'n', value: '1', isRegex: false }] })));
    await p.same('GET', '/api/v2/silences');
    await p.same('GET', `/api/v2/silences?filter=${encodeURIComponent('x!="y"')}`);
    await p.same('GET', `/api/v2/silences?filter=${encodeURIComponent('alertname!~Dup')}`);
    await p.same('GET', `/api/v2/silences?filter=${encodeURIComponent('alertname=~Dup')}`);
    await p.same('GET', '/api/v2/alerts');
  });
});

describe.skipIf(!bin)('differential: status, configuration, HTTP conventions', () => {
  it('status and receivers', async () => {
    pair = await Pair.start(NOTES_CONFIG);
    const p = pair;
    const [t, o] = await p.same('GET', '/api/v2/status');
    expect(JSON.parse(o.text).config.original).toBe(JSON.parse(t.text).config.original);
    await p.same('GET', '/api/v2/receivers');
    await p.same('GET', '/api/v2/status/');
  });

  it('framework answers', async () => {
    pair = await Pair.start(NOTES_CONFIG);
    const p = pair;
    await p.same('PUT', '/api/v2/silences');
    await p.same('HEAD', '/api/v2/silences');
    await p.same('GET', '/api/v2/foo');
    await p.same('GET', '/api/v2/');
    await p.same('GET', '/api/v2');
    await p.same('GET', '/api/v2//status');
    await p.same('GET', '/foo');
    await p.same('GET', '/api/v2/status', undefined, { accept: 'text/plain' });
    await p.same('GET', '/api/v2/status', undefined, { accept: 'text/plain, */*;q=0.1' });
    await p.same('POST', '/api/v2/alerts', '[]', { 'content-type': 'text/plain' });
    await p.same('GET', '/api/v2/receivers', undefined, { origin: 'http://example.test' });
    await p.same('OPTIONS', '/api/v2/silences', undefined, { origin: 'http://example.test', 'access-control-request-method': 'GET' });
    await p.same('OPTIONS', '/api/v2/silences', undefined, { origin: 'http://example.test', 'access-control-request-method': 'DELETE' });
    await p.same('GET', '/-/healthy');
    await p.same('GET', '/-/ready');
    await p.same('GET', '/-/reload');
    await p.same('POST', '/-/healthy');
  });
});

/** Configurations both servers must load identically (config.original) or reject with the same text. */
const CONFIGS: string[] = [
  // valid
  'route:\n  receiver: a\nreceivers:\n- name: a\n',
  'global:\n  resolve_timeout: 1h30m\n  smtp_smarthost: localhost:25\n  smtp_from: am@example.org\n  smtp_auth_password: pw\n  slack_api_url: http://127.0.0.1:1/slack\n  opsgenie_api_key: k\n  victorops_api_key: vk\n  wechat_api_secret: ws\n  wechat_api_corp_id: corp\n  http_config:\n    tls_config: {insecure_skip_verify: true, server_name: srv}\n    bearer_token: tok\ntemplates: [\'t/*.tmpl\']\nroute:\n  receiver: all\n  group_by: [\'...\']\n  group_wait: 10s\n  routes:\n  - receiver: all\n    match_re: {a: \'x|y\', b: \'.*\'}\n    match: {c: d, a10: x, a2: y}\n    continue: true\n    group_interval: 1m\n    repeat_interval: 2d\n    routes:\n    - receiver: all\n      matchers: [\'{z="1", y=~"a,b"}\', \'x!~"q\\"r"\']\n      active_time_intervals: [biz]\ninhibit_rules:\n- source_match: {severity: critical}\n  target_match_re: {severity: \'warn.*\'}\n  equal: [alertname, cluster]\nreceivers:\n- name: all\n  email_configs:\n  - to: a@b.c\n    headers: {subject: hi, x-foo: bar}\n  pagerduty_configs:\n  - routing_key: rk\n    client: cl\n    details: {extra: \'1\'}\n    links: [{href: \'http://x\', text: t}]\n  slack_configs:\n  - channel: \'#c\'\n    fields: [{title: t, value: v, short: true}]\n    actions: [{type: button, text: go, url: \'http://x\', name: ignored}]\n  webhook_configs:\n  - url: http://127.0.0.1:9/h\n    max_alerts: 5\n    send_resolved: false\n  opsgenie_configs:\n  - responders: [{name: n, type: Team}]\n    api_url: https://x.example/v2\n  wechat_configs:\n  - message_type: markdown\n  pushover_configs:\n  - user_key: u\n    token: t\n    retry: 90s\n  victorops_configs:\n  - routing_key: r\n    custom_fields: {foo: bar}\n  sns_configs:\n  - topic_arn: arn:aws:sns:x\n    sigv4: {region: us-east-1, secret_key: s, access_key: a}\n  telegram_configs:\n  - bot_token: bt\n    chat_id: -123\n  discord_configs:\n  - webhook_url: http://127.0.0.1:9/d\n  webex_configs:\n  - room_id: r\n    http_config:\n      authorization: {credentials: c}\ntime_intervals:\n- name: biz\n  time_intervals:\n  - weekdays: [\'monday:friday\']\n    times: [{start_time: \'08:30\', end_time: \'24:00\'}]\n    months: [\'december\']\n    days_of_month: [\'7\']\n',
  'route:\n  receiver: a\n  routes:\n  - receiver: b\n    matchers: [\'comment="a very long value with spaces that goes on and on and on and on and on and on and on"\']\nreceivers:\n- name: a\n- name: b\n  webhook_configs:\n  - url: "http://127.0.0.1:1/x?a=1&b=2"\n    http_config: {basic_auth: {username: "yes", password: "no"}}\nmute_time_intervals:\n- name: m\n  time_intervals: [{years: [\'2020\'], location: UTC}]\n',
  // invalid
  '',
  'route:\n  receiver: x\n  foo: 1\nreceivers:\n- name: x\n',
  'route:\n  receiver: y\nreceivers:\n- name: x\n',
  'receivers:\n- name: x\n',
  'route:\n  receiver: x\n  continue: true\nreceivers:\n- name: x\n',
  'route:\n  matchers: [\'a="b"\']\n  receiver: x\nreceivers:\n- name: x\n',
  'route:\n  receiver: x\nreceivers:\n- name: x\n- name: x\n',
  'route:\n  receiver: x\nreceivers:\n- {}\n',
  'route:\n  receiver: x\n  group_by: [a, a]\nreceivers:\n- name: x\n',
  'route:\n  receiver: x\n  group_by: [\'...\', a]\nreceivers:\n- name: x\n',
  'route:\n  receiver: x\n  group_by: [\'a-b\']\nreceivers:\n- name: x\n',
  'route:\n  receiver: x\n  group_interval: 0s\nreceivers:\n- name: x\n',
  'route:\n  receiver: x\n  group_wait: 5x\nreceivers:\n- name: x\n',
  'route:\n  receiver: x\n  routes: [{matchers: [\'a=~"(b"\']}]\nreceivers:\n- name: x\n',
  'route:\n  receiver: x\n  routes: [{matchers: [\'foo\']}]\nreceivers:\n- name: x\n',
  'route:\n  receiver: x\n  routes: [{match_re: {a: \'(b\'}}]\nreceivers:\n- name: x\n',
  'route:\n  receiver: x\n  routes: [{mute_time_intervals: [nope]}]\nreceivers:\n- name: x\n',
  'route: foo\nreceivers:\n- name: x\n',
  'route:\n  receiver: [x]\n  continue: maybe\nreceivers:\n- name: x\n  webhook_configs: [{url: \'ftp://x\'}]\n',
  'route:\n  receiver: x\nreceivers:\n- name: x\n  webhook_configs: [{}]\n',
  'route:\n  receiver: x\nreceivers:\n- name: x\n  webhook_configs: [{url: \'http://x\', max_alerts: -1}]\n',
  'route:\n  receiver: x\nreceivers:\n- name: x\n  slack_configs: [{channel: c}]\n',
  'route:\n  receiver: x\nreceivers:\n- name: x\n  email_configs: [{to: a@b}]\n',
  'route:\n  receiver: x\ninhibit_rules:\n- equal: [\'a-b\']\nreceivers:\n- name: x\n',
  'route:\n  receiver: x\nreceivers:\n- name: x\ntime_intervals:\n- name: t\n  time_intervals: [{weekdays: [\'funday\']}]\n',
  'route:\n  receiver: x\nreceivers:\n- name: x\ntime_intervals:\n- name: t\n  time_intervals: [{times: [{start_time: \'10:00\', end_time: \'09:00\'}]}]\n',
  'route:\n  receiver: x\nreceivers:\n- name: x\ntime_intervals:\n- name: t\n  time_intervals: [{days_of_month: [\'0\']}]\n',
  'route:\n  receiver: x\nreceivers:\n- name: x\ntime_intervals:\n- name: t\n  time_intervals: []\n- name: t\n  time_intervals: []\n',
  'a: [1\n',
];

describe.skipIf(!bin)('differential: configuration files', () => {
  it('loads or rejects like Alertmanager', async () => {
    pair = await Pair.start('route:\n  receiver: a\nreceivers:\n- name: a\n');
    const p = pair;
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    for (const config of CONFIGS) {
      const theirs = await p.real.reload(config);
      writeFileSync(join(p.ours.dir, 'alertmanager.yml'), config);
      const r = await fetch(`${p.ours.url}/-/reload`, { method: 'POST' });
      const ours = { status: r.status, text: await r.text() };
      if (config === 'a: [1\n') {
        // YAML syntax errors: same status and prefix; the parser's wording differs.
        expect(ours.status).toBe(theirs.status);
        expect(ours.text).toMatch(/^failed to reload config: yaml: line \d+: /);
        continue;
      }
      expect(ours, `reload of:\n${config}`).toEqual(theirs);
      if (theirs.status === 200) {
        const [t, o] = await p.both('GET', '/api/v2/status');
        // Relative file paths are joined with each server's own config directory.
        const original = (a: { text: string }, dir: string) => (JSON.parse(a.text).config.original as string).split(dir).join('<dir>');
        expect(original(o, p.ours.dir), `config.original of:\n${config}`).toBe(original(t, p.real.dir));
      }
    }
  });
});
