import { afterEach, describe, expect, it, vi } from 'vitest';
import pino from 'pino';
import { needsUpdate, type NflogEntry, type NotificationLedger } from '../../src/alertmanager/dispatch/nflog.js';
import { Dispatcher } from '../../src/alertmanager/dispatch/dispatcher.js';
import { newAlert, type Alert } from '../../src/alertmanager/alerts.js';
import { defaultTemplates } from '../../src/alertmanager/template/load.js';
import type { Egress } from '../../src/egress/index.js';
import type { Clock } from '../../src/http/clock.js';
import { labelSetString, routeKeys } from '../../src/alertmanager/dispatch/keys.js';
import { goTimeJson, webhookPayload } from '../../src/alertmanager/receivers/webhook.js';
import { loadConfig } from '../../src/alertmanager/config/load.js';
import { GO_ZERO_MS } from '../../src/alertmanager/timefmt.js';

const H = 3_600_000;
const set = (...xs: string[]) => new Set(xs);

describe('DedupStage.needsUpdate (0.25)', () => {
  const now = 10 * H;
  it('first notification only when something fires', () => {
    expect(needsUpdate(undefined, set('a'), set(), true, H, now)).toBe(true);
    expect(needsUpdate(undefined, set(), set('a'), true, H, now)).toBe(false);
  });
  it('a new firing alert, all resolved, new resolutions (when sent), or the repeat interval', () => {
    const entry = { firing: ['a'], resolved: [], at: now - 60_000 };
    expect(needsUpdate(entry, set('a', 'b'), set(), true, H, now)).toBe(true);
    expect(needsUpdate(entry, set('a'), set(), true, H, now)).toBe(false);
    expect(needsUpdate(entry, set(), set('a'), false, H, now)).toBe(true); // every alert resolved: even without send_resolved
    expect(needsUpdate({ firing: ['a', 'b'], resolved: [], at: now - 60_000 }, set('a'), set('b'), true, H, now)).toBe(true);
    expect(needsUpdate({ firing: ['a', 'b'], resolved: [], at: now - 60_000 }, set('a'), set('b'), false, H, now)).toBe(false);
    expect(needsUpdate({ firing: ['a'], resolved: [], at: now - 2 * H }, set('a'), set(), true, H, now)).toBe(true);
    expect(needsUpdate({ firing: [], resolved: ['a'], at: now - 60_000 }, set(), set('a', 'c'), true, H, now)).toBe(false);
  });
});

describe('group keys', () => {
  it('Route.Key() with parents, LabelSet.String()', () => {
    const c = loadConfig('route:\n  receiver: r\n  routes:\n    - receiver: r\n      matchers: [severity="page", team=~"a|b"]\n      routes: [{receiver: r, match: {x: "y"}}]\nreceivers: [{name: r}]\n');
    const keys = routeKeys(c.route);
    expect(keys.get(c.route)).toBe('{}');
    expect(keys.get(c.route.routes[0]!)).toBe('{}/{severity="page",team=~"a|b"}');
    expect(keys.get(c.route.routes[0]!.routes[0]!)).toBe('{}/{severity="page",team=~"a|b"}/{x="y"}');
    expect(labelSetString({ team: 'a', alertname: 'X "q"' })).toBe('{alertname="X \\"q\\"", team="a"}');
  });
});

describe('webhook payload', () => {
  it('times as Go marshals them; truncation before the common labels', () => {
    expect(goTimeJson(Date.UTC(2026, 0, 2, 3, 4, 5, 120))).toBe('"2026-01-02T03:04:05.12Z"');
    expect(goTimeJson(Date.UTC(2026, 0, 2, 3, 4, 5, 0))).toBe('"2026-01-02T03:04:05Z"');
    expect(goTimeJson(GO_ZERO_MS)).toBe('"0001-01-01T00:00:00Z"');
    const alert = (i: string, resolved: boolean) => ({ labels: { alertname: 'A', i }, annotations: { s: i === 'c' ? 'x' : 'y' }, startsAt: 0, endsAt: GO_ZERO_MS, generatorURL: '', fingerprint: i, resolved });
    const body = JSON.parse(webhookPayload({ receiver: 'r', groupKey: '{}:{alertname="A"}', groupLabels: { alertname: 'A' }, alerts: [alert('a', true), alert('b', true), alert('c', false)], externalURL: 'http://x' }, 2));
    expect(body).toMatchObject({ status: 'resolved', truncatedAlerts: 1, commonAnnotations: { s: 'y' }, version: '4' });
    expect(body.alerts).toHaveLength(2);
  });
});

