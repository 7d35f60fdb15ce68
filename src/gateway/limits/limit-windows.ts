/**
 * Limit windows (budget dollars, token-limit tokens, requests per minute) as reservations: a call is
 * admitted only when a reservation of its estimate is taken, in one atomic step, in every window
 * that applies. A window whose spent + reserved amounts reached its limit refuses (and nothing is
 * reserved anywhere); one that has anything left admits the call, even when its estimate is more
 * than what is left. So a window admits at most its limit plus the one call that crosses it, plus
 * whatever the estimates fell short of the real use. After the call its reservation goes and its
 * real use is spent (settle).
 *
 * Two implementations: `LocalWindows` (in-process, one daemon) below and `RedisWindows`
 * (redis-windows.ts, one Lua script per reservation, for the cluster). Each reservation
 * carries the call's id and a lease: settling or releasing it by id is idempotent, and one never
 * settled expires at the end of its lease.
 */
export interface WindowRef {
  /** Names the window within its kind (`<api key>:<period>:<start>`, `<limit id>:<start>`). */
  key: string;
  start: number;
  end: number;
}

export interface ReserveWindow extends WindowRef {
  limit: number;
  /** What the request log says was spent in the window (read only when the window is new). */
  seed(): number;
}

export interface SettleWindow extends WindowRef {
  seed?: () => number;
}

export type ReserveResult = { ok: true; spent: number[] } | { ok: false; index: number; spent: number; reserved: number };

export interface LimitWindows {
  /** Reserve `estimate` in every window for call `id`, all or nothing. */
  reserve(windows: readonly ReserveWindow[], estimate: number, id: string, now: number): Promise<ReserveResult>;
  /**
   * Call `id` used `actual`: its reservation (if any) goes and `actual` is spent, once. Resolves with
   * each window's spent amount. A window not counted yet starts from `seed` when given (else the
   * spending is left to the request log the window will start from).
   */
  settle(windows: readonly SettleWindow[], id: string, actual: number): Promise<number[]>;
  /** Spent per window now (views); undefined for a window not counted yet. */
  spent(windows: readonly WindowRef[]): Promise<(number | undefined)[]>;
  close(): Promise<void>;
}

/** What floating-point sums leave over (1e-9 of the limit) counts as nothing left. */
export const full = (limit: number, spent: number, reserved: number): boolean => limit - spent - reserved <= limit * 1e-9;

/** How long a call refused only because of other calls' reservations waits for them, and how often it asks again. */
export const RESERVED_WAIT_MS = 3000;
const RESERVED_POLL_MS = 150;

/**
 * Reserve, and when a window is full of reservations rather than of spending, ask again until the
 * calls holding them settle (their estimates are pessimistic, so room usually comes back) or
 * RESERVED_WAIT_MS passes.
 */
export async function reserveOrWait(w: LimitWindows, windows: readonly ReserveWindow[], estimate: number, id: string, now: () => number): Promise<ReserveResult> {
  let r = await w.reserve(windows, estimate, id, now());
  const deadline = Date.now() + RESERVED_WAIT_MS;
  while (!r.ok && r.reserved > 0 && !full(windows[r.index]!.limit, r.spent, 0) && Date.now() < deadline) {
    // Jittered: many waiting calls do not ask Redis in step.
    await new Promise((res) => setTimeout(res, RESERVED_POLL_MS / 2 + Math.random() * RESERVED_POLL_MS));
    r = await w.reserve(windows, estimate, id, now());
  }
  return r;
}

/** An in-process reservation lives this long unless settled (a call never recorded: should not happen). */
const LOCAL_LEASE_MS = 15 * 60_000;
/** Windows this long past their end are forgotten. */
const KEEP_AFTER_END_MS = 86_400_000;

interface LocalWindow {
  spent: number;
  end: number;
  held: Map<string, { amount: number; until: number }>;
}

/** One daemon's windows, in memory: the same rules as the Redis ones, synchronously (no race to lose). */
export class LocalWindows implements LimitWindows {
  private readonly windows = new Map<string, LocalWindow>();
  private lastPrune = 0;

  private window(w: ReserveWindow, now: number): LocalWindow {
    let s = this.windows.get(w.key);
    if (!s) {
      if (now - this.lastPrune > 60_000) this.prune(now);
      this.windows.set(w.key, (s = { spent: w.seed(), end: w.end, held: new Map() }));
    }
    return s;
  }

  private prune(now: number): void {
    this.lastPrune = now;
    for (const [k, s] of this.windows) if (s.end + KEEP_AFTER_END_MS < now) this.windows.delete(k);
  }

  async reserve(windows: readonly ReserveWindow[], estimate: number, id: string, now: number): Promise<ReserveResult> {
    const spent: number[] = [];
    const states = windows.map((w) => this.window(w, now));
    for (let i = 0; i < windows.length; i++) {
      const s = states[i]!;
      let reserved = 0;
      for (const [hid, h] of s.held) {
        if (h.until <= now) s.held.delete(hid);
        else if (hid !== id) reserved += h.amount;
      }
      if (full(windows[i]!.limit, s.spent, reserved)) return { ok: false, index: i, spent: s.spent, reserved };
      spent.push(s.spent);
    }
    if (estimate > 0) for (const s of states) s.held.set(id, { amount: estimate, until: now + LOCAL_LEASE_MS });
    return { ok: true, spent };
  }

  async settle(windows: readonly SettleWindow[], id: string, actual: number): Promise<number[]> {
    return windows.map((w) => {
      let s = this.windows.get(w.key);
      if (!s && w.seed) this.windows.set(w.key, (s = { spent: w.seed(), end: w.end, held: new Map() }));
      if (!s) return 0; // never counted here: the request log holds it when the window is first needed
      s.held.delete(id);
      s.spent += actual;
      return s.spent;
    });
  }

  async spent(windows: readonly WindowRef[]): Promise<(number | undefined)[]> {
    return windows.map((w) => this.windows.get(w.key)?.spent);
  }

  /** Reserved amount of a window (tests). */
  reserved(key: string, now: number): number {
    const s = this.windows.get(key);
    let r = 0;
    for (const h of s?.held.values() ?? []) if (h.until > now) r += h.amount;
    return r;
  }

  async close(): Promise<void> {}
}

/** A call admitted and not yet settled that never reports is released after this long. */
const HELD_TTL_MS = 15 * 60_000;

/**
 * Calls admitted and not yet settled, by request id: the windows each reserved in and its estimate,
 * taken back when the request is recorded.
 */
export class HeldCalls<W extends WindowRef> {
  private readonly held = new Map<string, { windows: W[]; estimate: number; at: number }>();

  constructor(private readonly windows: () => LimitWindows) {}

  hold(requestId: string, windows: W[], estimate: number, now: number): void {
    if (this.held.size >= 1000) this.sweep(now);
    this.held.set(requestId, { windows, estimate, at: now });
  }

  take(requestId: string | undefined): { windows: W[]; estimate: number } | undefined {
    if (requestId === undefined) return undefined;
    const r = this.held.get(requestId);
    if (r) this.held.delete(requestId);
    return r;
  }

  /** Requests that never reported (should not happen) give their reservation back. */
  private sweep(now: number): void {
    for (const [id, r] of this.held) {
      if (now - r.at < HELD_TTL_MS) continue;
      this.held.delete(id);
      void this.windows().settle(r.windows, id, 0).catch(() => {});
    }
  }
}
