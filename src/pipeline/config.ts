/**
 * The `pipeline:` section of ctl.yaml (plus the environment), checked once at start-up.
 * Every outbound base URL is configuration; the password is hashed here and never kept in clear.
 */
import { hashPassword, isPasswordHash } from './auth/password.js';
import { parseDuration } from '../http/duration.js';
import { JOBS, parseSchedules, type ScheduleConfig } from './scheduler/schedules.js';

export interface PipelineConfig {
  /** scrypt hash of the owner password, or null when login is disabled. */
  ownerPasswordHash: string | null;
  hnApiBaseUrl: string;
  /** Items read per source and run (Hacker News list entries, feed entries). */
  maxItemsPerSource: number;
  xApiBaseUrl: string;
  xApiToken: string | null;
  /** Per-request timeout for source and X API traffic, ms. */
  fetchTimeoutMs: number;
  /** Overall deadline for one source (all its requests), ms. */
  sourceTimeoutMs: number;
  /** Largest feed / API body read, bytes. */
  maxResponseBytes: number;
  /** Items drafted per run (one post per item). */
  batchSize: number;
  /** Weighted character limit of one post (X counts URLs as 23, wide characters as 2). */
  maxPostLength: number;
  maxPageSize: number;
  maxImageBytes: number;
  /** How often due scheduled posts are looked for, ms. */
  publishIntervalMs: number;
  /** Timeout of one model call, ms. */
  llmTimeoutMs: number;
  /** Only posts published in this many days get fetched metrics (X limits non-public metrics to 30 days). */
  metricsWindowDays: number;
  loginRateLimit: { limit: number; interval: number };
  /** Model from the environment (PIPELINE_MODEL); the database value wins. */
  envModel: string | null;
  /** When jobs run by themselves (`schedules`, `schedule-timezone`). */
  schedules: ScheduleConfig;
}

const KNOWN = new Set([
  'owner-password',
  'owner-password-hash',
  'hn-api-base-url',
  'max-items-per-source',
  'x-api-base-url',
  'x-api-token',
  'fetch-timeout',
  'source-timeout',
  'max-response-bytes',
  'batch-size',
  'max-post-length',
  'max-page-size',
  'max-image-bytes',
  'publish-interval',
  'llm-timeout',
  'metrics-window-days',
  'login-rate-limit',
  'schedules',
  'schedule-timezone',
]);

/** The keys loadPipelineConfig reads (ctl.yaml `pipeline:`), for the daemon's check of the whole file. */
export const PIPELINE_CONFIG_KEYS = {
  ...Object.fromEntries([...KNOWN].map((k) => [k, true as const])),
  'login-rate-limit': { limit: true, interval: true } as const,
  schedules: Object.fromEntries(JOBS.map((j) => [j, true as const])),
};

export const DEFAULT_LOGIN_RATE_LIMIT = { limit: 10, interval: 60 };

/**
 * `hashClear` turns a clear `owner-password` into its hash; the component passes one that keeps the
 * hash in the state dir (stableHashForPassword) so tokens outlive a restart.
 */
export function loadPipelineConfig(section: Record<string, unknown>, env: NodeJS.ProcessEnv, hashClear: (clear: string) => string = hashPassword): PipelineConfig {
  const where = (k: string) => `ctl.yaml pipeline.${k}`;
  for (const k of Object.keys(section)) {
    if (!KNOWN.has(k)) throw new Error(`${where(k)}: unknown setting (known: ${[...KNOWN].join(', ')})`);
  }
  const str = (k: string): string | undefined => {
    const v = section[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw new Error(`${where(k)} must be a string`);
    return v;
  };
  const int = (k: string, def: number, min: number, max: number): number => {
    const v = section[k];
    if (v === undefined || v === null) return def;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw new Error(`${where(k)} must be an integer from ${min} to ${max}`);
    }
    return v;
  };
  const dur = (k: string, defMs: number): number => {
    const v = section[k];
    if (v === undefined || v === null) return defMs;
    const ms = parseDuration(v);
    if (ms === null || ms <= 0) throw new Error(`${where(k)} must be a positive duration like 10s or 500ms`);
    return ms;
  };
  const url = (k: string, def: string): string => {
    const v = str(k) ?? def;
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      throw new Error(`${where(k)}: ${JSON.stringify(v)} is not a URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`${where(k)} must be http or https`);
    return v.replace(/\/+$/, '');
  };

  let ownerPasswordHash: string | null = null;
  const hash = str('owner-password-hash');
  const clear = str('owner-password') ?? nonEmpty(env.PIPELINE_OWNER_PASSWORD);
  if (hash !== undefined) {
    if (!isPasswordHash(hash)) throw new Error(`${where('owner-password-hash')} is not a hash made by \`ctl pipeline hash-password\``);
    ownerPasswordHash = hash;
  } else if (clear !== undefined) {
    if (clear.length === 0) throw new Error(`${where('owner-password')} must not be empty`);
    ownerPasswordHash = hashClear(clear);
  }

  const rl = section['login-rate-limit'];
  let loginRateLimit = DEFAULT_LOGIN_RATE_LIMIT;
  if (rl !== undefined && rl !== null) {
    const o = rl as Record<string, unknown>;
    const limit = o.limit;
    const interval = o.interval === undefined ? undefined : parseDuration(o.interval);
    if (typeof o !== 'object' || !Number.isInteger(limit) || (limit as number) <= 0 || !interval || interval <= 0) {
      throw new Error(`${where('login-rate-limit')} must be {limit: <hits>, interval: <duration>}`);
    }
    loginRateLimit = { limit: limit as number, interval: interval / 1000 };
  }

  return {
    ownerPasswordHash,
    hnApiBaseUrl: url('hn-api-base-url', 'https://hacker-news.firebaseio.com/v0'),
    maxItemsPerSource: int('max-items-per-source', 30, 1, 500),
    xApiBaseUrl: url('x-api-base-url', 'https://api.x.com/2'),
    xApiToken: str('x-api-token') ?? nonEmpty(env.PIPELINE_X_API_TOKEN) ?? null,
    fetchTimeoutMs: dur('fetch-timeout', 10_000),
    sourceTimeoutMs: dur('source-timeout', 30_000),
    maxResponseBytes: int('max-response-bytes', 5 << 20, 1024, 100 << 20),
    batchSize: int('batch-size', 5, 1, 50),
    maxPostLength: int('max-post-length', 280, 10, 25_000),
    maxPageSize: int('max-page-size', 100, 1, 1000),
    maxImageBytes: int('max-image-bytes', 5 << 20, 1024, 50 << 20),
    publishIntervalMs: dur('publish-interval', 30_000),
    llmTimeoutMs: dur('llm-timeout', 120_000),
    metricsWindowDays: int('metrics-window-days', 30, 1, 3650),
    loginRateLimit,
    envModel: nonEmpty(env.PIPELINE_MODEL) ?? null,
    schedules: parseSchedules(section.schedules, section['schedule-timezone'], where),
  };
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}
