/**
 * USD budgets per API key (seed `setBudgetSchema`, plus an hourly limit): hourly, daily, weekly and monthly limits, each over its
 * own calendar window (UTC, starting at `resetTime`). Spend is kept in memory per window, seeded from
 * the request log the first time a window is needed and then added to as requests finish, so the
 * check before a request reads no database. A key whose spend in any window reached its limit gets 429
 * `"<Period> budget exceeded: $x / $y"` (the exhausted window that resets last is named, since it is
 * the one that blocks longest). Crossing `warningThreshold` of a limit is logged once per window,
 * shown by GET and sent as `X-Gateway-Budget-Warning`. Spend is added when a request finishes, so
 * requests already in flight when the limit is reached still complete (a soft limit).
 */
import { Type } from '@sinclair/typebox';
import type { Logger } from 'pino';
import { HttpError } from '../../http/errors.js';
import { compile } from '../../http/schema.js';
import type { BudgetConfig, LimitsStore } from './store.js';
import { HeldReservations, type RedisWindows, type WindowRef } from '../shared/redis-windows.js';
import { RESET_INTERVALS, RESET_TIME_PATTERN, windowAt, type ResetInterval, type Window } from './windows.js';

export const BUDGET_PERIODS = ['hourly', 'daily', 'weekly', 'monthly'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

const LIMIT_FIELD: Record<BudgetPeriod, 'hourlyLimitUsd' | 'dailyLimitUsd' | 'weeklyLimitUsd' | 'monthlyLimitUsd'> = {
  hourly: 'hourlyLimitUsd',
  daily: 'dailyLimitUsd',
  weekly: 'weeklyLimitUsd',
  monthly: 'monthlyLimitUsd',
};

const Usd = Type.Number({ minimum: 0, maximum: 1e9 });
/** The seed's setBudgetSchema. */
export const SetBudgetSchema = Type.Object(
  {
    apiKeyId: Type.String({ minLength: 1, maxLength: 256 }),
    hourlyLimitUsd: Type.Optional(Usd),
    dailyLimitUsd: Type.Optional(Usd),
    weeklyLimitUsd: Type.Optional(Usd),
    monthlyLimitUsd: Type.Optional(Usd),
    warningThreshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    resetInterval: Type.Optional(Type.Union(RESET_INTERVALS.map((r) => Type.Literal(r)))),
    resetTime: Type.Optional(Type.String({ pattern: RESET_TIME_PATTERN })),
  },
  { additionalProperties: false },
);
export const validateSetBudget = compile(SetBudgetSchema);

export const DEFAULT_WARNING_THRESHOLD = 0.8;

interface Counter extends Window {
  spent: number;
  warned: boolean;
  /** Set while the shared request log's sum for the window is on its way. */
  seeding?: Promise<void>;
}

export interface PeriodStatus {
  limitUsd: number;
  spentUsd: number;
  remainingUsd: number;
  periodStartAt: string;
  nextResetAt: string;
  warning: boolean;
  exceeded: boolean;
}

const round = (n: number) => Number(n.toFixed(10));

/**
 * A USD amount for a message: four decimals, or two significant digits when that would hide it
 * (`0.00003`, not `0.0000`), never in exponent notation.
 */
export function usdText(n: number): string {
  if (n === 0 || Math.abs(n) >= 0.001 || !Number.isFinite(n)) return n.toFixed(4);
  const decimals = Math.min(20, 1 - Math.floor(Math.log10(Math.abs(n))));
  return n.toFixed(decimals).replace(/0+$/, '');
}
const cap = (p: BudgetPeriod) => p[0]!.toUpperCase() + p.slice(1);


export class Budgets {
  private readonly configs = new Map<string, BudgetConfig>();
  private readonly counters = new Map<string, Partial<Record<BudgetPeriod, Counter>>>();
  /** With storage.redis: windows counted in Redis for the whole cluster (admit/onUsage). */
  private windows?: RedisWindows;
  private held?: HeldReservations<WindowRef & { period: BudgetPeriod }>;

  constructor(
    private readonly db: LimitsStore,
    private readonly log: Logger,
    /** Write queued request-log rows before a window is seeded from the table. */
    private readonly flushUsage: () => void,
  ) {
    for (const b of db.listBudgets()) this.configs.set(b.apiKeyId, b);
  }

  get size(): number {
    return this.configs.size;
  }

  /** Count the windows in Redis from now on (several daemons, one budget). */
  useSharedWindows(w: RedisWindows): void {
    this.windows = w;
    this.held = new HeldReservations(w);
  }

  /** Send what is queued for the shared windows and stop (the component stops). */
  async close(): Promise<void> {
    await this.windows?.close();
  }

  /** True when admission goes through `admit` (shared windows). */
  get shared(): boolean {
    return this.windows !== undefined;
  }

  /** Budgets changed on another daemon: read them again (windows are rebuilt on next use). */
  reload(): void {
    this.configs.clear();
    for (const b of this.db.listBudgets()) this.configs.set(b.apiKeyId, b);
    this.counters.clear();
  }

  get(apiKeyId: string): BudgetConfig | undefined {
    return this.configs.get(apiKeyId);
  }

  list(): BudgetConfig[] {
    return [...this.configs.values()];
  }

  set(b: BudgetConfig): void {
    this.db.saveBudget(b);
    this.configs.set(b.apiKeyId, b);
    // Limits and reset times may have changed: windows are rebuilt on next use.
    this.counters.delete(b.apiKeyId);
  }

  remove(apiKeyId: string): boolean {
    const had = this.db.deleteBudget(apiKeyId);
    this.configs.delete(apiKeyId);
    this.counters.delete(apiKeyId);
    return had;
  }

  private counter(b: BudgetConfig, period: BudgetPeriod, now: number): Counter {
    let byPeriod = this.counters.get(b.apiKeyId);
    if (!byPeriod) this.counters.set(b.apiKeyId, (byPeriod = {}));
    let c = byPeriod[period];
    if (c && now < c.end && now >= c.start) return c;
    const w = windowAt(period, b.resetTime, now);
    if (c) c = { ...w, spent: 0, warned: false }; // rolled over into a new window
    else {
      this.flushUsage();
      const seeded: Counter = { ...w, spent: this.db.spend(b.apiKeyId, w.start, w.end), warned: false };
      // A shared log answers later: the window counts from 0 until the sum arrives, then adds it.
      seeded.seeding = this.db.spendLater(b.apiKeyId, w.start, w.end)?.then(
        (v) => {
          seeded.spent += v;
          seeded.seeding = undefined;
        },
        (e: unknown) => {
          seeded.seeding = undefined;
          this.log.warn({ err: (e as Error).message, apiKeyId: b.apiKeyId }, 'gateway: reading a budget window from the shared request log failed');
        },
      );
      c = seeded;
    }
    byPeriod[period] = c;
    return c;
  }

  private periods(b: BudgetConfig): BudgetPeriod[] {
    return BUDGET_PERIODS.filter((p) => (b[LIMIT_FIELD[p]] ?? 0) > 0);
  }

  /** 429 when the key spent a whole limit; otherwise the warning to send, if a threshold was crossed. */
  check(apiKeyId: string, now: number): string | undefined {
    if (this.configs.size === 0) return undefined;
    const b = this.configs.get(apiKeyId);
    if (!b) return undefined;
    let blocking: { period: BudgetPeriod; c: Counter; limit: number } | undefined;
    let warning: string | undefined;
    for (const p of this.periods(b)) {
      const limit = b[LIMIT_FIELD[p]]!;
      const c = this.counter(b, p, now);
      if (c.spent >= limit) {
        if (!blocking || c.end > blocking.c.end) blocking = { period: p, c, limit };
      } else if (c.spent >= limit * b.warningThreshold) warning ??= `${p} ${Math.floor((c.spent / limit) * 100)}%`;
    }
    if (blocking) {
      throw new HttpError(429, `${cap(blocking.period)} budget exceeded: $${usdText(blocking.c.spent)} / $${usdText(blocking.limit)}`, {
        code: 'budget_exceeded',
        headers: { 'Retry-After': String(Math.max(1, Math.ceil((blocking.c.end - now) / 1000))) },
      });
    }
    return warning;
  }

  /**
   * Shared windows: reserve `estimate` dollars in every window of the key for request `requestId`,
   * atomically for the cluster; 429 when a window's spent and reserved dollars reached its limit,
   * 503 when Redis cannot be reached. Returns the warning to send, as `check` does.
   */
  async admit(apiKeyId: string, now: number, estimate: number, requestId: string): Promise<string | undefined> {
    const w = this.windows;
    if (!w) return this.check(apiKeyId, now);
    const b = this.configs.get(apiKeyId);
    if (!b) return undefined;
    const periods = this.periods(b);
    if (periods.length === 0) return undefined;
    const counters = periods.map((p) => this.counter(b, p, now));
    // A window Redis may not know yet is seeded with the log's sum: wait for it.
    for (const c of counters) if (c.seeding) await c.seeding;
    const windows = periods.map((p, i) => ({
      key: `${apiKeyId}:${p}:${counters[i]!.start}`,
      period: p,
      start: counters[i]!.start,
      end: counters[i]!.end,
      limit: b[LIMIT_FIELD[p]]!,
      seed: () => counters[i]!.spent,
    }));
    let r;
    try {
      r = await w.reserve(windows, estimate, now);
    } catch (e) {
      throw new HttpError(503, `budget windows cannot be checked: ${(e as Error).message}`, { code: 'storage_unavailable' });
    }
    if (!r.ok) {
      const win = windows[r.index]!;
      counters[r.index]!.spent = r.spent;
      throw new HttpError(429, `${cap(win.period)} budget exceeded: $${usdText(r.spent)} / $${usdText(win.limit)}`, {
        code: 'budget_exceeded',
        headers: { 'Retry-After': String(Math.max(1, Math.ceil((win.end - now) / 1000))) },
      });
    }
    r.spent.forEach((spent, i) => (counters[i]!.spent = spent));
    this.held!.hold(requestId, windows.map(({ key, period, start, end }) => ({ key, period, start, end })), estimate, now);
    let warning: string | undefined;
    periods.forEach((p, i) => {
      const limit = b[LIMIT_FIELD[p]]!;
      if (counters[i]!.spent >= limit * b.warningThreshold) warning ??= `${p} ${Math.floor((counters[i]!.spent / limit) * 100)}%`;
    });
    return warning;
  }

  /** Shared windows: the request's reservation becomes its real cost. */
  private reconcile(apiKeyId: string, cost: number, ts: number, requestId: string | undefined): void {
    const w = this.windows!;
    const r = this.held!.take(requestId);
    const b = this.configs.get(apiKeyId);
    if (!r && (!b || !(cost > 0))) return;
    // A request admitted before its key had a budget still counts, in the windows it started in.
    const windows =
      r?.windows ??
      this.periods(b!).map((p) => {
        const win = windowAt(p, b!.resetTime, ts);
        return { key: `${apiKeyId}:${p}:${win.start}`, period: p, start: win.start, end: win.end };
      });
    const counters = this.counters.get(apiKeyId);
    w.reconcile(windows, r?.estimate ?? 0, cost).then(
      (spent) =>
        windows.forEach((win, i) => {
          const c = counters?.[win.period];
          if (c && c.start === win.start && spent[i] !== undefined) c.spent = spent[i]!;
        }),
      (e) => this.log.error({ err: (e as Error).message, apiKeyId, costUsd: cost }, 'gateway: recording spend in the shared budget windows failed'),
    );
  }

  /** A finished request's cost (`ts` is when it started). */
  onUsage(apiKeyId: string, cost: number, ts: number, now: number, requestId?: string): void {
    if (this.windows) return this.reconcile(apiKeyId, cost, ts, requestId);
    if (this.configs.size === 0 || !(cost > 0)) return;
    const b = this.configs.get(apiKeyId);
    if (!b) return;
    const byPeriod = this.counters.get(apiKeyId);
    if (!byPeriod) return; // not seeded yet: the table sum will include this request
    for (const p of this.periods(b)) {
      if (!byPeriod[p]) continue;
      const c = this.counter(b, p, now);
      if (ts < c.start || ts >= c.end) continue;
      c.spent += cost;
      const limit = b[LIMIT_FIELD[p]]!;
      if (!c.warned && c.spent >= limit * b.warningThreshold) {
        c.warned = true;
        this.log.warn({ apiKeyId, period: p, spentUsd: round(c.spent), limitUsd: limit }, `gateway: API key ${apiKeyId} reached ${Math.round(b.warningThreshold * 100)}% of its ${p} budget`);
      }
    }
  }

  /** Shared windows: read the key's spend from Redis into the counters the views show. */
  async refresh(apiKeyId: string, now: number): Promise<void> {
    const w = this.windows;
    const b = this.configs.get(apiKeyId);
    if (!w || !b) return;
    const periods = this.periods(b);
    const counters = periods.map((p) => this.counter(b, p, now));
    try {
      const spent = await w.spent(counters.map((c, i) => ({ key: `${apiKeyId}:${periods[i]!}:${c.start}`, start: c.start, end: c.end })));
      spent.forEach((v, i) => {
        if (v !== undefined) counters[i]!.spent = v;
      });
    } catch {
      /* Redis away: the view shows what this daemon last heard */
    }
  }

  /** GET view of one budget with the state of each window. */
  view(b: BudgetConfig, now: number): Record<string, unknown> {
    const periods: Record<string, PeriodStatus> = {};
    for (const p of this.periods(b)) {
      const limit = b[LIMIT_FIELD[p]]!;
      const c = this.counter(b, p, now);
      periods[p] = {
        limitUsd: limit,
        spentUsd: round(c.spent),
        remainingUsd: round(Math.max(0, limit - c.spent)),
        periodStartAt: new Date(c.start).toISOString(),
        nextResetAt: new Date(c.end).toISOString(),
        warning: c.spent >= limit * b.warningThreshold,
        exceeded: c.spent >= limit,
      };
    }
    const primary = b.resetInterval ?? this.periods(b)[0];
    return {
      apiKeyId: b.apiKeyId,
      ...(b.hourlyLimitUsd !== undefined ? { hourlyLimitUsd: b.hourlyLimitUsd } : {}),
      ...(b.dailyLimitUsd !== undefined ? { dailyLimitUsd: b.dailyLimitUsd } : {}),
      ...(b.weeklyLimitUsd !== undefined ? { weeklyLimitUsd: b.weeklyLimitUsd } : {}),
      ...(b.monthlyLimitUsd !== undefined ? { monthlyLimitUsd: b.monthlyLimitUsd } : {}),
      warningThreshold: b.warningThreshold,
      ...(b.resetInterval !== undefined ? { resetInterval: b.resetInterval } : {}),
      resetTime: b.resetTime,
      ...(primary && periods[primary] ? { periodStartAt: periods[primary]!.periodStartAt, nextResetAt: periods[primary]!.nextResetAt, spentUsd: periods[primary]!.spentUsd } : {}),
      periods,
      exceeded: Object.values(periods).some((s) => s.exceeded),
      warning: Object.values(periods).some((s) => s.warning),
      createdAt: new Date(b.createdAt).toISOString(),
      updatedAt: new Date(b.updatedAt).toISOString(),
    };
  }
}

export type { ResetInterval };
