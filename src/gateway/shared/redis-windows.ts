/**
 * Limit windows counted in the shared Redis (ctl.yaml storage.redis), so a limit holds for the
 * cluster, not per daemon: budget windows (dollars) and token-limit windows (tokens). Each window is
 * one hash with the amount `spent` and `reserved`. Before a call the gateway reserves the call's
 * estimate in every window that applies, atomically (one Lua script): a window whose spent +
 * reserved already reached its limit refuses, and nothing is reserved anywhere. After the call the
 * reservation is replaced by the actual amount (reconcile). So concurrent requests on any number of
 * daemons are admitted only while their reservations fit, and a limit is overshot by at most the
 * one request that crosses it plus whatever the estimates fell short of (TensorZero's way; LiteLLM
 * checks spend after the fact and overshoots by every request in flight).
 *
 * A window seen for the first time starts from this daemon's own request log for that window
 * (the best it knows); it expires from Redis a day after it ends. Reconciliations travel with the
 * next reservation (one round trip per request under load).
 */
import type { SharedRedis } from '../../store/redis.js';

const KEEP_AFTER_END_MS = 86_400_000;

/**
 * One script does both jobs, so a request costs one round trip: first the reconciliations queued
 * since the last call (KEYS[1..nr]: per key the estimate reserved and the actual amount), then the
 * reservation (the other KEYS: per window its limit, seed and time to live; `est` the amount).
 * Reservations are kept per daemon (field `r:<daemon>`), and a daemon whose liveness key
 * (`ctl:gw:alive:<daemon>`, renewed every few seconds) has expired loses its reservations: a daemon
 * killed between a reservation and its reconciliation holds nothing for long.
 * ARGV: nr, est, daemon id, then 2·nr reconcile values, then 3·n reservation values. Returns
 * {blocked window (0 = none), then the spent amount of every key, reconciled ones first}.
 */
const SCRIPT = `
local nr = tonumber(ARGV[1])
local est = tonumber(ARGV[2])
local mine = 'r:' .. ARGV[3]
local out = {0}
for i = 1, nr do
  local k = KEYS[i]
  if redis.call('EXISTS', k) == 1 then
    out[#out + 1] = redis.call('HINCRBYFLOAT', k, 'spent', ARGV[3 + 2 * i])
    local r = tonumber(redis.call('HINCRBYFLOAT', k, mine, -tonumber(ARGV[2 + 2 * i])))
    if r <= 0 then redis.call('HDEL', k, mine) end
  else
    out[#out + 1] = '0'
  end
end
local n = #KEYS - nr
local base = 3 + 2 * nr
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
  out[#out + 1] = tostring(s)
  if s + r >= tonumber(ARGV[base + i]) then
    out[1] = i
    out[#out + 1] = tostring(r)
    return out
  end
end
if est > 0 then
  for i = 1, n do redis.call('HINCRBYFLOAT', KEYS[nr + i], mine, est) end
end
return out
`;

/** How often a daemon renews its liveness key, and how long the key lives. */
const ALIVE_EVERY_MS = 5000;
const ALIVE_TTL_MS = 20_000;

/** A reconciliation waiting for the next round trip. */
interface Pending {
  key: string;
  estimate: number;
  actual: number;
  done: (spent: number | undefined) => void;
  fail: (e: unknown) => void;
}

/** How long a reconciliation waits for a reservation to travel with before it goes alone. */
const RECONCILE_DELAY_MS = 2;

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
  private pending: Pending[] = [];
  private timer?: NodeJS.Timeout;
  private alive?: NodeJS.Timeout;

  /**
   * `kind`: `budget` or `tokens` (the Redis key prefix `ctl:gw:<kind>:`); `daemonId`: this daemon
   * process among those sharing the storage (its reservations are kept under it).
   */
  constructor(
    private readonly redis: SharedRedis,
    private readonly kind: string,
    private readonly daemonId: string,
  ) {
    if (typeof (redis.client as unknown as Record<string, unknown>).ctlWindows !== 'function') redis.client.defineCommand('ctlWindows', { lua: SCRIPT });
    const renew = () => void redis.client.set(`ctl:gw:alive:${daemonId}`, '1', 'PX', ALIVE_TTL_MS).catch(() => {});
    renew();
    this.alive = setInterval(renew, ALIVE_EVERY_MS);
    this.alive.unref();
  }

  /** Stop renewing (the component stops); queued reconciliations are sent first. */
  async close(): Promise<void> {
    clearInterval(this.alive);
    if (this.pending.length > 0) await this.call().catch(() => {});
  }

  private key(w: WindowRef): string {
    return `ctl:gw:${this.kind}:${w.key}`;
  }

  /** Send the script: the queued reconciliations, then `reserve` when given. */
  private async call(reserve?: { windows: readonly ReserveWindow[]; estimate: number; now: number }): Promise<(string | number)[]> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    const windows = reserve?.windows ?? [];
    const keys = [...batch.map((p) => p.key), ...windows.map((w) => this.key(w))];
    const args: string[] = [String(batch.length), String(reserve?.estimate ?? 0), this.daemonId];
    for (const p of batch) args.push(String(p.estimate), String(p.actual));
    for (const w of windows) args.push(String(w.limit));
    for (const w of windows) args.push(String(w.seed()));
    for (const w of windows) args.push(String(Math.max(1000, w.end - (reserve?.now ?? 0) + KEEP_AFTER_END_MS)));
    try {
      const r = await this.redis.run((c) => (c as unknown as { ctlWindows: ReserveCommand }).ctlWindows(keys.length, ...keys, ...args));
      batch.forEach((p, i) => p.done(r[1 + i] === undefined ? undefined : Number(r[1 + i])));
      return [r[0]!, ...r.slice(1 + batch.length)];
    } catch (e) {
      for (const p of batch) p.fail(e);
      throw e;
    }
  }

  async reserve(windows: readonly ReserveWindow[], estimate: number, now: number): Promise<ReserveResult> {
    const r = await this.call({ windows, estimate, now });
    const index = Number(r[0]);
    if (index > 0) return { ok: false, index: index - 1, spent: Number(r[index]), reserved: Number(r[index + 1]) };
    return { ok: true, spent: r.slice(1).map(Number) };
  }

  /**
   * Turn a reservation into the actual amount. Queued and sent with the next reservation (or alone
   * a moment later): a request's reserve and its predecessor's reconcile share one round trip.
   * Resolves with the spent amount of each window afterwards.
   */
  reconcile(windows: readonly WindowRef[], estimate: number, actual: number): Promise<number[]> {
    if (windows.length === 0) return Promise.resolve([]);
    const parts = windows.map(
      (w) =>
        new Promise<number>((resolve, reject) =>
          this.pending.push({ key: this.key(w), estimate, actual, done: (v) => resolve(v ?? 0), fail: reject }),
        ),
    );
    if (!this.timer) {
      this.timer = setTimeout(() => void this.call().catch(() => {}), RECONCILE_DELAY_MS);
      this.timer.unref();
    }
    return Promise.all(parts);
  }

  /** Spent per window, as Redis counts it now (views and metrics). */
  async spent(windows: readonly WindowRef[]): Promise<(number | undefined)[]> {
    if (windows.length === 0) return [];
    if (this.pending.length > 0) await this.call();
    const values = await this.redis.run((c) => Promise.all(windows.map((w) => c.hget(this.key(w), 'spent'))));
    return values.map((v) => (v === null ? undefined : Number(v)));
  }
}
