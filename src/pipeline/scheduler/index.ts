/**
 * The pipeline's scheduler: each job of `pipeline.schedules` runs when its cron expression comes
 * due. A job never overlaps itself (a run still going when the next one is due is skipped, and the
 * skip recorded); the last run's time, outcome and error are kept in the database, so they survive
 * a restart; runs missed while the daemon was down are not made up (the next due time counts).
 * `tick()` runs what is due at the clock's time (the timer calls it; tests call it on a manual clock).
 * With several daemons on one database (`lease`), a due job runs on the daemon holding its lease
 * (`pipeline:run`, `pipeline:metrics`, `pipeline:proposals`) and is skipped, unrecorded, elsewhere.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../http/clock.js';
import type { SettingsRepo } from '../data/settings.js';
import { JOBS, nextAt, type Job, type ScheduleConfig } from './schedules.js';

export interface JobState {
  job: Job;
  schedule: string;
  next_run_at: string;
  last_run_at: string | null;
  last_status: 'ok' | 'failed' | 'skipped' | null;
  last_error: string | null;
  running: boolean;
}

interface Persisted {
  last_run_at: string;
  last_status: 'ok' | 'failed' | 'skipped';
  last_error: string | null;
}

/** The longest a timer is set for (re-checked then), so a clock change is noticed. */
const MAX_WAIT_MS = 60_000;

export class PipelineScheduler {
  private readonly next = new Map<Job, number>();
  private readonly running = new Set<Job>();
  private timer?: NodeJS.Timeout;
  private stopped = true;

  constructor(
    private readonly config: ScheduleConfig,
    private readonly jobs: Record<Job, () => Promise<unknown>>,
    private readonly settings: SettingsRepo,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly lease?: (job: Job) => Promise<boolean>,
  ) {
    const now = clock.now();
    for (const job of JOBS) {
      const expr = config.cron[job];
      if (expr) this.next.set(job, nextAt(expr, config.timezone, now));
    }
  }

  start(): void {
    if (this.next.size === 0) return;
    this.stopped = false;
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private arm(): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    const soonest = Math.min(...this.next.values());
    this.timer = setTimeout(() => {
      void this.tick().finally(() => this.arm());
    }, Math.max(0, Math.min(MAX_WAIT_MS, soonest - this.clock.now())));
    this.timer.unref();
  }

  /** Start every job that is due now; resolves when the ones started have finished. */
  async tick(): Promise<void> {
    const now = this.clock.now();
    const started: Promise<void>[] = [];
    for (const [job, at] of this.next) {
      if (at > now) continue;
      this.next.set(job, nextAt(this.config.cron[job]!, this.config.timezone, now));
      if (this.running.has(job)) {
        await this.record(job, 'skipped', 'the previous run of this job was still going');
        this.log.warn({ job }, `pipeline schedule: ${job} skipped, its previous run is still going`);
        continue;
      }
      started.push(this.runJob(job));
    }
    await Promise.all(started);
  }

  private async runJob(job: Job): Promise<void> {
    this.running.add(job);
    try {
      if (this.lease && !(await this.lease(job))) return;
      await this.jobs[job]();
      await this.record(job, 'ok', null);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      await this.record(job, 'failed', msg).catch(() => undefined);
      this.log.warn({ job, err: msg }, `pipeline schedule: ${job} failed: ${msg}`);
    } finally {
      this.running.delete(job);
    }
  }

  private async record(job: Job, status: Persisted['last_status'], error: string | null): Promise<void> {
    const value: Persisted = { last_run_at: new Date(this.clock.now()).toISOString(), last_status: status, last_error: error };
    await this.settings.set(`schedule.${job}`, JSON.stringify(value));
  }

  private async persisted(job: Job): Promise<Persisted | undefined> {
    const text = await this.settings.get(`schedule.${job}`);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as Persisted;
    } catch {
      return undefined;
    }
  }

  /** Every scheduled job with its next and last run (health and `ctl pipeline status`). */
  async states(): Promise<JobState[]> {
    const out: JobState[] = [];
    for (const [job, at] of this.next) {
      const p = await this.persisted(job);
      out.push({
        job,
        schedule: this.config.cron[job]!,
        next_run_at: new Date(at).toISOString(),
        last_run_at: p?.last_run_at ?? null,
        last_status: p?.last_status ?? null,
        last_error: p?.last_error ?? null,
        running: this.running.has(job),
      });
    }
    return out;
  }
}
