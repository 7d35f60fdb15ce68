/**
 * Limit windows counted in the shared Redis (ctl.yaml storage.redis), so a limit holds for the
 * cluster, not per daemon: budget windows (dollars) and token-limit windows (tokens). Each window is
 * one hash with the amount `spent` and, per daemon, the amount it holds reserved. A call is admitted
 * only once its estimate is covered by a reservation, taken atomically (one Lua script) for every
 * window that applies: a window whose spent + reserved amounts reached its limit refuses, and
 * nothing is reserved anywhere. After the call the actual amount is spent from the reservation
 * (reconcile). So concurrent requests on any number of daemons are admitted only while their
 * reservations fit, and a limit is overshot by at most the one request that crosses it (per daemon)
 * plus whatever the estimates fell short of (TensorZero's way; LiteLLM checks spend after the fact
 * and overshoots by every request in flight).
 *
 * Leases keep Redis off the request path: a daemon reserves a slice of a window at a time
 * (LEASE_SHARE of the limit, at least the call's estimate, never more than what is left) and admits
 * calls from it locally until it no longer covers one; a slice idle for LEASE_IDLE_MS goes back, and
 * a call that finds the window full of other daemons' reservations (not of spending) waits for
 * them to come back (RESERVED_WAIT_MS at most) instead of being refused.
 * What the daemon spends is sent in batches. Under the limit the only price of sharing is a round
 * trip per slice; near the limit, slices shrink to what is left.
 *
 * A window seen for the first time starts from the request log for that window; it expires from
 * Redis a day after it ends.
 */
import type { SharedRedis } from '../../store/redis.js';

const KEEP_AFTER_END_MS = 86_400_000;

/**
 * One script does both jobs, so a round trip carries everything queued: first the settlements
 * (KEYS[1..nr]; per key the amount to take off this daemon's reservation and the amount spent),
 * then the grant (the other KEYS; per window its limit, seed, time to live and the amount wanted).
 * Reservations are kept per daemon (field `r:<daemon>`), and a daemon whose liveness key
 * (`ctl:gw:alive:<daemon>`, renewed every few seconds) has expired loses its reservations: a daemon
 * killed while it held some holds nothing for long.
 * A window with plenty left (twice the slice) grants a whole slice; nearer its limit only what the
 * call needs, and the daemon gives back what the call did not spend at once (nothing lingers).
 * ARGV: nr, daemon id, settlement batch number, then 2·nr settlement values, then per window limit, seed,
 * time to live, and
 * (want, slice) pairs. Returns {blocked window (0 = none), spent of every settled key, then per
 * window spent, granted, ample (for a blocked window: spent, reserved, 0)}.
 */
const SCRIPT = `
local nr = tonumber(ARGV[1])
local mine = 'r:' .. ARGV[2]
local seq = tonumber(ARGV[3])
local out = {0}
-- Settlements of one daemon come in order (one batch in flight at a time) and each key remembers
-- the last batch applied (field q:<daemon>): a batch sent again after a lost answer only reads.
for i = 1, nr do
  local k = KEYS[i]
  if redis.call('EXISTS', k) == 0 then
    out[#out + 1] = '0'
  elseif seq > (tonumber(redis.call('HGET', k, 'q:' .. ARGV[2])) or 0) then
    redis.call('HSET', k, 'q:' .. ARGV[2], seq)
    out[#out + 1] = redis.call('HINCRBYFLOAT', k, 'spent', ARGV[3 + 2 * i])
    local r = tonumber(redis.call('HINCRBYFLOAT', k, mine, -tonumber(ARGV[2 + 2 * i])))
    if r <= 0 then redis.call('HDEL', k, mine) end
  else
    out[#out + 1] = redis.call('HGET', k, 'spent')
  end
end
local n = #KEYS - nr
local base = 3 + 2 * nr
local grants = {}
for i = 1, n do
  local k = KEYS[nr + i]
  if redis.call('EXISTS', k) == 0 then
    redis.call('HSET', k, 'spent', ARGV[base + n + i])
    redis.call('PEXPIRE', k, ARGV[base + 2 * n + i])
  end
  local fields = redis.call('HGETALL', k)
  local s = 0
  local r = 0
  for j = 1, #fields, 2 do
    local f = fields[j]
    if f == 'spent' then
      s = tonumber(fields[j + 1]) or 0
    elseif string.sub(f, 1, 2) == 'r:' then
      if f == mine or redis.call('EXISTS', 'ctl:gw:alive:' .. string.sub(f, 3)) == 1 then
        r = r + (tonumber(fields[j + 1]) or 0)
      else
        redis.call('HDEL', k, f)
      end
    end
  end
  local limit = tonumber(ARGV[base + i])
  local left = limit - s - r
  local want = tonumber(ARGV[base + 3 * n + 2 * i - 1])
  local slice = tonumber(ARGV[base + 3 * n + 2 * i])
  -- What floating-point sums leave over (1e-9 of the limit) counts as nothing left.
  if want > 0 and left <= limit * 1e-9 then
    out[1] = i
    out[#out + 1] = tostring(s)
    out[#out + 1] = tostring(r)
    out[#out + 1] = '0'
    return out
  end
  local ample = 0
  if left >= 2 * slice then
    grants[i] = math.max(want, slice)
    ample = 1
  else
    grants[i] = math.max(0, math.min(want, left))
  end
  out[#out + 1] = tostring(s)
  out[#out + 1] = tostring(grants[i])
  out[#out + 1] = tostring(ample)
end
for i = 1, n do
  if grants[i] > 0 then redis.call('HINCRBYFLOAT', KEYS[nr + i], mine, grants[i]) end
end
return out
`;

