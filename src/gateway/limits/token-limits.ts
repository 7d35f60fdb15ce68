/**
 * Token limits per API key (seed `setTokenLimitSchema`), scoped to a model, a provider or globally,
 * each over a calendar window (`resetInterval`, `resetTime`, UTC). Tokens are input + output of
 * requests that reached an upstream (cache hits and idempotent replays use none). Counting starts at
 * `windowStart` = the later of the period start and the limit's creation, seeded from the request log
 * once and then kept in memory.
 *
 * Enforcement: before routing, the limits that match the request as a whole (global ones, and model
 * limits naming the requested id) are checked, and the most restrictive one (least remaining) wins:
 * spent → 429 `token_limit_exceeded`. Limits on one provider or one `<provider>/<model>` make only
 * that target unavailable (the attempt loop asks `admitTarget`), so a combo moves to its other
 * targets; when nothing is left the answer is 429 as well.
 */
import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { compile } from '../../http/schema.js';
import type { Admission } from '../routing/policy.js';
import type { LimitsStore, ScopeType, TokenLimit } from './store.js';
import { RESET_INTERVALS, RESET_TIME_PATTERN, windowAt } from './windows.js';
import { HeldCalls, LocalWindows, reserveOrWait, type LimitWindows, type SettleWindow, type WindowRef } from './limit-windows.js';
import { GatewayError, secondsUntil } from '../errors.js';

/** The seed's setTokenLimitSchema (tokenLimit may arrive as a string; it is coerced first). */
export const SetTokenLimitSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    apiKeyId: Type.String({ minLength: 1, maxLength: 256 }),
    scopeType: Type.Union([Type.Literal('model'), Type.Literal('provider'), Type.Literal('global')]),
    scopeValue: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    tokenLimit: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    resetInterval: Type.Optional(Type.Union(RESET_INTERVALS.map((r) => Type.Literal(r)))),
    resetTime: Type.Optional(Type.String({ pattern: RESET_TIME_PATTERN })),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export const validateSetTokenLimit = compile(SetTokenLimitSchema);

interface Counter {
  start: number;
  end: number;
  /** Counting starts here (the later of the period start and the limit's creation). */
  from: number;
  used: number;
  /** Set while the shared request log's sum for the window is on its way. */
  seeding?: Promise<void>;
}

/** What a finished request used, for the counters. */
export interface TokenUsage {
  apiKeyId: string;
  requestedModel?: string;
  provider?: string;
  model?: string;
  tokens: number;
  ts: number;
}

export interface LimitView extends Omit<TokenLimit, 'createdAt' | 'updatedAt'> {
  tokensUsed: number;
  remaining: number;
  windowStart: string;
  periodStartAt: string;
  nextResetAt: string;
  createdAt: string;
  updatedAt: string;
}

function matchesModel(l: TokenLimit, requested: string | undefined, ref: string | undefined, modelId: string | undefined): boolean {
  const v = l.scopeValue;
  return v !== undefined && (v === requested || v === ref || v === modelId);
}

export class TokenLimits {
  private readonly byKey = new Map<string, TokenLimit[]>();
  private readonly byId = new Map<string, TokenLimit>();
  private readonly counters = new Map<string, Counter>();
  /** In this process, or with storage.redis in Redis for the whole cluster. */
  private windows: LimitWindows = new LocalWindows();
  private sharedWindows = false;
  private readonly held = new HeldCalls<WindowRef & { limitId: string }>(() => this.windows);

  constructor(
    private readonly db: LimitsStore,
    private readonly flushUsage: () => void,
    private readonly clock: () => number = Date.now,
  ) {
    for (const l of db.listLimits()) this.index(l);
  }

  private index(l: TokenLimit): void {
    this.byId.set(l.id, l);
    const list = (this.byKey.get(l.apiKeyId) ?? []).filter((x) => x.id !== l.id);
    list.push(l);
    this.byKey.set(l.apiKeyId, list);
  }

  get size(): number {
    return this.byId.size;
  }

  /** Count the windows in Redis from now on (several daemons, one limit). */
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

  /** Limits changed on another daemon: read them again. */
  reload(): void {
    this.byId.clear();
    this.byKey.clear();
    this.counters.clear();
    for (const l of this.db.listLimits()) this.index(l);
  }

  get(id: string): TokenLimit | undefined {
    return this.byId.get(id);
  }

  list(apiKeyId?: string): TokenLimit[] {
    return apiKeyId !== undefined ? [...(this.byKey.get(apiKeyId) ?? [])] : [...this.byId.values()];
  }

