/**
 * Limit windows counted in the shared Redis (ctl.yaml storage.redis), so a limit holds for the
 * cluster, not per daemon (the rules: limit-windows.ts). Each window is a hash with the
 * amount `spent`, a hash `<window>:r` of reservations (call id → amount) and a sorted set
 * `<window>:e` of their lease ends. Every call is reserved by one Lua script (defineCommand:
 * EVALSHA), which drops expired leases, checks spent + reserved against the limit and reserves, in
 * one atomic step: concurrent calls on any number of daemons, or on one, can never count the same
 * room twice.
 *
 * Leases: a reservation lives LEASE_MS (Redis's own clock) and this daemon renews the leases of its
 * calls in flight every RENEW_MS, so a daemon that dies, or a call whose reservation Redis ran after
 * the client had given up (a stalled Redis), holds nothing for longer than LEASE_MS. A call whose
 * reservation got no answer releases it by id at once (queued and sent until Redis answers; a
 * release of nothing is harmless).
 *
 * Settlements (the reservation goes, the real use is spent) are batched for RECONCILE_DELAY_MS and
 * numbered per daemon, one batch in flight at a time: a batch sent again after a lost answer is
 * applied once (each window remembers the last batch of each daemon), never lost nor counted twice.
 *
 * A window seen for the first time starts from the request log for that window; it expires from
 * Redis a day after it ends.
 */
import type { SharedRedis } from '../../store/redis.js';
import type { LimitWindows, ReserveResult, ReserveWindow, SettleWindow, WindowRef } from './limit-windows.js';

export type { ReserveResult, ReserveWindow, WindowRef } from './limit-windows.js';

const KEEP_AFTER_END_MS = 86_400_000;

/** A reservation's lease (Redis's clock), and how often this daemon renews those of its calls in flight. */
export const LEASE_MS = 15_000;
const RENEW_MS = 5_000;

/** What floating-point sums leave over (1e-9 of the limit) counts as nothing left: as `full` in limit-windows.ts. */
const NOW_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * KEYS: the windows. ARGV: call id, lease ms, estimate, then per window limit, seed, time to live.
 * Returns {0, spent of each window} when reserved, {i, spent, reserved} when window i is full.
 */
const RESERVE = `${NOW_LUA}
local id = ARGV[1]
local lease = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local out = {0}
for i = 1, #KEYS do
  local k = KEYS[i]
  local limit = tonumber(ARGV[1 + 3 * i])
  if redis.call('EXISTS', k) == 0 then
    redis.call('HSET', k, 'spent', ARGV[2 + 3 * i])
    redis.call('PEXPIRE', k, ARGV[3 + 3 * i])
  end
  local gone = redis.call('ZRANGEBYSCORE', k .. ':e', '-inf', now)
  for _, g in ipairs(gone) do redis.call('HDEL', k .. ':r', g) end
  if #gone > 0 then redis.call('ZREMRANGEBYSCORE', k .. ':e', '-inf', now) end
  local s = tonumber(redis.call('HGET', k, 'spent')) or 0
  local r = 0
  local held = redis.call('HGETALL', k .. ':r')
  for j = 1, #held, 2 do
    if held[j] ~= id then r = r + (tonumber(held[j + 1]) or 0) end
  end
  if limit - s - r <= limit * 1e-9 then
    return {i, tostring(s), tostring(r)}
  end
  out[#out + 1] = tostring(s)
end
if want > 0 then
  for i = 1, #KEYS do
    local k = KEYS[i]
    redis.call('HSET', k .. ':r', id, want)
    redis.call('ZADD', k .. ':e', now + lease, id)
    redis.call('PEXPIRE', k .. ':r', ARGV[3 + 3 * i])
    redis.call('PEXPIRE', k .. ':e', ARGV[3 + 3 * i])
  end
end
return out
`;

/**
 * KEYS: windows. ARGV: daemon, batch number, then per window: amount spent, seed ('' for none), time
 * to live, number of ids, the ids (their reservations go). Returns the spent amount of each window.
 */