/** A slice of a window this daemon holds reserved, and what its calls in flight took of it. */
interface Lease {
  pool: number;
  outstanding: number;
  /** Granted near the limit: what a call does not spend goes back at once. */
  tight: boolean;
  /** At most this much is kept free between calls (the window's slice). */
  keep: number;
  /** Spent in the window as last heard from Redis plus what this daemon spent since. */
  spent: number;
  usedAt: number;
}

/** Share of a window's limit reserved at a time. */
const LEASE_SHARE = 0.05;
/** A slice with nothing in flight for this long goes back to the window. */
const LEASE_IDLE_MS = 500;
/** How long a call waits for slices held elsewhere to come back, and how often it asks. */
const RESERVED_WAIT_MS = 3000;
const RESERVED_POLL_MS = 100;

/** How often a daemon renews its liveness key, and how long the key lives. */
const ALIVE_EVERY_MS = 5000;
const ALIVE_TTL_MS = 20_000;

/** A settlement waiting for the next round trip: `release` off this daemon's reservation, `spent` added. */
interface Pending {
  key: string;
  release: number;
  spent: number;
  /** Told the window's spent amount once the settlement is in Redis. */
  waiters: ((spent: number) => void)[];
}

/** A settlement batch Redis did not answer is sent again this much later. */
const SETTLE_RETRY_MS = 500;

/** How long spending waits to travel with a grant, or with other spending, before it goes alone. */
const RECONCILE_DELAY_MS = 20;

export interface WindowRef {
  /** Names the window within its kind (`<api key>:<period>:<start>`, `<limit id>:<start>`). */
  key: string;
  start: number;
  end: number;
}

export interface ReserveWindow extends WindowRef {
  limit: number;
  /** What this daemon's log says was spent in the window (used only when Redis has no count yet). */
  seed(): number;
}

export type ReserveResult = { ok: true; spent: number[] } | { ok: false; index: number; spent: number; reserved: number };

type ReserveCommand = (...args: (string | number)[]) => Promise<(string | number)[]>;

export class RedisWindows {
  /** Settlements not yet sent, one per window key (amounts add up). */
  private pending = new Map<string, Pending>();
  /** A batch sent without an answer: sent again, as it was (its number makes Redis apply it once). */
  private unanswered?: { seq: number; batch: Pending[] };
  private batches = 0;
  private settling = false;
  private timer?: NodeJS.Timeout;
  private alive?: NodeJS.Timeout;
  private sweeper?: NodeJS.Timeout;
  private readonly leases = new Map<string, Lease>();

  /**
   * `kind`: `budget` or `tokens` (the Redis key prefix `ctl:gw:<kind>:`); `daemonId`: this daemon
   * process among those sharing the storage (its reservations are kept under it).
   */
  constructor(
    private readonly redis: SharedRedis,
    private readonly kind: string,
    private readonly daemonId: string,
    private readonly now: () => number = Date.now,
  ) {
    if (typeof (redis.client as unknown as Record<string, unknown>).ctlWindows !== 'function') redis.client.defineCommand('ctlWindows', { lua: SCRIPT });
    const renew = () => void redis.client.set(`ctl:gw:alive:${daemonId}`, '1', 'PX', ALIVE_TTL_MS).catch(() => {});
    renew();
    this.alive = setInterval(renew, ALIVE_EVERY_MS);
    this.alive.unref();
    this.sweeper = setInterval(() => this.releaseIdle(this.now(), LEASE_IDLE_MS), 250);
    this.sweeper.unref();
    // After an outage the slices may be gone (a restarted Redis): give back what is held, take anew.
    redis.client.on('ready', () => this.releaseIdle(Infinity, -1));
  }

