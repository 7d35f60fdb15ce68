/**
 * Alert batches journaled as their request body plus the outcome of each element (raw-batch.ts):
 * after a crash (no compaction, no clean stop) the journal must give back exactly the states the
 * API acknowledged, through merges, duplicates, rejected elements and a clock going back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/http/clock.js';
import { Store } from '../../src/store/index.js';
import { MIGRATIONS, SqlitePersistence, type StoredAlert } from '../../src/alertmanager/persist.js';
import { AlertJournalFiles } from '../../src/alertmanager/alert-journal.js';
import { Engine } from '../../src/alertmanager/engine.js';
import { loadConfig } from '../../src/alertmanager/config/load.js';
import { decodePostableAlerts } from '../../src/alertmanager/api/bodies.js';

const T0 = Date.parse('2030-01-01T00:00:00Z');
const CONFIG = 'route:\n  receiver: default\nreceivers:\n  - name: default\n';
const iso = (ms: number) => new Date(ms).toISOString();

let dir: string;
let store: Store;
let clock: ManualClock;
let engine: Engine;
let persistence: SqlitePersistence;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'am-raw-'));
  store = new Store(join(dir, 'am.db'), MIGRATIONS);
  clock = new ManualClock(T0);
  persistence = new SqlitePersistence(store);
  engine = new Engine(loadConfig(CONFIG), persistence, clock);
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** POST /alerts as the route does it: decode the body, hand the body along when it was plain. */
function post(alerts: unknown[]): string[] {
  const body = Buffer.from(JSON.stringify(alerts));
  const { alerts: input, plain } = decodePostableAlerts(body);
  return engine.postAlerts(input, plain ? body : undefined);
}

const plainState = (a: StoredAlert) => {
  const { fingerprint, labels, annotations, startsAt, endsAt, updatedAt, generatorURL, timeout } = a;
  return { fingerprint, labels: { ...labels }, annotations: { ...annotations }, startsAt, endsAt, updatedAt, generatorURL, timeout };
};
const byFp = (list: readonly StoredAlert[]) => new Map(list.map((a) => [a.fingerprint, plainState(a)]));
const rows = () => {
  const records = new AlertJournalFiles(join(dir, 'am.db')).readAll();
  return { n: records.length, raw: records.filter((r) => r.body !== undefined).length };
};

