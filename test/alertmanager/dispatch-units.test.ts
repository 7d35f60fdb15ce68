import { describe, expect, it } from 'vitest';
import { needsUpdate } from '../../src/alertmanager/dispatch/nflog.js';
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
