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
 * (the best it knows); it expires from Redis a day after it ends.
 */
import type { SharedRedis } from '../../store/redis.js';

const KEEP_AFTER_END_MS = 86_400_000;

/** KEYS: window hashes. ARGV: estimate, then per window its limit, seed and time to live (ms). */
const RESERVE = `
local n = #KEYS
local est = tonumber(ARGV[1])
local spent = {}
for i = 1, n do
  if redis.call('EXISTS', KEYS[i]) == 0 then
    redis.call('HSET', KEYS[i], 'spent', ARGV[n + 1 + i], 'reserved', 0)
    redis.call('PEXPIRE', KEYS[i], ARGV[2 * n + 1 + i])
  end
  local s = tonumber(redis.call('HGET', KEYS[i], 'spent')) or 0
  local r = tonumber(redis.call('HGET', KEYS[i], 'reserved')) or 0
  spent[i] = tostring(s)
  if s + r >= tonumber(ARGV[1 + i]) then
    return {i, tostring(s), tostring(r)}
  end
end
if est > 0 then
  for i = 1, n do redis.call('HINCRBYFLOAT', KEYS[i], 'reserved', est) end
end
local out = {0}
for i = 1, n do out[i + 1] = spent[i] end
return out
`;

/** KEYS: window hashes. ARGV: the estimate reserved, the actual cost. Returns spent per window. */
const RECONCILE = `
local out = {}
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    local s = redis.call('HINCRBYFLOAT', KEYS[i], 'spent', ARGV[2])
    local r = tonumber(redis.call('HINCRBYFLOAT', KEYS[i], 'reserved', -tonumber(ARGV[1])))
    if r < 0 then redis.call('HSET', KEYS[i], 'reserved', 0) end
    out[i] = tostring(s)
  else
    out[i] = '0'
  end
end
return out
`;

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
  /** `kind`: `budget` or `tokens` (the Redis key prefix `ctl:gw:<kind>:`). */
  constructor(
    private readonly redis: SharedRedis,
    private readonly kind: string,
  ) {
    const c = redis.client as unknown as Record<string, unknown>;
    if (typeof c.ctlWindowReserve !== 'function') {
      redis.client.defineCommand('ctlWindowReserve', { lua: RESERVE });
      redis.client.defineCommand('ctlWindowReconcile', { lua: RECONCILE });
    }
  }

  private key(w: WindowRef): string {
    return `ctl:gw:${this.kind}:${w.key}`;
  }

  async reserve(windows: readonly ReserveWindow[], estimate: number, now: number): Promise<ReserveResult> {
    const keys = windows.map((w) => this.key(w));
    const args = [
      String(estimate),
      ...windows.map((w) => String(w.limit)),
      ...windows.map((w) => String(w.seed())),
      ...windows.map((w) => String(Math.max(1000, w.end - now + KEEP_AFTER_END_MS))),
    ];
    const r = await this.redis.run((c) => (c as unknown as { ctlWindowReserve: ReserveCommand }).ctlWindowReserve(keys.length, ...keys, ...args));
    const index = Number(r[0]);
    if (index > 0) return { ok: false, index: index - 1, spent: Number(r[1]), reserved: Number(r[2]) };
    return { ok: true, spent: r.slice(1).map(Number) };
  }

  async reconcile(windows: readonly WindowRef[], estimate: number, actual: number): Promise<number[]> {
    if (windows.length === 0) return [];
    const keys = windows.map((w) => this.key(w));
    const r = await this.redis.run((c) => (c as unknown as { ctlWindowReconcile: ReserveCommand }).ctlWindowReconcile(keys.length, ...keys, String(estimate), String(actual)));
    return r.map(Number);
  }

  /** Spent per window, as Redis counts it now (views and metrics). */
  async spent(windows: readonly WindowRef[]): Promise<(number | undefined)[]> {
    if (windows.length === 0) return [];
    const values = await this.redis.run((c) => Promise.all(windows.map((w) => c.hget(this.key(w), 'spent'))));
    return values.map((v) => (v === null ? undefined : Number(v)));
  }
}
