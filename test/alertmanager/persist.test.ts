import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/index.js';
import { MIGRATIONS, SqlitePersistence, type StoredAlert } from '../../src/alertmanager/persist.js';

let dir: string;
let store: Store;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'am-persist-'));
  store = new Store(join(dir, 'am.db'), MIGRATIONS);
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const journalFiles = () => readdirSync(dir).filter((n) => n.startsWith('am.db-alerts.')).sort();

const alert = (fp: string, v: number): StoredAlert => ({
  fingerprint: fp, labels: { a: fp }, annotations: { v: String(v) }, startsAt: v, endsAt: v + 1, updatedAt: v, generatorURL: '', timeout: v % 2 === 0,
});

describe('alert journal', () => {
  it('replays the journal over the snapshot, last state winning, deletes included', () => {
    const p = new SqlitePersistence(store);
    p.write({ alerts: [alert('a', 1), alert('b', 1)] });
    p.write({ alerts: [alert('a', 2)] });
    p.write({ deleteAlerts: ['b'] });
    p.write({ alerts: [alert('c', 3)] });
    const loaded = new SqlitePersistence(store).loadAlerts().sort((x, y) => x.fingerprint.localeCompare(y.fingerprint));
    expect(loaded).toEqual([alert('a', 2), alert('c', 3)]);
  });

  it('compaction folds the journal into the snapshot, in chunks', () => {
    const p = new SqlitePersistence(store);
    const mem = new Map<string, StoredAlert>();
    for (let i = 0; i < 30; i++) {
      const batch = Array.from({ length: 50 }, (_, j) => alert(`f${(i * 50 + j) % 1200}`, i));
      for (const a of batch) mem.set(a.fingerprint, a);
      p.write({ alerts: batch });
    }
    p.write({ deleteAlerts: ['f0', 'f1'] });
    mem.delete('f0');
    mem.delete('f1');
    expect(p.pendingJournal).toBe(31);
    let steps = 0;
    while (p.compactStep((fp) => mem.get(fp), 100)) steps++;
    expect(steps).toBeGreaterThan(5);
    expect(p.pendingJournal).toBe(0);
    expect(journalFiles()).toEqual([]);
    const loaded = new SqlitePersistence(store).loadAlerts();
    expect(new Map(loaded.map((a) => [a.fingerprint, a]))).toEqual(mem);
  });

  it('compaction folds new fingerprints noted from `previous` with the changed and deleted ones', () => {
    const p = new SqlitePersistence(store);
    const mem = new Map<string, StoredAlert>();
    // The way AlertStore.put writes: `previous` holds what was stored before, undefined if new.
    const put = (batch: StoredAlert[]) => {
      const previous = batch.map((a) => mem.get(a.fingerprint));
      for (const a of batch) mem.set(a.fingerprint, a);
      p.write({ alerts: batch, previous });
    };
    put([alert('n1', 1), alert('n2', 1), alert('n3', 1)]); // new
    put([alert('n1', 2), alert('n4', 2)]); // changed, new
    p.write({ deleteAlerts: ['n2'] });
    mem.delete('n2');
    put([alert('n2', 3)]); // new again after its deletion
    p.write({ deleteAlerts: ['n3'] });
    mem.delete('n3');
    p.compact((fp) => mem.get(fp));
    expect(p.pendingJournal).toBe(0);
    expect(journalFiles()).toEqual([]);
    const loaded = new SqlitePersistence(store).loadAlerts();
    expect(new Map(loaded.map((a) => [a.fingerprint, a]))).toEqual(mem);
    // And the next compaction starts from nothing noted.
    put([alert('n5', 4)]);
    p.compact((fp) => mem.get(fp));
    expect(new Map(new SqlitePersistence(store).loadAlerts().map((a) => [a.fingerprint, a]))).toEqual(mem);
  });

  it('tracks when it was last written and what the database file still lacks', () => {
    const p = new SqlitePersistence(store);
    expect(p.uncheckpointedSince).toBeUndefined();
    const before = performance.now();
    p.write({ alerts: [alert('a', 1)] });
    const first = p.uncheckpointedSince!;
    expect(first).toBeGreaterThanOrEqual(before);
    expect(p.lastWriteAt).toBeGreaterThanOrEqual(first);
    p.write({ alerts: [alert('b', 1)] });
    expect(p.uncheckpointedSince).toBe(first); // the oldest write counts
    const mem = new Map([['a', alert('a', 1)], ['b', alert('b', 1)]]);
    expect(p.compactStep((fp) => mem.get(fp), 1)).toBe(true);
    p.write({ alerts: [alert('c', 2)] }); // arrives while the compaction is under way
    mem.set('c', alert('c', 2));
    while (p.compactStep((fp) => mem.get(fp), 1));
    // The row written meanwhile is still in the journal: still due.
    expect(p.pendingJournal).toBe(1);
    expect(p.uncheckpointedSince).toBeDefined();
    while (p.compactStep((fp) => mem.get(fp), 1));
    expect(p.pendingJournal).toBe(0);
    expect(p.uncheckpointedSince).toBeUndefined();
    // A journal left by an earlier run is due at start-up.
    p.write({ alerts: [alert('d', 3)] });
    const again = new SqlitePersistence(store);
    again.loadAlerts();
    expect(again.uncheckpointedSince).toBeDefined();
  });

  it('a compaction cut short (crash) still loads the latest state', () => {
    const p = new SqlitePersistence(store);
    const mem = new Map<string, StoredAlert>();
    const put = (a: StoredAlert) => {
      mem.set(a.fingerprint, a);
      p.write({ alerts: [a] });
    };
    for (let i = 0; i < 10; i++) put(alert(`x${i}`, 1));
    // one chunk of a compaction (after its start and the sorting of its fingerprints), then new
    // writes, then "crash" before the journal is trimmed
    for (let i = 0; i < 3; i++) expect(p.compactStep((fp) => mem.get(fp), 3)).toBe(true);
    expect((store.prepare('SELECT COUNT(*) AS n FROM alerts').get() as { n: number }).n).toBe(3);
    put(alert('x0', 5));
    put(alert('x9', 6));
    const loaded = new SqlitePersistence(store).loadAlerts();
    expect(new Map(loaded.map((a) => [a.fingerprint, a]))).toEqual(mem);
  });

  it('silences are rows of their own', () => {
    const p = new SqlitePersistence(store);
    const s = { id: 's1', matchers: [{ name: 'a', value: 'b', isRegex: false, isEqual: true }], startsAt: 1, endsAt: 2, updatedAt: 1, createdBy: 'me', comment: 'c' };
    p.write({ silences: [s] });
    expect(new SqlitePersistence(store).loadSilences()).toEqual([s]);
    p.write({ deleteSilences: ['s1'] });
    expect(new SqlitePersistence(store).loadSilences()).toEqual([]);
  });

  it('journals each batch as one record in a file beside the database, not in SQLite', () => {
    const p = new SqlitePersistence(store);
    p.write({ alerts: [alert('a', 1), alert('b', 1)] });
    p.write({ deleteAlerts: ['b'] });
    expect(journalFiles()).toEqual(['am.db-alerts.0']);
    expect((store.prepare('SELECT COUNT(*) AS n FROM alert_journal').get() as { n: number }).n).toBe(0);
    // A new process never appends to a file it found (its tail may be torn): it opens the next.
    const again = new SqlitePersistence(store);
    expect(again.loadAlerts()).toEqual([alert('a', 1)]);
    again.write({ alerts: [alert('c', 2)] });
    expect(journalFiles()).toEqual(['am.db-alerts.0', 'am.db-alerts.1']);
    expect(new SqlitePersistence(store).loadAlerts().map((a) => a.fingerprint).sort()).toEqual(['a', 'c']);
  });

  it('stops reading a file at a record cut short or damaged (a machine crash), and reads the next file', () => {
    const p = new SqlitePersistence(store);
    p.write({ alerts: [alert('a', 1)] });
    p.write({ alerts: [alert('b', 1)] });
    const file = join(dir, 'am.db-alerts.0');
    const whole = readFileSync(file).length;
    p.write({ alerts: [alert('c', 1)] });
    const withC = readFileSync(file);
    // Cut the last record short.
    truncateSync(file, withC.length - 3);
    expect(new SqlitePersistence(store).loadAlerts().map((a) => a.fingerprint).sort()).toEqual(['a', 'b']);
    // The same record whole but with a flipped byte: its checksum fails.
    const damaged = Buffer.from(withC);
    damaged[whole + 20] = damaged[whole + 20]! ^ 0xff;
    writeFileSync(file, damaged);
    appendFileSync(file, Buffer.alloc(64)); // zeros after it, as a crash can leave
    const next = new SqlitePersistence(store);
    expect(next.loadAlerts().map((a) => a.fingerprint).sort()).toEqual(['a', 'b']);
    next.write({ alerts: [alert('d', 2)] });
    expect(new SqlitePersistence(store).loadAlerts().map((a) => a.fingerprint).sort()).toEqual(['a', 'b', 'd']);
  });

  it('replays journal rows an earlier version left in the table before the files, and folds them away', () => {
    store.prepare('INSERT INTO alert_journal (data) VALUES (?)').run(JSON.stringify({ a: [['a', { a: 'a' }, { v: '1' }, 1, 2, 1, '', 0]] }));
    store.prepare('INSERT INTO alert_journal (data) VALUES (?)').run(JSON.stringify({ a: [['b', { a: 'b' }, { v: '1' }, 1, 2, 1, '', 0]] }));
    const p = new SqlitePersistence(store);
    p.write({ alerts: [alert('a', 4)] }); // newer than the table's row for a
    const mem = new Map(new SqlitePersistence(store).loadAlerts().map((a) => [a.fingerprint, a]));
    expect(mem.get('a')).toEqual(alert('a', 4));
    expect(mem.get('b')?.annotations).toEqual({ v: '1' });
    const q = new SqlitePersistence(store);
    q.loadAlerts();
    expect(q.pendingJournal).toBe(3);
    q.compact((fp) => mem.get(fp));
    expect(q.pendingJournal).toBe(0);
    expect((store.prepare('SELECT COUNT(*) AS n FROM alert_journal').get() as { n: number }).n).toBe(0);
    expect(journalFiles()).toEqual([]);
    expect(new Map(new SqlitePersistence(store).loadAlerts().map((a) => [a.fingerprint, a]))).toEqual(mem);
  });
});
