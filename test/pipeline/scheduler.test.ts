/**
 * The pipeline's scheduler on a manual clock: jobs run when their cron expression is due, never
 * overlap themselves, keep their last run across a restart, and show in /api/system/health; bad
 * schedules fail the start with a clear message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/http/clock.js';
import { loadPipelineConfig } from '../../src/pipeline/config.js';
import { type FakeFeeds, startFakeFeeds } from '../fakes/rss.js';
import { defaultResponder, startPipeline } from './harness.js';

let feeds: FakeFeeds;
beforeAll(async () => {
  feeds = await startFakeFeeds();
});
afterAll(async () => {
  await feeds.close();
});

const T0 = Date.parse('2030-05-01T10:20:00Z');

describe('pipeline scheduler', () => {
  it('runs the research-and-draft job on its schedule, skips an overlapping one, and keeps the last run across a restart', async () => {
    const clock = new ManualClock(T0);
    const config = { schedules: { run: '0 * * * *', metrics: '30 * * * *' }, 'fetch-timeout': '2s', 'source-timeout': '3s' };
    let h = await startPipeline({ clock, config });
    await h.login();
    expect((await h.request('POST', '/api/sources', { body: { name: 'Blog', url: feeds.url('/rss.xml'), source_type: 'rss' } })).status).toBe(201);

    let health = (await h.request('GET', '/api/system/health', { token: false })).json;
    expect(health.schedules).toEqual([
      { job: 'run', schedule: '0 * * * *', next_run_at: '2030-05-01T11:00:00.000Z', last_run_at: null, last_status: null, last_error: null, running: false },
      { job: 'metrics', schedule: '30 * * * *', next_run_at: '2030-05-01T10:30:00.000Z', last_run_at: null, last_status: null, last_error: null, running: false },
    ]);

    // Not due yet: nothing runs.
    await h.handle.runSchedule();
    expect((await h.request('GET', '/api/pipeline/runs')).json).toHaveLength(0);

    // 10:30: the metrics job is due; there is no X token, so it fails with that reason.
    clock.advance(10 * 60_000);
    await h.handle.runSchedule();
    health = (await h.request('GET', '/api/system/health', { token: false })).json;
    expect(health.schedules[1]).toMatchObject({ last_run_at: '2030-05-01T10:30:00.000Z', last_status: 'failed', last_error: expect.stringMatching(/no X API token/), next_run_at: '2030-05-01T11:30:00.000Z' });

    // 11:00: a run, held open by a slow model so the 12:00 one finds it still going.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    h.gateway!.responder = async (req) => {
      await held;
      return defaultResponder(req);
    };
    clock.advance(30 * 60_000);
    const first = h.handle.runSchedule();
    await new Promise((r) => setTimeout(r, 200));
    expect((await h.request('GET', '/api/system/health', { token: false })).json.schedules[0].running).toBe(true);
    clock.advance(60 * 60_000);
    await h.handle.runSchedule();
    health = (await h.request('GET', '/api/system/health', { token: false })).json;
    expect(health.schedules[0]).toMatchObject({ last_status: 'skipped', last_run_at: '2030-05-01T12:00:00.000Z', running: true, next_run_at: '2030-05-01T13:00:00.000Z' });
    release();
    await first;
    const runs = (await h.request('GET', '/api/pipeline/runs')).json as { status: string }[];
    expect(runs.map((r) => r.status)).toEqual(['completed']);
    health = (await h.request('GET', '/api/system/health', { token: false })).json;
    expect(health.schedules[0]).toMatchObject({ last_status: 'ok', running: false });

    // The last run survives a restart.
    const dir = h.dir;
    await h.close({ keepDir: true });
    h = await startPipeline({ clock, config, dir });
    health = (await h.request('GET', '/api/system/health', { token: false })).json;
    expect(health.schedules[0]).toMatchObject({ last_status: 'ok', last_run_at: '2030-05-01T12:00:00.000Z', next_run_at: '2030-05-01T13:00:00.000Z' });
    await h.close();
  });

  it('refuses a bad schedule, an unknown job and an unknown time zone at start', () => {
    const load = (section: Record<string, unknown>) => () => loadPipelineConfig(section, {}, (c) => c);
    expect(load({ schedules: { run: 'every hour' } })).toThrow(/ctl\.yaml pipeline\.schedules\.run: "every hour" is not a cron expression/);
    expect(load({ schedules: { draft: '0 * * * *' } })).toThrow(/pipeline\.schedules\.draft: unknown job \(jobs: run, metrics, proposals\)/);
    expect(load({ schedules: { run: '0 9 * * 1' }, 'schedule-timezone': 'Mars/Olympus' })).toThrow(/unknown time zone "Mars\/Olympus"/);
    expect(load({ schedules: { run: '0 9 * * 1' }, 'schedule-timezone': 'Europe/Berlin' })().schedules).toEqual({ cron: { run: '0 9 * * 1' }, timezone: 'Europe/Berlin' });
  });
});