  /** Create (no id) or update; returns the saved limit and whether it was created. */
  save(body: { id?: string; apiKeyId: string; scopeType: ScopeType; scopeValue?: string; tokenLimit: number; resetInterval?: TokenLimit['resetInterval']; resetTime?: string; enabled?: boolean }, now: number): { limit: TokenLimit; created: boolean } {
    const prev = body.id !== undefined ? this.byId.get(body.id) : undefined;
    if (body.id !== undefined && !prev) throw new GatewayError('not-found', `token limit ${body.id} not found (omit id to create one)`, { code: 'not_found' });
    const limit: TokenLimit = {
      id: prev?.id ?? randomUUID(),
      apiKeyId: body.apiKeyId,
      scopeType: body.scopeType,
      ...(body.scopeType !== 'global' && body.scopeValue !== undefined ? { scopeValue: body.scopeValue } : {}),
      tokenLimit: body.tokenLimit,
      resetInterval: body.resetInterval ?? prev?.resetInterval ?? 'monthly',
      resetTime: body.resetTime ?? prev?.resetTime ?? '00:00',
      enabled: body.enabled ?? prev?.enabled ?? true,
      createdAt: prev?.createdAt ?? now,
      updatedAt: now,
    };
    this.db.saveLimit(limit);
    if (prev && prev.apiKeyId !== limit.apiKeyId) this.byKey.set(prev.apiKeyId, (this.byKey.get(prev.apiKeyId) ?? []).filter((x) => x.id !== prev.id));
    this.index(limit);
    this.counters.delete(limit.id);
    return { limit, created: !prev };
  }

  remove(id: string): boolean {
    const l = this.byId.get(id);
    this.db.deleteLimit(id);
    if (!l) return false;
    this.byId.delete(id);
    this.byKey.set(l.apiKeyId, (this.byKey.get(l.apiKeyId) ?? []).filter((x) => x.id !== id));
    this.counters.delete(id);
    return true;
  }

  private counter(l: TokenLimit, now: number): Counter {
    let c = this.counters.get(l.id);
    if (c && now >= c.start && now < c.end) return c;
    const w = windowAt(l.resetInterval, l.resetTime, now);
    const from = Math.max(w.start, l.createdAt);
    if (c) c = { ...w, from, used: 0 };
    else {
      this.flushUsage();
      const seeded: Counter = { ...w, from, used: this.db.tokens(l.apiKeyId, l.scopeType, l.scopeValue, from, w.end) };
      // A shared log answers later: the window counts from 0 until the sum arrives, then adds it.
      seeded.seeding = this.db.tokensLater(l.apiKeyId, l.scopeType, l.scopeValue, from, w.end)?.then(
        (v) => {
          seeded.used += v;
          seeded.seeding = undefined;
        },
        () => void (seeded.seeding = undefined),
      );
      c = seeded;
    }
    this.counters.set(l.id, c);
    return c;
  }

  private tooMany(l: TokenLimit, c: Counter, now: number, what: string): GatewayError {
    const scope = l.scopeType === 'global' ? 'all models' : `${l.scopeType} ${l.scopeValue}`;
    return new GatewayError('limited', `token limit reached for ${what}: ${c.used} / ${l.tokenLimit} tokens (${scope}, ${l.resetInterval} window resets at ${new Date(c.end).toISOString()})`, {
      code: 'token_limit_exceeded',
      retryAfterS: secondsUntil(c.end, now),
    });
  }

  /** The enabled limits of a key that apply to a request as a whole. */
  private requestLimits(apiKeyId: string, requested: string, single: { provider: string; ref: string; modelId: string } | undefined): TokenLimit[] {
    const list = this.byKey.get(apiKeyId);
    if (!list) return [];
    return list.filter(
      (l) =>
        l.enabled &&
        (l.scopeType === 'global' ||
          (l.scopeType === 'model' && matchesModel(l, requested, single?.ref, single?.modelId)) ||
          (l.scopeType === 'provider' && single !== undefined && l.scopeValue === single.provider)),
    );
  }

  /**
   * Reserve `estimate` tokens in every limit that applies to the request as a whole, in one atomic
   * step (for the cluster with shared windows, in this process without); 429 when one is used up,
   * 503 when Redis cannot be reached. Returns the tokens left under the tightest one.
   */
  async admitRequest(apiKeyId: string, requested: string, single: { provider: string; ref: string; modelId: string } | undefined, now: number, estimate: number, requestId: string): Promise<number | undefined> {
    const w = this.windows;
    if (this.byId.size === 0) return undefined;
    const limits = this.requestLimits(apiKeyId, requested, single);
    if (limits.length === 0) return undefined;
    const counters = limits.map((l) => this.counter(l, now));
    for (const c of counters) if (c.seeding) await c.seeding;
    const windows = limits.map((l, i) => ({ key: `${l.id}:${counters[i]!.start}`, limitId: l.id, start: counters[i]!.start, end: counters[i]!.end, limit: l.tokenLimit, seed: () => counters[i]!.used }));
    let r;
    try {
      r = await reserveOrWait(w, windows, estimate, requestId, this.clock);
    } catch (e) {
      throw new GatewayError('unavailable', `token-limit windows cannot be checked: ${(e as Error).message}`, { code: 'storage_unavailable', cause: e });
    }
    if (!r.ok) {
      counters[r.index]!.used = r.spent;
      throw this.tooMany(limits[r.index]!, counters[r.index]!, now, `API key ${apiKeyId}`);
    }
    r.spent.forEach((used, i) => (counters[i]!.used = used));
    this.held.hold(requestId, windows.map(({ key, limitId, start, end }) => ({ key, limitId, start, end })), estimate, now);
    return Math.min(...limits.map((l, i) => l.tokenLimit - counters[i]!.used));
  }

