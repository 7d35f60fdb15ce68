import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';

const KIB = 1024;
const alert = (name: string, annotationBytes: number, endsAt?: string) => ({
  labels: { alertname: name },
  annotations: { big: 'x'.repeat(annotationBytes) },
  ...(endsAt ? { endsAt } : {}),
});

/** The alert manager's memory bounds against hostile input (Alertmanager has none). */
describe('alert size and storage limits', () => {
  let d: TestDaemon;
  const post = (body: unknown) => d.request('alertmanager', 'POST', '/api/v2/alerts', body);
  const journalBytes = () =>
    readdirSync(join(d.dir, 'database'))
      .filter((f) => f.startsWith('alertmanager.db-alerts.'))
      .reduce((n, f) => n + statSync(join(d.dir, 'database', f)).size, 0);
  beforeAll(async () => {
    d = await startDaemon({
      ctlYaml: { alertmanager: { 'max-alert-bytes': 64 * KIB, 'max-batch-bytes': 256 * KIB, 'max-stored-bytes': 1024 * KIB, 'max-journal-bytes': 512 * KIB } },
    });
  });
  afterAll(async () => {
    await d?.cleanup();
  });

  it('refuses one alert over max-alert-bytes with 400, storing the rest of its batch', async () => {
    const r = await post([alert('Small', 100), alert('Huge', 70 * KIB)]);
    expect(r.status).toBe(400);
    expect(r.json).toMatch(/alert too large: \d+ bytes .*max-alert-bytes 65536/);
    const names = (await d.request('alertmanager', 'GET', '/api/v2/alerts')).json.map((a: { labels: { alertname: string } }) => a.labels.alertname);
    expect(names).toEqual(['Small']);
  });

  it('refuses a body over max-batch-bytes with 400 in the framework format', async () => {
    const r = await post(Array.from({ length: 6 }, (_, i) => alert(`B${i}`, 50 * KIB)));
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ code: 400, message: expect.stringMatching(/larger than 262144 bytes \(max-batch-bytes\)/) });
  });

  it('once max-stored-bytes is reached, new alerts are refused but stored ones can still be re-posted and resolved', async () => {
    let refused = 0;
    for (let i = 0; i < 30; i++) {
      const r = await post([alert(`Fill${i}`, 60 * KIB)]);
      if (r.status === 400) {
        expect(r.json).toMatch(/alert store full/);
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(10);
    // A stored alert's re-post and its resolution always go through.
    expect((await post([alert('Fill0', 60 * KIB)])).status).toBe(200);
    expect((await post([alert('Fill0', 60 * KIB, new Date(Date.now() - 1000).toISOString())])).status).toBe(200);
    const stored = (await d.request('alertmanager', 'GET', '/api/v2/alerts')).json as unknown[];
    expect(stored.length).toBeLessThan(20);
  });

  it('keeps the journal near max-journal-bytes however much is posted, and replays it at start', async () => {
    // Re-posting the stored alerts writes journal records without growing the store.
    for (let round = 0; round < 40; round++) {
      await post(Array.from({ length: 3 }, (_, i) => alert(`Fill${i + 1}`, 60 * KIB)));
      if (round % 10 === 9) await new Promise((r) => setTimeout(r, 1200)); // the maintenance tick folds it
    }
    await new Promise((r) => setTimeout(r, 1500));
    expect(journalBytes()).toBeLessThan(2 * 512 * KIB);
    const before = (await d.request('alertmanager', 'GET', '/api/v2/alerts')).json.length;
    await d.kill9();
    const t0 = Date.now();
    await d.start();
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect((await d.request('alertmanager', 'GET', '/api/v2/alerts')).json.length).toBe(before);
  });
});
