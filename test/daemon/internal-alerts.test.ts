/** ComponentAlerts: what a component's alert calls post to the alert manager, and when. */
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { alertsEnabled, ComponentAlerts, REFRESH_MS, type AlertSink } from '../../src/daemon/internal-alerts.js';

type Posted = Parameters<AlertSink['post']>[0][number];

function setup(opts: { enabled?: boolean; sink?: boolean } = {}) {
  let now = 1_000_000;
  const posts: Posted[][] = [];
  let available = opts.sink !== false;
  const sink: AlertSink = { post: (a) => (posts.push(a), []) };
  const alerts = new ComponentAlerts('nodes', opts.enabled !== false, () => (available ? sink : undefined), () => 'http://127.0.0.1:8081', { now: () => now } as never, pino({ level: 'silent' }));
  return {
    alerts,
    posts,
    advance: (ms: number) => (now += ms),
    now: () => now,
    setAvailable: (v: boolean) => (available = v),
  };
}

const node = (ip: string) => ({ alertname: 'NodeOffline', labels: { ip }, annotations: { summary: `${ip} down` }, path: '/api/getmynodes' });

describe('internal alerts', () => {
  it('reconcile raises new alerts, keeps listed ones quiet, and resolves those no longer listed', () => {
    const t = setup();
    t.alerts.reconcile('NodeOffline', [node('a'), node('b')]);
    expect(t.posts).toHaveLength(1);
    expect(t.posts[0]).toEqual([
      { labels: { ip: 'a', alertname: 'NodeOffline', component: 'nodes' }, annotations: { summary: 'a down' }, startsAt: t.now(), endsAt: t.now() + 3 * REFRESH_MS, generatorURL: 'http://127.0.0.1:8081/api/getmynodes' },
      { labels: { ip: 'b', alertname: 'NodeOffline', component: 'nodes' }, annotations: { summary: 'b down' }, startsAt: t.now(), endsAt: t.now() + 3 * REFRESH_MS, generatorURL: 'http://127.0.0.1:8081/api/getmynodes' },
    ]);
    t.advance(1000);
    t.alerts.reconcile('NodeOffline', [node('a'), node('b')]);
    expect(t.posts).toHaveLength(1);
    t.alerts.reconcile('NodeOffline', [node('b')]);
    expect(t.posts[1]).toEqual([{ labels: { ip: 'a', alertname: 'NodeOffline', component: 'nodes' }, annotations: { summary: 'a down' }, endsAt: t.now(), generatorURL: 'http://127.0.0.1:8081/api/getmynodes' }]);
    // Another alertname's reconcile leaves these alone.
    t.alerts.reconcile('NodeStuck', []);
    expect(t.posts).toHaveLength(2);
    expect(t.alerts.firing().map((a) => a.labels.ip)).toEqual(['b']);
  });

  it('refresh re-posts what fires with a new end; events resolve by themselves', () => {
    const t = setup();
    t.alerts.fire(node('a'));
    t.alerts.event({ alertname: 'RunFailed', labels: { run: '7' } }, 5 * REFRESH_MS);
    const started = t.now();
    t.advance(REFRESH_MS);
    t.alerts.refresh();
    const last = t.posts.at(-1)!;
    expect(last.map((p) => [p.labels.alertname, p.startsAt, p.endsAt])).toEqual([
      ['NodeOffline', started, t.now() + 3 * REFRESH_MS],
      ['RunFailed', started, started + 5 * REFRESH_MS],
    ]);
    t.advance(5 * REFRESH_MS);
    t.alerts.refresh();
    expect(t.posts.at(-1)!.map((p) => p.labels.alertname)).toEqual(['NodeOffline']);
  });

  it('without an alert manager, alerts wait: the next refresh delivers the firing ones and owed resolutions', () => {
    const t = setup({ sink: false });
    t.alerts.fire(node('a'));
    t.alerts.fire(node('b'));
    t.alerts.resolve('NodeOffline', { ip: 'b' });
    expect(t.posts).toHaveLength(0);
    t.setAvailable(true);
    t.alerts.refresh();
    expect(t.posts).toHaveLength(1);
    expect(t.posts[0]!.map((p) => [p.labels.ip, p.endsAt === t.now() ? 'resolved' : 'firing'])).toEqual([
      ['a', 'firing'],
      ['b', 'resolved'],
    ]);
    t.alerts.refresh();
    expect(t.posts[1]!.map((p) => p.labels.ip)).toEqual(['a']);
  });

  it('switched off in ctl.yaml, nothing is posted; the switch takes booleans only', () => {
    const t = setup({ enabled: false });
    t.alerts.fire(node('a'));
    t.alerts.reconcile('NodeOffline', [node('b')]);
    expect(t.posts).toHaveLength(0);
    expect(alertsEnabled(undefined, 'nodes')).toBe(true);
    expect(alertsEnabled({ nodes: false }, 'nodes')).toBe(false);
    expect(alertsEnabled({ nodes: false }, 'gateway')).toBe(true);
    expect(() => alertsEnabled({ nodes: 'no' }, 'nodes')).toThrow('ctl.yaml: alerts.nodes must be true or false');
  });
});