const SETTLE = `
local q = 'q:' .. ARGV[1]
local seq = tonumber(ARGV[2])
local a = 3
local out = {}
for i = 1, #KEYS do
  local k = KEYS[i]
  local add = ARGV[a]
  local n = tonumber(ARGV[a + 3])
  for j = a + 4, a + 3 + n do
    redis.call('HDEL', k .. ':r', ARGV[j])
    redis.call('ZREM', k .. ':e', ARGV[j])
  end
  if redis.call('EXISTS', k) == 0 and ARGV[a + 1] ~= '' then
    redis.call('HSET', k, 'spent', ARGV[a + 1])
    redis.call('PEXPIRE', k, ARGV[a + 2])
  end
  a = a + 4 + n
  if redis.call('EXISTS', k) == 0 then
    out[i] = '0'
  elseif seq > (tonumber(redis.call('HGET', k, q)) or 0) then
    redis.call('HSET', k, q, seq)
    out[i] = redis.call('HINCRBYFLOAT', k, 'spent', add)
  else
    out[i] = redis.call('HGET', k, 'spent')
  end
end
return out
`;

/** KEYS: windows. ARGV: lease ms, then per window: number of ids, the ids. Renews leases still held. */
const RENEW = `${NOW_LUA}
local lease = tonumber(ARGV[1])
local a = 2
for i = 1, #KEYS do
  local n = tonumber(ARGV[a])
  for j = a + 1, a + n do redis.call('ZADD', KEYS[i] .. ':e', 'XX', now + lease, ARGV[j]) end
  a = a + 1 + n
end
return 0
`;

/** A settlement waiting for the next batch: the ids whose reservations go, and the amount spent. */
interface Pending {
  key: string;
  /** The window's start (seed, when it is not counted yet) and time to live. */
  seed: string;
  ttl: number;
  ids: string[];
  spent: number;
  /** Told the window's spent amount once the settlement is in Redis. */
  waiters: ((spent: number) => void)[];
}

/** A settlement batch Redis did not answer is sent again this much later. */
const SETTLE_RETRY_MS = 500;
/** How long spending waits to travel with other spending before it goes alone. */
const RECONCILE_DELAY_MS = 20;

type Command = (...args: (string | number)[]) => Promise<(string | number)[]>;
interface Commands {
  ctlReserve: Command;
  ctlSettle: Command;
  ctlRenew: Command;
}

export class RedisWindows implements LimitWindows {
  /** Settlements not yet sent, one per window key (amounts add up). */
  private pending = new Map<string, Pending>();
  /** A batch sent without an answer: sent again, as it was (its number makes Redis apply it once). */
  private unanswered?: { seq: number; batch: Pending[] };
  private batches = 0;
  private settling = false;
  private timer?: NodeJS.Timeout;
  private readonly renewer: NodeJS.Timeout;
  /** Reservations of this daemon's calls in flight (call id → window keys), renewed until settled. */
  private readonly held = new Map<string, string[]>();

  /**
   * `kind`: `budget`, `tokens` or `rpm` (the Redis key prefix `ctl:gw:<kind>:`); `daemonId`: this daemon
   * process among those sharing the storage (numbers its settlement batches).
   */
  private readonly leaseMs: number;

  constructor(
    private readonly redis: SharedRedis,
    private readonly kind: string,
    private readonly daemonId: string,
    /** Tests shorten the lease (renewed every third of it). */
    o: { leaseMs?: number } = {},
  ) {
    this.leaseMs = o.leaseMs ?? LEASE_MS;
    const c = redis.client as unknown as Record<string, unknown>;
    if (typeof c.ctlReserve !== 'function') redis.client.defineCommand('ctlReserve', { lua: RESERVE });
    if (typeof c.ctlSettle !== 'function') redis.client.defineCommand('ctlSettle', { lua: SETTLE });
    if (typeof c.ctlRenew !== 'function') redis.client.defineCommand('ctlRenew', { lua: RENEW });
    this.renewer = setInterval(() => void this.renew().catch(() => {}), Math.min(RENEW_MS, this.leaseMs / 3));
    this.renewer.unref();
  }

  private get commands(): Commands {
    return this.redis.client as unknown as Commands;
  }

  private key(w: WindowRef): string {
    return `ctl:gw:${this.kind}:${w.key}`;
  }

  /**
   * One atomic reservation. When Redis does not answer (a timeout: it may still run the script
   * later) the call releases what it may hold by id before the error goes up.
   */
  async reserve(windows: readonly ReserveWindow[], estimate: number, id: string, now: number): Promise<ReserveResult> {
    const keys = windows.map((w) => this.key(w));
    const args: (string | number)[] = [id, this.leaseMs, estimate];
    for (const w of windows) args.push(w.limit, w.seed(), Math.max(1000, w.end - now + KEEP_AFTER_END_MS));
    let r: (string | number)[];
    try {
      r = await this.redis.run(() => this.commands.ctlReserve(keys.length, ...keys, ...args));
    } catch (e) {
      if (estimate > 0) keys.forEach((k) => void this.queue(k, [id], 0));
      throw e;
    }
    const blocked = Number(r[0]);
    if (blocked > 0) return { ok: false, index: blocked - 1, spent: Number(r[1]), reserved: Number(r[2]) };
    if (estimate > 0) this.held.set(id, keys);
    return { ok: true, spent: r.slice(1).map(Number) };
  }