/** A notification log in memory (the dispatcher's NotificationLedger). */
function memoryLedger(): NotificationLedger {
  const entries = new Map<string, NflogEntry>();
  return {
    begin: (key) => ({ entry: entries.get(key), finish: (sent) => void (sent && entries.set(key, sent)) }),
    get size() {
      return entries.size;
    },
    gc: () => 0,
    commit: () => undefined,
  };
}

/**
 * An egress whose receivers answer after `delayMs[path]` of (fake) time with `status[path]`; what
 * each path was sent is recorded with the time it arrived.
 */
function fakeEgress(status: Record<string, number>, delayMs: Record<string, number>) {
  const got: { path: string; at: number; status: string; alerts: number }[] = [];
  const egress = {
    warm: () => undefined,
    pooled: () => ({}),
    request: async (url: string, opts: { body: string }) => {
      const path = new URL(url).pathname;
      const body = JSON.parse(opts.body) as { status: string; alerts: unknown[] };
      got.push({ path, at: Date.now(), status: body.status, alerts: body.alerts.length });
      await new Promise((r) => setTimeout(r, delayMs[path] ?? 0));
      return { statusCode: status[path] ?? 200, headers: {}, body: { async *[Symbol.asyncIterator]() {}, dump: async () => undefined } };
    },
  };
  return { egress: egress as unknown as Egress, got };
}