  /** In the attempt loop: a target whose provider or model limit is spent is skipped. */
  admitTarget(apiKeyId: string, provider: string, ref: string, modelId: string, now: number): Admission | undefined {
    if (this.byId.size === 0) return undefined;
    const list = this.byKey.get(apiKeyId);
    if (!list) return undefined;
    for (const l of list) {
      if (!l.enabled || l.scopeType === 'global') continue;
      const applies = l.scopeType === 'provider' ? l.scopeValue === provider : l.scopeValue === ref || l.scopeValue === modelId;
      if (!applies) continue;
      const c = this.counter(l, now);
      if (c.used >= l.tokenLimit) {
        return {
          ok: false,
          kind: 'token-limit',
          scope: 'target',
          reason: this.tooMany(l, c, now, `${ref}`).message,
          retryAfterMs: c.end - now,
        };
      }
    }
    return undefined;
  }

  /** A finished request's tokens: its reservations become the tokens used; matching limits it did not reserve in get them added. */
  onUsage(u: TokenUsage, _now: number, requestId?: string): void {
    const res = this.held.take(requestId);
    if (!res && (this.byId.size === 0 || !(u.tokens > 0))) return;
    const w = this.windows;
    const id = requestId ?? '';
    const ref = u.provider !== undefined && u.model !== undefined ? `${u.provider}/${u.model}` : undefined;
    const matching = (this.byKey.get(u.apiKeyId) ?? []).filter(
      (l) => l.scopeType === 'global' || (l.scopeType === 'provider' ? l.scopeValue === u.provider : matchesModel(l, u.requestedModel, ref, u.model)),
    );
    const reserved = new Set(res?.windows.map((x) => x.limitId));
    const used = u.tokens > 0 ? u.tokens : 0;
    const apply = (windows: (SettleWindow & { limitId: string })[], actual: number) =>
      w.settle(windows, id, actual).then(
        (values) =>
          windows.forEach((win, i) => {
            const c = this.counters.get(win.limitId);
            if (c && c.start === win.start && values[i] !== undefined) c.used = values[i]!;
          }),
        () => {},
      );
    if (res) {
      const hit = res.windows.filter((x) => matching.some((l) => l.id === x.limitId));
      const missed = res.windows.filter((x) => !hit.includes(x));
      if (hit.length > 0) void apply(hit, used);
      if (missed.length > 0) void apply(missed, 0);
    }
    if (used === 0) return;
    const extra = matching
      .filter((l) => !reserved.has(l.id))
      .flatMap((l) => {
        const win = windowAt(l.resetInterval, l.resetTime, u.ts);
        // Counted from the limit's creation: a request started before it does not count.
        if (u.ts < Math.max(win.start, l.createdAt)) return [];
        // A window this daemon counts (a provider or model limit checked per attempt) starts, when
        // the store does not know it yet, from that count; one it never counted is left to the log.
        const c = this.counters.get(l.id);
        const seed = c && c.start === win.start && !c.seeding ? { seed: () => c.used } : {};
        return [{ key: `${l.id}:${win.start}`, limitId: l.id, start: win.start, end: win.end, ...seed }];
      });
    if (extra.length > 0) void apply(extra, used);
  }

  /** Read the limit's use from the windows (Redis, when shared) into the counter the view shows. */
  async refresh(l: TokenLimit, now: number): Promise<void> {
    const c = this.counter(l, now);
    try {
      const [v] = await this.windows.spent([{ key: `${l.id}:${c.start}`, start: c.start, end: c.end }]);
      if (v !== undefined) c.used = v;
    } catch {
      /* Redis away: the view shows what this daemon last heard */
    }
  }

  view(l: TokenLimit, now: number): LimitView {
    const c = this.counter(l, now);
    return {
      id: l.id,
      apiKeyId: l.apiKeyId,
      scopeType: l.scopeType,
      ...(l.scopeValue !== undefined ? { scopeValue: l.scopeValue } : {}),
      tokenLimit: l.tokenLimit,
      resetInterval: l.resetInterval,
      resetTime: l.resetTime,
      enabled: l.enabled,
      tokensUsed: c.used,
      remaining: Math.max(0, l.tokenLimit - c.used),
      windowStart: new Date(c.from).toISOString(),
      periodStartAt: new Date(c.start).toISOString(),
      nextResetAt: new Date(c.end).toISOString(),
      createdAt: new Date(l.createdAt).toISOString(),
      updatedAt: new Date(l.updatedAt).toISOString(),
    };
  }
}
