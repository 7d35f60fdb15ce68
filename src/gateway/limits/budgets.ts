/**
 * USD budgets per API key (seed `setBudgetSchema`, plus an hourly limit): hourly, daily, weekly and monthly limits, each over its
 * own calendar window (UTC, starting at `resetTime`). Each call reserves its estimated cost in every
 * window of its key before it goes (limit-windows.ts: one atomic step, in this process or in Redis
 * for the cluster) and the reservation becomes its real cost when it is recorded; a window first
 * needed starts from the request log. A window whose spent and reserved dollars reached its limit
 * refuses with 429 `"<Period> budget exceeded: $x / $y"` (the shortest full window is named), so calls arriving together never spend more than
 * the limit plus the one call that crosses it. Crossing `warningThreshold` of a limit is logged once
 * per window, shown by GET and sent as `X-Gateway-Budget-Warning`.
 */
import { Type } from '@sinclair/typebox';
import type { Logger } from 'pino';
import { compile } from '../../http/schema.js';
import type { BudgetConfig, LimitsStore } from './store.js';
import { HeldCalls, LocalWindows, full, reserveOrWait, type LimitWindows, type WindowRef } from './limit-windows.js';
import { RESET_INTERVALS, RESET_TIME_PATTERN, windowAt, type ResetInterval, type Window } from './windows.js';
import { GatewayError, secondsUntil } from '../errors.js';

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
  /** In this process, or with storage.redis in Redis for the whole cluster. */
  private windows: LimitWindows = new LocalWindows();
  private sharedWindows = false;
  private readonly held = new HeldCalls<WindowRef & { period: BudgetPeriod }>(() => this.windows);

  constructor(
    private readonly db: LimitsStore,
    private readonly log: Logger,
    /** Write queued request-log rows before a window is seeded from the table. */
    private readonly flushUsage: () => void,
    private readonly clock: () => number = Date.now,
  ) {
    for (const b of db.listBudgets()) this.configs.set(b.apiKeyId, b);
  }

  get size(): number {
    return this.configs.size;
  }

  /** Count the windows in Redis from now on (several daemons, one budget). */
  useSharedWindows(w: LimitWindows): void {
    this.windows = w;
    this.sharedWindows = true;
  }

  /** Send what is queued for the shared windows and stop (the component stops). */
  async close(): Promise<void> {
    await this.windows.close();
  }

  /** True when the windows are the cluster's (storage.redis). */
  get shared(): boolean {
    return this.sharedWindows;
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

  private exceeded(period: BudgetPeriod, spent: number, limit: number, end: number, now: number): GatewayError {
    return new GatewayError('limited', `${cap(period)} budget exceeded: $${usdText(spent)} / $${usdText(limit)}`, {
      code: 'budget_exceeded',
      retryAfterS: secondsUntil(end, now),
    });
  }

  /**
   * Reserve `estimate` dollars in every window of the key for request `requestId`, in one atomic step
   * (for the cluster with shared windows, in this process without): 429 when a window's spent and
   * reserved dollars reached its limit (after waiting briefly when only reservations fill it), 503
   * when Redis cannot be reached. Returns the warning to send, if a threshold was crossed.
   */
  async admit(apiKeyId: string, now: number, estimate: number, requestId: string): Promise<string | undefined> {
    if (this.configs.size === 0) return undefined;
    const b = this.configs.get(apiKeyId);
    if (!b) return undefined;
    const periods = this.periods(b);
    if (periods.length === 0) return undefined;
    const counters = periods.map((p) => this.counter(b, p, now));
    // A window the store may not know yet is seeded with the log's sum: wait for it.
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
      r = await reserveOrWait(this.windows, windows, estimate, requestId, this.clock);
    } catch (e) {
      throw new GatewayError('unavailable', `budget windows cannot be checked: ${(e as Error).message}`, { code: 'storage_unavailable', cause: e });
    }
    if (!r.ok) {
      const win = windows[r.index]!;
      counters[r.index]!.spent = r.spent;
      throw this.exceeded(win.period, r.spent, win.limit, win.end, now);
    }
    r.spent.forEach((spent, i) => (counters[i]!.spent = spent));
    this.held.hold(requestId, windows.map(({ key, period, start, end }) => ({ key, period, start, end })), estimate, now);
    let warning: string | undefined;
    periods.forEach((p, i) => {
      const limit = b[LIMIT_FIELD[p]]!;
      if (counters[i]!.spent >= limit * b.warningThreshold) warning ??= `${p} ${Math.floor((counters[i]!.spent / limit) * 100)}%`;
    });
    return warning;
  }

  /** A finished request's cost (`ts` is when it started): its reservation becomes its real cost. */
  onUsage(apiKeyId: string, cost: number, ts: number, now: number, requestId?: string): void {
    const r = this.held.take(requestId);
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
    this.windows.settle(windows, requestId ?? '', cost > 0 ? cost : 0).then(
      (spent) =>
        windows.forEach((win, i) => {
          const c = counters?.[win.period];
          if (c && c.start === win.start && spent[i] !== undefined) {
            c.spent = spent[i]!;
            this.warnLog(apiKeyId, win.period, c, now);
          }
        }),
      (e) => this.log.error({ err: (e as Error).message, apiKeyId, costUsd: cost }, 'gateway: recording spend in the shared budget windows failed'),
    );
  }

  /** The warning threshold crossed: logged once per window. */
  private warnLog(apiKeyId: string, p: BudgetPeriod, c: Counter, now: number): void {
    const b = this.configs.get(apiKeyId);
    const limit = b?.[LIMIT_FIELD[p]];
    if (!b || !limit || c.warned || c.spent < limit * b.warningThreshold || now >= c.end) return;
    c.warned = true;
    this.log.warn({ apiKeyId, period: p, spentUsd: round(c.spent), limitUsd: limit }, `gateway: API key ${apiKeyId} reached ${Math.round(b.warningThreshold * 100)}% of its ${p} budget`);
  }

  /** Read the key's spend from the windows (Redis, when shared) into the counters the views show. */
  async refresh(apiKeyId: string, now: number): Promise<void> {
    const w = this.windows;
    const b = this.configs.get(apiKeyId);
    if (!b) return;
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
        exceeded: full(limit, c.spent, 0),
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