  /** Give slices back (all with nothing in flight idle for `idleMs`); sent with the next round trip. */
  private releaseIdle(now: number, idleMs: number): void {
    for (const [key, l] of this.leases) {
      if (l.outstanding > 0 || now - l.usedAt <= idleMs) continue;
      this.leases.delete(key);
      if (l.pool > 0) this.settle(key, l.pool, 0);
    }
  }

  /** Stop renewing (the component stops); slices and queued settlements are sent back first. */
  async close(): Promise<void> {
    clearInterval(this.alive);
    clearInterval(this.sweeper);
    for (const [key, l] of this.leases) if (l.pool > 0) this.settle(key, l.pool, 0);
    this.leases.clear();
    if (this.pending.size > 0 || this.unanswered) await this.call().catch(() => {});
  }

  private key(w: WindowRef): string {
    return `ctl:gw:${this.kind}:${w.key}`;
  }

  /** Send the script: the queued settlements (one batch in flight at a time), then the grant when given. */
  private async call(grant?: { windows: readonly ReserveWindow[]; wants: number[]; slices: number[]; now: number }): Promise<(string | number)[]> {
    clearTimeout(this.timer);
    this.timer = undefined;
    // A batch in flight: this call carries no settlements (they keep their order); the grant goes.
    if (this.settling) return this.send(0, [], grant);
    this.settling = true;
    try {
      if (this.unanswered) {
        const u = this.unanswered;
        try {
          await this.send(u.seq, u.batch);
          this.unanswered = undefined;
        } catch (e) {
          this.retryLater();
          throw e;
        }
      }
      const batch = [...this.pending.values()];
      this.pending = new Map();
      const seq = batch.length > 0 ? ++this.batches : 0;
      try {
        return await this.send(seq, batch, grant);
      } catch (e) {
        // Spending must not be lost to a blip, nor counted twice: the same batch goes again.
        if (batch.length > 0) this.unanswered = { seq, batch };
        this.retryLater();
        throw e;
      }
    } finally {
      this.settling = false;
      if (this.pending.size > 0) this.retryLater(RECONCILE_DELAY_MS);
    }
  }

  private retryLater(ms = SETTLE_RETRY_MS): void {
    if (this.timer || (!this.unanswered && this.pending.size === 0)) return;
    this.timer = setTimeout(() => void this.call().catch(() => {}), ms);
    this.timer.unref();
  }

  private async send(seq: number, batch: Pending[], grant?: { windows: readonly ReserveWindow[]; wants: number[]; slices: number[]; now: number }): Promise<(string | number)[]> {
    const windows = grant?.windows ?? [];
    const keys = [...batch.map((p) => p.key), ...windows.map((w) => this.key(w))];
    const args: string[] = [String(batch.length), this.daemonId, String(seq)];
    for (const p of batch) args.push(String(p.release), String(p.spent));
    for (const w of windows) args.push(String(w.limit));
    for (const w of windows) args.push(String(w.seed()));
    for (const w of windows) args.push(String(Math.max(1000, w.end - (grant?.now ?? 0) + KEEP_AFTER_END_MS)));
    (grant?.wants ?? []).forEach((want, i) => args.push(String(want), String(grant!.slices[i])));
    const r = await this.redis.run((c) => (c as unknown as { ctlWindows: ReserveCommand }).ctlWindows(keys.length, ...keys, ...args));
    batch.forEach((p, i) => {
      const spent = Number(r[1 + i] ?? 0);
      for (const w of p.waiters) w(spent);
    });
    return [r[0]!, ...r.slice(1 + batch.length)];
  }

  /** True when the slice covers `estimate` (an estimate of 0 needs the slice not used up). */
  private covers(l: Lease | undefined, estimate: number): boolean {
    if (!l) return false;
    const free = l.pool - l.outstanding;
    return estimate > 0 ? free >= estimate : free > 0;
  }