describe('dispatcher: a flush slower than group_interval (0.25 aggrGroup.run)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('the tick that came during the flush runs the next flush as soon as it ends: a failing integration does not stop the others', async () => {
    const T0 = Date.parse('2030-01-01T00:00:00Z');
    vi.useFakeTimers({ now: T0 });
    // The dispatcher's injected clock reads the fake timers' time, so timers and `now` move together.
    const clock: Clock = { now: () => Date.now() };
    const config = loadConfig(`route: {receiver: r, group_by: [alertname], group_wait: 1s, group_interval: 2s, repeat_interval: 1h}
receivers:
  - name: r
    webhook_configs:
      - {url: "http://127.0.0.1:9/bad", send_resolved: true}
      - {url: "http://127.0.0.1:9/ok", send_resolved: true}
`);
    // The failing receiver takes 3 s to answer 500: each flush of the group outlasts group_interval.
    const { egress, got } = fakeEgress({ '/bad': 500 }, { '/bad': 3000 });
    const store = new Map<string, Alert>();
    const put = (a: Alert) => (store.set(a.fingerprint, a), a);
    const d = new Dispatcher({
      clock,
      log: pino({ level: 'silent' }),
      egress,
      nflog: memoryLedger(),
      externalURL: () => 'http://am',
      alert: (fp) => store.get(fp),
      alerts: () => [...store.values()],
      muted: () => false,
    });
    d.start(config, defaultTemplates());
    const firing = { fingerprint: 'f1', labels: { alertname: 'A' }, annotations: {}, startsAt: T0, endsAt: T0 + 3_600_000, updatedAt: T0, generatorURL: '', timeout: false };
    d.ingest([put(newAlert(firing))]);
    // First flush at 1 s: ok is told at once; bad answers 500 at 4 s, too late for another attempt
    // before the 3 s deadline. The timer fired at 3 s, while the flush still ran.
    await vi.advanceTimersByTimeAsync(1500);
    d.ingest([put(newAlert({ ...firing, endsAt: T0 + 1500, updatedAt: T0 + 1500 }))]);
    await vi.advanceTimersByTimeAsync(5000);
    const groupsLeft = d.groupCount;
    d.stop();
    const ok = got.filter((g) => g.path === '/ok').map((g) => [g.at - T0, g.status]);
    // The resolution goes out when the slow flush ends (4 s), as 0.25 runs the missed tick then.
    expect(ok).toEqual([
      [1000, 'firing'],
      [4000, 'resolved'],
    ]);
    // bad never notified the alert firing, so it is not sent the resolution alone (DedupStage);
    // that flush delivered everything due, and the group, now empty, is gone.
    expect(got.filter((g) => g.path === '/bad').map((g) => g.at - T0)).toEqual([1000]);
    expect(groupsLeft).toBe(0);
  });

  it('an attempt that never ends is given up at 0.25\'s notification timeout (10 s at least), and the next flush runs then', async () => {
    const T0 = Date.parse('2030-01-01T00:00:00Z');
    vi.useFakeTimers({ now: T0 });
    const clock: Clock = { now: () => Date.now() };
    const config = loadConfig(`route: {receiver: r, group_by: [alertname], group_wait: 1s, group_interval: 2s, repeat_interval: 1h}
receivers:
  - name: r
    webhook_configs:
      - {url: "http://127.0.0.1:9/hang", send_resolved: true}
      - {url: "http://127.0.0.1:9/ok", send_resolved: true}
`);
    // The hanging receiver answers after ten minutes (a black hole, or a connection no timeout covers).
    const { egress, got } = fakeEgress({}, { '/hang': 600_000 });
    const store = new Map<string, Alert>();
    const put = (a: Alert) => (store.set(a.fingerprint, a), a);
    const d = new Dispatcher({ clock, log: pino({ level: 'silent' }), egress, nflog: memoryLedger(), externalURL: () => 'http://am', alert: (fp) => store.get(fp), alerts: () => [...store.values()], muted: () => false });
    d.start(config, defaultTemplates());
    const firing = { fingerprint: 'f1', labels: { alertname: 'A' }, annotations: {}, startsAt: T0, endsAt: T0 + 3_600_000, updatedAt: T0, generatorURL: '', timeout: false };
    d.ingest([put(newAlert(firing))]);
    await vi.advanceTimersByTimeAsync(1500);
    d.ingest([put(newAlert({ ...firing, endsAt: T0 + 1500, updatedAt: T0 + 1500 }))]);
    await vi.advanceTimersByTimeAsync(12_000);
    d.stop();
    // The first flush (at 1 s) ends when its sends are cancelled, 10 s later: ok is told then.
    expect(got.filter((g) => g.path === '/ok').map((g) => [g.at - T0, g.status])).toEqual([
      [1000, 'firing'],
      [11_000, 'resolved'],
    ]);
  });
});