  settle(windows: readonly SettleWindow[], id: string, actual: number): Promise<number[]> {
    this.held.delete(id);
    // Released by id whether or not this call holds a reservation in the window: nothing to release is harmless.
    return Promise.all(windows.map((w) => this.queue(this.key(w), [id], actual, w)));
  }

  /** Spent per window, as Redis counts it now (views and metrics). */
  async spent(windows: readonly WindowRef[]): Promise<(number | undefined)[]> {
    if (windows.length === 0) return [];
    if (this.pending.size > 0) await this.flush().catch(() => {});
    const values = await this.redis.run((c) => Promise.all(windows.map((w) => c.hget(this.key(w), 'spent'))));
    return values.map((v) => (v === null ? undefined : Number(v)));
  }

  /** Stop renewing (the component stops); reservations held and queued settlements are sent first. */
  async close(): Promise<void> {
    clearInterval(this.renewer);
    for (const [id, keys] of this.held) for (const k of keys) void this.queue(k, [id], 0);
    this.held.clear();
    if (this.pending.size > 0 || this.unanswered) await this.flush().catch(() => {});
  }

  /** Number of calls whose reservations this daemon holds (tests). */
  get inFlight(): number {
    return this.held.size;
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const byKey = new Map<string, string[]>();
    for (const [id, keys] of this.held) for (const k of keys) (byKey.get(k) ?? byKey.set(k, []).get(k)!).push(id);
    const keys = [...byKey.keys()];
    const args: (string | number)[] = [this.leaseMs];
    for (const k of keys) args.push(byKey.get(k)!.length, ...byKey.get(k)!);
    await this.redis.run(() => this.commands.ctlRenew(keys.length, ...keys, ...args));
  }

  private queue(key: string, ids: string[], spent: number, w?: SettleWindow): Promise<number> {
    const p = new Promise<number>((resolve) => {
      const q = this.pending.get(key);
      const seed = w?.seed ? String(w.seed()) : '';
      const ttl = w ? Math.max(1000, w.end - Date.now() + KEEP_AFTER_END_MS) : 1000;
      if (!q) this.pending.set(key, { key, seed, ttl, ids, spent, waiters: [resolve] });
      else {
        if (q.seed === '' && seed !== '') Object.assign(q, { seed, ttl });
        q.ids.push(...ids);
        q.spent += spent;
        q.waiters.push(resolve);
      }
    });
    if (!this.timer && !this.settling) {
      this.timer = setTimeout(() => void this.flush().catch(() => {}), RECONCILE_DELAY_MS);
      this.timer.unref();
    }
    return p;
  }

  /** Send the queued settlements: first a batch left unanswered, then the new one; one in flight at a time. */
  private async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.settling) return;
    this.settling = true;
    try {
      if (this.unanswered) {
        await this.send(this.unanswered.seq, this.unanswered.batch);
        this.unanswered = undefined;
      }
      if (this.pending.size === 0) return;
      const batch = [...this.pending.values()];
      this.pending = new Map();
      const seq = ++this.batches;
      this.unanswered = { seq, batch };
      await this.send(seq, batch);
      this.unanswered = undefined;
    } catch (e) {
      // Spending must not be lost to a blip, nor counted twice: the same batch goes again.
      this.retryLater(SETTLE_RETRY_MS);
      throw e;
    } finally {
      this.settling = false;
      if (this.pending.size > 0) this.retryLater(RECONCILE_DELAY_MS);
    }
  }

  private retryLater(ms: number): void {
    if (this.timer || (!this.unanswered && this.pending.size === 0)) return;
    this.timer = setTimeout(() => void this.flush().catch(() => {}), ms);
    this.timer.unref();
  }

  private async send(seq: number, batch: Pending[]): Promise<void> {
    const keys = batch.map((p) => p.key);
    const args: (string | number)[] = [this.daemonId, seq];
    for (const p of batch) args.push(String(p.spent), p.seed, p.ttl, p.ids.length, ...p.ids);
    const r = await this.redis.run(() => this.commands.ctlSettle(keys.length, ...keys, ...args));
    batch.forEach((p, i) => {
      const spent = Number(r[i] ?? 0);
      for (const w of p.waiters) w(spent);
    });
  }
}
