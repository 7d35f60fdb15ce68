/**
 * GET /api/v2/alerts and /alerts/groups are rendered piece by piece so that concurrent answers on a
 * full store do not each hold the whole document: a piece is cut after about 64 KiB of text, however
 * few alerts that is, and the pieces together are the same bytes as one rendering.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/http/clock.js';
import { Store } from '../../src/store/index.js';
import { MIGRATIONS, SqlitePersistence } from '../../src/alertmanager/persist.js';
import { Engine, PAUSE, type AlertQuery } from '../../src/alertmanager/engine.js';
import { parseMatcher } from '../../src/alertmanager/matchers.js';
import { loadConfig } from '../../src/alertmanager/config/load.js';
import { decodePostableAlerts } from '../../src/alertmanager/api/bodies.js';

const T0 = Date.parse('2030-01-01T00:00:00Z');
const CONFIG = 'route:\n  receiver: default\n  group_by: [team]\nreceivers:\n  - name: default\n';
const ALL: AlertQuery = { filter: [], active: true, silenced: true, inhibited: true };

let dir: string;
let store: Store;
let engine: Engine;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'am-pieces-'));
  store = new Store(join(dir, 'am.db'), MIGRATIONS);
  engine = new Engine(loadConfig(CONFIG), new SqlitePersistence(store), new ManualClock(T0));
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function post(alerts: unknown[]): void {
  const body = Buffer.from(JSON.stringify(alerts));
  const { alerts: input, plain } = decodePostableAlerts(body);
  expect(engine.postAlerts(input, plain ? body : undefined)).toEqual([]);
}

describe('alerts rendered in bounded pieces', () => {
  it('cuts pieces at about 64 KiB even when each alert is large', () => {
    const big = 'é'.repeat(50_000); // about 100 KiB of UTF-8 per alert
    post(Array.from({ length: 40 }, (_, i) => ({ labels: { alertname: 'Big', n: String(i), team: i % 2 ? 'a' : 'b' }, annotations: { text: big } })));
    for (const render of [() => engine.alertsJson(ALL), () => engine.groupsJson(ALL)]) {
      const pieces = [...render()];
      const longest = Math.max(...pieces.map((p) => p.length));
      // One piece may pass 64 Ki characters by at most one alert (50,000 characters and its fields).
      expect(longest).toBeLessThan(65_536 + 51_000);
      expect(pieces.length).toBeGreaterThan(15);
      const doc = JSON.parse(pieces.join(''));
      expect(doc.length).toBeGreaterThan(0);
      // The same bytes as before: a rendering is deterministic, however it is cut.
      expect(pieces.join('')).toBe([...render()].join(''));
    }
    expect(JSON.parse([...engine.alertsJson(ALL)].join(''))).toHaveLength(40);
  });

  it('keeps small alerts together (about 200 per piece)', () => {
    post(Array.from({ length: 500 }, (_, i) => ({ labels: { alertname: 'Small', n: String(i), team: 'a' } })));
    const pieces = [...engine.alertsJson(ALL)];
    expect(pieces.length).toBeLessThan(10);
    expect(JSON.parse(pieces.join(''))).toHaveLength(500);
  });

  it('filters each alert as it renders it, with a pause point every 512 alerts looked at, whatever the filter keeps', () => {
    post(Array.from({ length: 2000 }, (_, i) => ({ labels: { alertname: 'Small', n: String(i), team: i % 2 ? 'a' : 'b' } })));
    for (const render of [() => engine.alertsJson({ ...ALL, filter: [parseMatcher('alertname="None"')] }), () => engine.groupsJson({ ...ALL, filter: [parseMatcher('alertname="None"')] })]) {
      const pieces = [...render()];
      expect(pieces.filter((p) => p === PAUSE).length).toBeGreaterThanOrEqual(3);
      expect(pieces.join('')).toBe('[]\n');
    }
    // The alerts are those stored when the answer was asked for, however late it is rendered.
    const asked = engine.alertsJson(ALL);
    post([{ labels: { alertname: 'Later', n: 'x', team: 'a' } }]);
    expect(JSON.parse([...asked].join(''))).toHaveLength(2000);
  });
});
