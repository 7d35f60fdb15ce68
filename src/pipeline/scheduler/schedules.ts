/**
 * ctl.yaml `pipeline.schedules`: when the pipeline runs by itself, as cron expressions (five
 * fields, or six with seconds; parsed by cron-parser) in `pipeline.schedule-timezone` (UTC by
 * default). Jobs: `run` (research and draft a batch), `metrics` (fetch X metrics of recent posts),
 * `proposals` (ask the model for style proposals). A job without an expression does not run by itself.
 */
import { CronExpressionParser } from 'cron-parser';

export const JOBS = ['run', 'metrics', 'proposals'] as const;
export type Job = (typeof JOBS)[number];

export interface ScheduleConfig {
  cron: Partial<Record<Job, string>>;
  timezone: string;
}

export function parseSchedules(raw: unknown, tz: unknown, where: (k: string) => string): ScheduleConfig {
  const timezone = tz === undefined || tz === null ? 'UTC' : String(tz);
  // UTC (the default) needs no check; any other zone is checked by ICU, whose zone and locale data
  // a daemon then maps (~8 MiB resident, ~20 ms at start): only where a zone is set.
  try {
    if (timezone !== 'UTC') new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw new Error(`${where('schedule-timezone')}: unknown time zone ${JSON.stringify(timezone)}`);
  }
  const cron: Partial<Record<Job, string>> = {};
  if (raw === undefined || raw === null) return { cron, timezone };
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new Error(`${where('schedules')} must be a mapping of job to cron expression (jobs: ${JOBS.join(', ')})`);
  for (const [job, expr] of Object.entries(raw as Record<string, unknown>)) {
    if (!(JOBS as readonly string[]).includes(job)) throw new Error(`${where(`schedules.${job}`)}: unknown job (jobs: ${JOBS.join(', ')})`);
    if (expr === null || expr === '' || expr === false) continue;
    if (typeof expr !== 'string') throw new Error(`${where(`schedules.${job}`)} must be a cron expression like "0 */6 * * *"`);
    try {
      CronExpressionParser.parse(expr, { tz: timezone, strict: false });
    } catch (e) {
      throw new Error(`${where(`schedules.${job}`)}: ${JSON.stringify(expr)} is not a cron expression (${(e as Error).message})`);
    }
    cron[job as Job] = expr;
  }
  return { cron, timezone };
}

/** The first time after `after` the expression fires. */
export function nextAt(expr: string, timezone: string, after: number): number {
  return CronExpressionParser.parse(expr, { currentDate: new Date(after), tz: timezone }).next().getTime();
}