describe('dispatcher: groups found from the group_by values', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const T0 = Date.parse('2030-01-01T00:00:00Z');
  function setUp(groupBy: string) {
    vi.useFakeTimers({ now: T0 });
    const clock: Clock = { now: () => Date.now() };
    const config = loadConfig(`route: {receiver: r, group_by: ${groupBy}, group_wait: 1s, group_interval: 2s, repeat_interval: 1h}
receivers:
  - name: r
    webhook_configs:
      - {url: "http://127.0.0.1:9/hook", send_resolved: true}
`);
    const { egress, got } = fakeEgress({}, {});
    const store = new Map<string, Alert>();
    const put = (a: Alert) => (store.set(a.fingerprint, a), a);
    const d = new Dispatcher({
      clock,
      log: pino({ level: 'silent' }),
      egress,
      nflog: memoryLedger(),
      externalURL: () => 'http://am',
      alert: (fp) => store.get(fp),
      alerts: () => [...store.values()],
      muted: () => false,
    });
    d.start(config, defaultTemplates());
    const alert = (fp: string, labels: Record<string, string>, endsAt: number, at = Date.now()) =>
      put(newAlert({ fingerprint: fp, labels, annotations: {}, startsAt: at, endsAt, updatedAt: at, generatorURL: '', timeout: false }));
    return { d, got, alert };
  }

  it('a group emptied by a flush is gone: the next alert with its labels starts a new group, which waits group_wait again', async () => {
    const { d, got, alert } = setUp('[alertname]');
    d.ingest([alert('f1', { alertname: 'A' }, T0 + H)]);
    await vi.advanceTimersByTimeAsync(1500);
    d.ingest([alert('f1', { alertname: 'A' }, Date.now())]);
    // The resolution goes out with the flush at 3 s; the group, empty, is dropped.
    await vi.advanceTimersByTimeAsync(2000);
    expect(d.groupCount).toBe(0);
    // It fires again at 10 s: a new group, notified group_wait later.
    await vi.advanceTimersByTimeAsync(6500);
    d.ingest([alert('f1', { alertname: 'A' }, T0 + H)]);
    expect(d.groupCount).toBe(1);
    await vi.advanceTimersByTimeAsync(1500);
    d.stop();
    expect(got.map((g) => [g.at - T0, g.status])).toEqual([
      [1000, 'firing'],
      [3000, 'resolved'],
      [11000, 'firing'],
    ]);
  });

  it('a backlog (alerts older than group_wait) sets one timer per new group, and each group is flushed at once with all its alerts', async () => {
    const { d, got, alert } = setUp('[alertname]');
    const old = T0 - H;
    const batch = (from: number) => Array.from({ length: 30 }, (_, i) => alert(`f${from + i}`, { alertname: `G${(from + i) % 3}`, instance: `i${from + i}` }, T0 + H, old));
    const timers = vi.spyOn(globalThis, 'setTimeout');
    d.ingest(batch(0));
    d.ingest(batch(30));
    // Three groups of twenty old alerts: three timers (each group due at once), not one per alert.
    expect(timers.mock.calls.length).toBe(3);
    timers.mockRestore();
    await vi.advanceTimersByTimeAsync(10);
    d.stop();
    expect(got.map((g) => [g.at - T0, g.status, g.alerts])).toEqual([
      [0, 'firing', 20],
      [0, 'firing', 20],
      [0, 'firing', 20],
    ]);
  });

  it('values that concatenate alike are different groups; a missing label is a group of its own', async () => {
    const { d, alert } = setUp('[a, b]');
    d.ingest([
      alert('f1', { alertname: 'X', a: 'x', b: 'yz' }, T0 + H),
      alert('f2', { alertname: 'X', a: 'xy', b: 'z' }, T0 + H),
      alert('f3', { alertname: 'X', a: 'x' }, T0 + H),
      alert('f4', { alertname: 'X', b: 'x' }, T0 + H),
      alert('f5', { alertname: 'Y', a: 'x', b: 'yz' }, T0 + H),
    ]);
    expect(d.groupCount).toBe(4);
    d.stop();
  });
});

describe('webhook answers', () => {
  it('are drained, not read: 0.25 names only the status, and decoding every answer costs the backlog', async () => {
    const { webhookIntegration } = await import('../../src/alertmanager/receivers/webhook.js');
    const { HttpClient } = await import('../../src/alertmanager/receivers/http.js');
    let dumped = 0;
    const answer = (statusCode: number) => ({
      statusCode,
      headers: {},
      body: {
        async *[Symbol.asyncIterator]() {
          throw new Error('the answer was read');
        },
        dump: async () => void dumped++,
      },
    });
    const statuses = [200, 503, 400];
    const egress = { pooled: () => ({}), request: async () => answer(statuses.shift()!) } as unknown as Egress;
    const hook = webhookIntegration({ url: 'http://127.0.0.1:9/hook' }, 0, new HttpClient(egress, undefined));
    const n = { receiver: 'r', groupKey: '{}:{}', groupLabels: {}, alerts: [], externalURL: 'http://am', templates: defaultTemplates(), deadline: Date.now() + 10_000 };
    expect(await hook.send(n)).toMatchObject({ ok: true });
    expect(await hook.send(n)).toMatchObject({ ok: false, retry: true, error: 'unexpected status code 503' });
    expect(await hook.send(n)).toMatchObject({ ok: false, retry: false, error: 'unexpected status code 400' });
    expect(dumped).toBe(3);
  });
});