describe('raw alert journal', () => {
  it('replays to the acknowledged states after a crash', () => {
    post([
      { labels: { alertname: 'A', instance: 'i1' }, annotations: { summary: 's1' } },
      { labels: { alertname: 'B', empty: '' }, startsAt: iso(T0 - 60_000), endsAt: iso(T0 + 3_600_000), generatorURL: 'http://x/graph' },
      { labels: { 'bad-name': 'x' } }, // rejected (invalid label name): no state
      { labels: { alertname: 'C' }, endsAt: iso(T0 + 600_000) },
    ]);
    clock.advance(30_000);
    // A re-posted (timeout end refreshed, merge keeps the first start), C twice in one batch
    // (the second merges into the first), D new.
    post([
      { labels: { alertname: 'A', instance: 'i1' }, annotations: { summary: 's2' } },
      { labels: { alertname: 'C' }, startsAt: iso(T0 + 10_000), endsAt: iso(T0 + 900_000) },
      { labels: { alertname: 'C' }, startsAt: iso(T0 + 20_000), endsAt: iso(T0 + 300_000) },
      { labels: { alertname: 'D' } },
    ]);
    clock.advance(30_000);
    post([{ labels: { alertname: 'B' }, endsAt: iso(T0 + 60_000) }]); // resolves B
    expect(rows()).toEqual({ n: 3, raw: 3 });
    const loaded = new SqlitePersistence(store).loadAlerts();
    expect(byFp(loaded)).toEqual(byFp(engine.alerts.list()));
    expect(loaded).toHaveLength(4);
  });

  it("keeps the Local zone of the times it picked (0.25's time.Now()) and of +00:00, still journaled raw", () => {
    post([
      { labels: { alertname: 'A' } }, // startsAt = now, endsAt = now + resolve_timeout: both Local
      { labels: { alertname: 'B' }, endsAt: iso(T0 + 600_000) }, // startsAt = the posted endsAt (Z: UTC)
      { labels: { alertname: 'C' }, startsAt: '2029-12-31T23:00:00+00:00' }, // posted Local, picked end Local
      { labels: { alertname: 'D' }, startsAt: iso(T0 - 1000), endsAt: iso(T0 + 1000) }, // both UTC
    ]);
    const zones = (list: readonly StoredAlert[]) =>
      Object.fromEntries(list.map((a) => [a.labels.alertname, [a.startsAtOff, a.endsAtOff]]));
    const want = { A: [0, 0], B: [undefined, undefined], C: [0, 0], D: [undefined, undefined] };
    expect(zones(engine.alerts.list())).toEqual(want);
    expect(rows()).toEqual({ n: 1, raw: 1 });
    expect(zones(new SqlitePersistence(store).loadAlerts())).toEqual(want);
  });

  it('keeps the nanoseconds past the millisecond of posted times, raw rows, JSON rows and compaction alike', () => {
    const ns = (list: readonly StoredAlert[]) => Object.fromEntries(list.map((a) => [a.labels.alertname, [a.startsAt, a.startsAtNs ?? 0, a.endsAt, a.endsAtNs ?? 0]]));
    const at = (ms: number, frac: string) => iso(ms).replace(/\.\d{3}Z$/, `.${frac}Z`);
    post([
      { labels: { alertname: 'A' }, startsAt: at(T0 - 60_000, '123456789'), endsAt: at(T0 + 600_000, '987654321') },
      { labels: { alertname: 'B' }, startsAt: at(T0 - 60_000, '1') },
      { labels: { alertname: 'C' }, startsAt: at(T0 - 60_000, '000000001'), endsAt: at(T0 - 1000, '999999999') },
    ]);
    // Through the slow (JSON row) path too: a lower-case field name.
    post([{ Labels: { alertname: 'D' }, startsAt: at(T0 - 60_000, '000999') }]);
    const want = {
      A: [T0 - 60_000 + 123, 456789, T0 + 600_000 + 987, 654321],
      B: [T0 - 60_000 + 100, 0, T0 + 300_000, 0],
      C: [T0 - 60_000, 1, T0 - 1000 + 999, 999999],
      D: [T0 - 60_000, 999_000, T0 + 300_000, 0],
    };
    expect(ns(engine.alerts.list())).toEqual(want);
    expect(rows()).toEqual({ n: 2, raw: 1 });
    expect(ns(new SqlitePersistence(store).loadAlerts())).toEqual(want);
    while (persistence.compactStep((fp) => engine.alerts.get(fp), 100));
    expect(ns(new SqlitePersistence(store).loadAlerts())).toEqual(want);
  });

  it('keeps the zone offsets times were posted with, through merges, JSON rows and compaction', () => {
    const zones = (list: readonly StoredAlert[]) =>
      Object.fromEntries(list.map((a) => [a.labels.alertname, [a.startsAt, a.startsAtOff ?? 'Z', a.endsAt, a.endsAtOff ?? 'Z']]));
    const off = (ms: number, zone: string) => {
      const m = /^([+-])(\d\d):(\d\d)$/.exec(zone)!;
      const min = (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
      return iso(ms + min * 60_000).replace(/Z$/, zone);
    };
    post([
      { labels: { alertname: 'A' }, startsAt: off(T0 - 60_000, '+02:00'), endsAt: off(T0 + 600_000, '-05:30') },
      { labels: { alertname: 'B' }, startsAt: off(T0 - 60_000, '+00:00') },
      { labels: { alertname: 'C' }, startsAt: iso(T0 - 60_000) },
      { labels: { alertname: 'E' }, endsAt: off(T0 + 600_000, '+14:00') },
    ]);
    clock.advance(1000);
    // A later post: the merge keeps A's earlier start (and its zone), takes the later end's.
    post([{ labels: { alertname: 'A' }, startsAt: iso(T0), endsAt: off(T0 + 900_000, '+09:45') }]);
    const want = {
      A: [T0 - 60_000, 120, T0 + 900_000, 585],
      // The end picked from now + resolve_timeout is Local (offset 0), as 0.25's time.Now().
      B: [T0 - 60_000, 0, T0 + 300_000, 0],
      C: [T0 - 60_000, 'Z', T0 + 300_000, 0],
      // No start: it is the end, zone and all (0.25's ProcessAlerts).
      E: [T0 + 600_000, 840, T0 + 600_000, 840],
    };
    expect(zones(engine.alerts.list())).toEqual(want);
    // The raw journal has room for the Local zone only: these batches are JSON rows.
    expect(rows()).toEqual({ n: 2, raw: 0 });
    expect(zones(new SqlitePersistence(store).loadAlerts())).toEqual(want);
    while (persistence.compactStep((fp) => engine.alerts.get(fp), 100));
    expect(zones(new SqlitePersistence(store).loadAlerts())).toEqual(want);
  });

  it('falls back to a JSON row when a merge keeps the stored alert (clock went back)', () => {
    post([{ labels: { alertname: 'A' }, annotations: { v: '1' }, startsAt: iso(T0), endsAt: iso(T0 + 600_000) }]);
    clock.set(T0 - 60_000);
    post([{ labels: { alertname: 'A' }, annotations: { v: '2' }, startsAt: iso(T0 + 60_000), endsAt: iso(T0 + 300_000) }]);
    expect(rows()).toEqual({ n: 2, raw: 1 });
    expect(byFp(new SqlitePersistence(store).loadAlerts())).toEqual(byFp(engine.alerts.list()));
    expect(engine.alerts.list()[0]!.annotations).toEqual({ v: '1' }); // the younger, stored one won
  });

  it('bodies outside the plain path are journaled as JSON and replay the same', () => {
    // A lower-case field name is matched as Go does (slow path): not journaled raw.
    post([{ Labels: { alertname: 'Slow' } }, { labels: { alertname: 'Fast' } }]);
    expect(rows()).toEqual({ n: 1, raw: 0 });
    expect(byFp(new SqlitePersistence(store).loadAlerts())).toEqual(byFp(engine.alerts.list()));
  });

  it('compaction folds raw rows like any other, and a cut-short one still loads the latest state', () => {
    for (let i = 0; i < 20; i++) {
      post(Array.from({ length: 30 }, (_, j) => ({ labels: { alertname: `N${(i * 30 + j) % 250}` }, annotations: { round: String(i) } })));
      clock.advance(1000);
    }
    // The engine's own persistence compacts (one writer per journal, as in the daemon).
    const p = persistence;
    const current = (fp: string) => engine.alerts.get(fp);
    expect(p.compactStep(current, 100)).toBe(true);
    post([{ labels: { alertname: 'N1' }, annotations: { round: 'late' } }]);
    expect(byFp(new SqlitePersistence(store).loadAlerts())).toEqual(byFp(engine.alerts.list()));
    while (p.compactStep(current, 100));
    expect(byFp(new SqlitePersistence(store).loadAlerts())).toEqual(byFp(engine.alerts.list()));
  });
});