  /**
   * Admit a call estimated at `estimate` in every window: from this daemon's slices when they cover
   * it, else after a round trip that takes larger slices (or finds a window used up: refused).
   */
  async reserve(windows: readonly ReserveWindow[], estimate: number, now: number): Promise<ReserveResult> {
    const keys = windows.map((w) => this.key(w));
    let held = keys.map((k) => this.leases.get(k));
    if (!held.every((l, i) => this.covers(l, estimate) && l!.pool <= windows[i]!.limit)) {
      const wants = windows.map((w, i) => {
        const l = held[i];
        if (this.covers(l, estimate)) return 0;
        const free = l ? Math.max(0, l.pool - l.outstanding) : 0;
        return Math.max(estimate - free, Number.EPSILON);
      });
      let r = await this.call({ windows, wants, slices: windows.map((w) => w.limit * LEASE_SHARE), now });
      // A window full of reservations but not of spending: slices other daemons hold come back
      // when they go idle. Wait for that (briefly) rather than refuse a call the limit allows.
      for (let waited = 0; Number(r[0]) > 0 && waited < RESERVED_WAIT_MS; waited += RESERVED_POLL_MS) {
        const b = Number(r[0]) - 1;
        const at = 1 + 3 * b;
        if (Number(r[at]) >= windows[b]!.limit * (1 - 1e-9)) break;
        // This daemon's own free slice (short of the estimate) lets the call cross the limit.
        if (held.every((l) => l && l.pool - l.outstanding > 0)) break;
        await new Promise((res) => setTimeout(res, RESERVED_POLL_MS));
        r = await this.call({ windows, wants, slices: windows.map((w) => w.limit * LEASE_SHARE), now });
      }
      const blocked = Number(r[0]);
      if (blocked > 0) {
        const at = 1 + 3 * (blocked - 1);
        if (held.every((l) => l && l.pool - l.outstanding > 0)) {
          for (const l of held as Lease[]) {
            l.outstanding += estimate;
            l.usedAt = now;
          }
          return { ok: true, spent: (held as Lease[]).map((l) => l.spent) };
        }
        return { ok: false, index: blocked - 1, spent: Number(r[at]), reserved: Number(r[at + 1]) };
      }
      held = keys.map((k, i) => {
        const spent = Number(r[1 + 3 * i]);
        const granted = Number(r[2 + 3 * i]);
        const l = this.leases.get(k) ?? { pool: 0, outstanding: 0, tight: false, keep: windows[i]!.limit * LEASE_SHARE, spent, usedAt: now };
        l.pool += granted;
        l.spent = spent;
        l.tight = Number(r[3 + 3 * i]) === 0;
        this.leases.set(k, l);
        return l;
      });
    }
    // Admitted: a slice short of the estimate (the last of a window) still lets this call cross.
    for (const l of held as Lease[]) {
      l.outstanding += estimate;
      l.usedAt = now;
    }
    return { ok: true, spent: (held as Lease[]).map((l) => l.spent) };
  }

  private merge(p: Pending): void {
    const q = this.pending.get(p.key);
    if (!q) return void this.pending.set(p.key, p);
    q.release += p.release;
    q.spent += p.spent;
    q.waiters.push(...p.waiters);
  }

  private settle(key: string, release: number, spent: number): Promise<number> {
    const p = new Promise<number>((resolve) => this.merge({ key, release, spent, waiters: [resolve] }));
    if (!this.timer) {
      this.timer = setTimeout(() => void this.call().catch(() => {}), RECONCILE_DELAY_MS);
      this.timer.unref();
    }
    return p;
  }

  /**
   * A call admitted with `estimate` used `actual`: it is spent from this daemon's slice and sent
   * with the next round trip (or alone a moment later). Resolves with each window's spent amount.
   */
  reconcile(windows: readonly WindowRef[], estimate: number, actual: number): Promise<number[]> {
    return Promise.all(
      windows.map((w) => {
        const key = this.key(w);
        const l = this.leases.get(key);
        if (!l) return this.settle(key, 0, actual);
        l.outstanding = Math.max(0, l.outstanding - estimate);
        l.spent += actual;
        l.usedAt = this.now();
        // Near the limit nothing is kept beyond what calls in flight need, elsewhere at most one
        // slice: what other daemons could use does not linger here.
        const keep = l.tight ? 0 : l.keep;
        const release = actual + Math.max(0, l.pool - actual - l.outstanding - keep);
        l.pool -= release;
        if (l.tight && l.outstanding === 0) this.leases.delete(key);
        return this.settle(key, release, actual);
      }),
    );
  }

  /** Spent per window, as Redis counts it now (views and metrics). */
  async spent(windows: readonly WindowRef[]): Promise<(number | undefined)[]> {
    if (windows.length === 0) return [];
    if (this.pending.size > 0) await this.call().catch(() => {});
    const values = await this.redis.run((c) => Promise.all(windows.map((w) => c.hget(this.key(w), 'spent'))));
    return values.map((v) => (v === null ? undefined : Number(v)));
  }
}

/** A call admitted and not yet reconciled that never reports is given back after this long. */
const RESERVATION_TTL_MS = 15 * 60_000;

/**
 * Calls admitted against shared windows and not yet reconciled, by request id: what each reserved
 * (its windows and estimate), taken back when the request is recorded.
 */
export class HeldReservations<W extends WindowRef> {
  private readonly held = new Map<string, { windows: W[]; estimate: number; at: number }>();

  constructor(private readonly windows: RedisWindows) {}

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

  /** Requests that never reported (should not happen) give their estimate back. */
  private sweep(now: number): void {
    for (const [id, r] of this.held) {
      if (now - r.at < RESERVATION_TTL_MS) continue;
      this.held.delete(id);
      void this.windows.reconcile(r.windows, r.estimate, 0).catch(() => {});
    }
  }
}
