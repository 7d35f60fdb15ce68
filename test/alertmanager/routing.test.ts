import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/alertmanager/config/load.js';
import { groupLabels, matchRoutes } from '../../src/alertmanager/config/runtime.js';
import { Inhibitor } from '../../src/alertmanager/inhibit.js';
import { fingerprint } from '../../src/alertmanager/labels.js';
import type { Alert } from '../../src/alertmanager/alerts.js';
import { NOTES_CONFIG } from './harness.js';

const cfg = loadConfig(NOTES_CONFIG);
const receivers = (labels: Record<string, string>) => matchRoutes(cfg.route, labels).map((r) => r.receiver);

describe('route tree (dispatch.Route.Match)', () => {
  it('continue lets later siblings match; no match falls back to the parent', () => {
    expect(receivers({ team: 'a' })).toEqual(['team-a', 'team-ab']);
    expect(receivers({ team: 'b' })).toEqual(['team-ab']);
    expect(receivers({ alertname: 'x' })).toEqual(['default']);
    expect(receivers({ severity: 'critical', service: 'db1' })).toEqual(['pager']);
    expect(receivers({ severity: 'critical', service: 'web' })).toEqual(['default']);
  });
  it('keeps duplicates from identical continue routes', () => {
    const c = loadConfig(`
route:
  receiver: d
  routes:
    - {receiver: r1, matchers: ['a="1"'], continue: true}
    - {receiver: r1, matchers: ['a="1"'], continue: true}
receivers: [{name: d}, {name: r1}]
`);
    expect(matchRoutes(c.route, { a: '1' }).map((r) => r.receiver)).toEqual(['r1', 'r1']);
  });
  it('group labels follow group_by, inheritance and `...`', () => {
    const c = loadConfig(`
route:
  receiver: d
  group_by: [alertname]
  routes:
    - {receiver: d, matchers: ['a="1"'], routes: [{receiver: d, matchers: ['b="2"'], group_by: ['...']}]}
    - {receiver: d, matchers: ['a="2"'], group_by: [job, missing]}
receivers: [{name: d}]
`);
    const labels = { alertname: 'X', a: '1', b: '2', job: 'j' };
    const [deep] = matchRoutes(c.route, labels);
    expect(groupLabels(deep!, labels)).toEqual(labels);
    const [inherit] = matchRoutes(c.route, { alertname: 'X', a: '1' });
    expect(groupLabels(inherit!, { alertname: 'X', a: '1' })).toEqual({ alertname: 'X' });
    const [own] = matchRoutes(c.route, { alertname: 'X', a: '2', job: 'j' });
    expect(groupLabels(own!, { alertname: 'X', a: '2', job: 'j' })).toEqual({ job: 'j' });
  });
});

describe('inhibition', () => {
  const mk = (labels: Record<string, string>, endsAt = Infinity): Alert => ({
    fingerprint: fingerprint(labels), labels, annotations: {}, startsAt: 0, endsAt, updatedAt: 0, generatorURL: '', timeout: false,
  });
  it('a critical alert inhibits a warning with the same alertname', () => {
    const crit = mk({ alertname: 'A', severity: 'critical' });
    const inh = new Inhibitor(cfg.inhibitRules);
    inh.rebuild([crit, mk({ alertname: 'B', severity: 'critical' })]);
    expect(inh.inhibitedBy({ alertname: 'A', severity: 'warning' }, 0)).toBe(crit.fingerprint);
    expect(inh.inhibitedBy({ alertname: 'C', severity: 'warning' }, 0)).toBeUndefined();
    expect(inh.inhibitedBy({ alertname: 'A', severity: 'critical' }, 0)).toBeUndefined();
  });
  it('resolved sources do not inhibit; a missing equal label on both sides counts as equal', () => {
    const inh = new Inhibitor(cfg.inhibitRules);
    inh.rebuild([mk({ alertname: 'A', severity: 'critical' }, 10), mk({ severity: 'critical' })]);
    expect(inh.inhibitedBy({ alertname: 'A', severity: 'warning' }, 10)).toBeUndefined();
    expect(inh.inhibitedBy({ severity: 'warning' }, 10)).toBe(fingerprint({ severity: 'critical' }));
  });
  it('an alert matching both sides is not inhibited by itself or by another two-sided alert', () => {
    const c = loadConfig(`
route: {receiver: d}
receivers: [{name: d}]
inhibit_rules:
  - {source_matchers: ['x=~"1|2"'], target_matchers: ['x=~"1|2"'], equal: [alertname]}
`);
    const a = mk({ alertname: 'A', x: '1' });
    const b = mk({ alertname: 'A', x: '2' });
    const inh = new Inhibitor(c.inhibitRules);
    inh.rebuild([a, b]);
    expect(inh.inhibitedBy(a.labels, 0)).toBeUndefined();
  });
});
