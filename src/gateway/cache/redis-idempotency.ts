/**
 * Idempotency keys across daemons (ctl.yaml storage.redis): a retry that a load balancer sends to
 * another daemon finds the first request's claim or answer in Redis. One key per idempotency key
 * (`ctl:gw:idem:<api key>\0<key>` hashed): while the first request runs it holds
 * `{state: pending, fingerprint, daemon, token}`, renewed every few seconds while the request runs (so a
 * daemon killed mid-request blocks the key for IN_FLIGHT_MS at most); its answer is kept `{state: done, fingerprint, answer}` for the
 * window; a failed request deletes its claim so a duplicate may take over. Duplicates elsewhere wait
 * (polling) and then replay; the same key with another body is a conflict, as on one daemon.
 *
 * A claim Redis did not answer in time (a stalled Redis runs it later) is given up by its token
 * (sent until Redis answers): the retry of the refused request finds the key free as soon as Redis
 * answers again, not IN_FLIGHT_MS later. A finish Redis did not answer is sent again the same way.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { SharedRedis } from '../../store/redis.js';
import type { StoredAnswer } from './answer.js';

/** A claim not renewed (its daemon gone) ends this long after its last renewal. */
export const IN_FLIGHT_MS = 10_000;
const RENEW_MS = 3_000;
const POLL_MS = 50;
/** A give-up or finish Redis did not answer is sent again this often, for GIVE_UP_MS at most. */
const RESEND_MS = 250;
const GIVE_UP_MS = 60_000;

/** KEYS[1]; ARGV: fingerprint, pending value, time to live. Returns nil (claimed) or the value there. */
const CLAIM = `
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return false
`;

/** KEYS[1]; ARGV: the claim's token, the done value (or '' to give the claim up), its time to live. */
const FINISH = `
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
local ok, cur = pcall(cjson.decode, v)
if not ok or cur.s ~= 'p' or cur.t ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
return 1
`;

interface Value {
  s: 'p' | 'd';
  f: string;
  d?: string;
  /** The claim's own token (a claim is given up or finished only by its token). */
  t?: string;
  a?: StoredAnswer;
}

export type SharedClaim =
  | { kind: 'leader'; complete(answer: StoredAnswer | undefined): Promise<void> }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'wait'; settled: Promise<void> }
  | { kind: 'conflict' };

type Script = (...args: (string | number)[]) => Promise<string | number | null>;

export class SharedIdempotency {
  constructor(
    private readonly redis: SharedRedis,
    private readonly daemonId: string,
    private readonly windowMs: number,
  ) {
    const c = redis.client as unknown as Record<string, unknown>;
    if (typeof c.ctlIdemClaim !== 'function') {
      redis.client.defineCommand('ctlIdemClaim', { numberOfKeys: 1, lua: CLAIM });
      redis.client.defineCommand('ctlIdemFinish', { numberOfKeys: 1, lua: FINISH });
    }
  }

  private key(key: string): string {
    return `ctl:gw:idem:${createHash('sha256').update(key).digest('hex')}`;
  }

  async claim(key: string, fingerprint: string): Promise<SharedClaim> {
    const k = this.key(key);
    const token = randomUUID();
    const pending = JSON.stringify({ s: 'p', f: fingerprint, d: this.daemonId, t: token } satisfies Value);
    let found;
    try {
      found = await this.redis.run((c) => (c as unknown as { ctlIdemClaim: Script }).ctlIdemClaim(k, fingerprint, pending, IN_FLIGHT_MS));
    } catch (e) {
      // Redis may still run the claim (a stall past the command timeout): give it up by its token.
      void this.finish(k, token, '').catch(() => {});
      throw e;
    }
    if (found === null || found === undefined) {
      const renew = setInterval(() => void this.redis.client.pexpire(k, IN_FLIGHT_MS).catch(() => {}), RENEW_MS);
      renew.unref();
      return {
        kind: 'leader',
        complete: async (answer) => {
          clearInterval(renew);
          const done = answer === undefined ? '' : JSON.stringify({ s: 'd', f: fingerprint, a: answer } satisfies Value);
          await this.finish(k, token, done);
        },
      };
    }
    let v: Value;
    try {
      v = JSON.parse(String(found)) as Value;
    } catch {
      return { kind: 'conflict' };
    }
    if (v.f !== fingerprint) return { kind: 'conflict' };
    if (v.s === 'd' && v.a) return { kind: 'replay', answer: v.a };
    return { kind: 'wait', settled: this.changed(k, String(found)) };
  }

  /**
   * Finish (or, with `done` = '', give up) the claim `token` holds; sent again every RESEND_MS while
   * Redis does not answer (a stalled Redis runs them in order when it wakes, so the claim goes right
   * after it is made), for GIVE_UP_MS at most; then rejects with the last error.
   */
  private async finish(k: string, token: string, done: string): Promise<void> {
    const until = Date.now() + GIVE_UP_MS;
    for (;;) {
      try {
        await this.redis.run((c) => (c as unknown as { ctlIdemFinish: Script }).ctlIdemFinish(k, token, done, this.windowMs));
        return;
      } catch (e) {
        if (/^ERR /.test((e as Error).message ?? '') || Date.now() + RESEND_MS > until) throw e;
        await new Promise((r) => setTimeout(r, RESEND_MS));
      }
    }
  }

  /**
   * Resolves once the value at `k` is no longer `was` (answered, given up or expired), or Redis
   * cannot be asked (the claim that follows says so).
   */
  private async changed(k: string, was: string): Promise<void> {
    for (;;) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      try {
        if ((await this.redis.run((c) => c.get(k))) !== was) return;
      } catch {
        return;
      }
    }
  }
}
