/**
 * Provider circuit breakers (notes §1.7), one per provider connection, in memory:
 *
 *   CLOSED ──failures ≥ degradationThreshold──▶ DEGRADED (traffic still flows)
 *   CLOSED/DEGRADED ──failures ≥ failureThreshold──▶ OPEN (every attempt on the provider is skipped)
 *   OPEN ──reset time elapsed (checked lazily, no timer)──▶ HALF_OPEN (exactly one probe goes through)
 *   HALF_OPEN ──probe succeeds──▶ CLOSED (counters reset) · ──probe fails──▶ OPEN (one more open cycle)
 *
 * A success in CLOSED/DEGRADED takes one failure off, so recovery is gradual. The reset time doubles
 * per open cycle beyond `backoffEscalationCount`, up to `maxBackoffMultiplier` × the reset time.
 * Only provider faults count (408, 5xx, connection failures, timeouts); 429 and client errors are
 * neutral, and a client abort only gives the probe back. A provider with no record is CLOSED with
 * no failures: the common case costs one Map lookup.
 */
import type { BreakerProfile } from './settings.js';

export type BreakerState = 'CLOSED' | 'DEGRADED' | 'OPEN' | 'HALF_OPEN';

export interface BreakerRecord {
  provider: string;
  state: BreakerState;
  failures: number;
  /** Times the breaker opened since it last closed. */
  openCycles: number;
  openedAt?: number;
  lastFailureAt?: number;
  lastStatus?: number;
  lastError?: string;
  /** HALF_OPEN: when the probe in flight was let through. */
  probeAt?: number;
}

export type BreakerAdmission = { ok: true } | { ok: false; retryAfterMs: number; reason: string };

/** A probe that never reported back (should not happen) is given up after this long. */
const PROBE_STALE_MS = 5 * 60_000;
const OK: BreakerAdmission = { ok: true };

export class ProviderBreakers {
  private readonly map = new Map<string, BreakerRecord>();
  /** Providers whose record changed since the last persistence flush. */
  readonly dirty = new Set<string>();
  /** Told when a breaker opens, and when one closes again (webhooks). */
  readonly transitions: ((provider: string, to: 'opened' | 'closed') => void)[] = [];

  private tell(provider: string, to: 'opened' | 'closed'): void {
    for (const t of this.transitions) t(provider, to);
  }

  constructor(private readonly profileOf: (provider: string) => BreakerProfile) {}

  /** Effective reset time for the record's open cycle count. */
  resetMs(b: BreakerRecord): number {
    const p = this.profileOf(b.provider);
    const over = b.openCycles - p.backoffEscalationCount;
    const mult = over > 0 ? Math.min(p.maxBackoffMultiplier, 2 ** over) : 1;
    return p.resetTimeoutMs * Math.max(1, mult);
  }

  /** OPEN becomes HALF_OPEN once its reset time has passed (lazily, on every read). */
  private refresh(b: BreakerRecord, now: number): void {
    if (b.state === 'OPEN' && now >= (b.openedAt ?? 0) + this.resetMs(b)) {
      b.state = 'HALF_OPEN';
      b.probeAt = undefined;
      this.dirty.add(b.provider);
    }
  }

  admit(provider: string, now: number): BreakerAdmission {
    const b = this.map.get(provider);
    if (b === undefined || b.state === 'CLOSED' || b.state === 'DEGRADED') return OK;
    this.refresh(b, now);
    if (b.state === 'OPEN') {
      return { ok: false, retryAfterMs: Math.max(1, (b.openedAt ?? now) + this.resetMs(b) - now), reason: `circuit breaker of provider ${provider} is OPEN` };
    }
    if (b.probeAt !== undefined && now - b.probeAt < PROBE_STALE_MS) {
      return { ok: false, retryAfterMs: 1000, reason: `circuit breaker of provider ${provider} is HALF_OPEN and its probe is in flight` };
    }
    b.probeAt = now;
    return OK;
  }

  onSuccess(provider: string): void {
    const b = this.map.get(provider);
    if (b === undefined) return;
    if (b.state === 'HALF_OPEN') {
      this.map.delete(provider); // probe succeeded: closed and reset
      this.dirty.add(provider);
      this.tell(provider, 'closed');
      return;
    }
    if (b.state === 'OPEN') return; // an attempt admitted before the breaker opened; the probe decides
    b.failures = Math.max(0, b.failures - 1);
    if (b.failures === 0) this.map.delete(provider);
    else b.state = b.failures >= this.profileOf(provider).degradationThreshold ? 'DEGRADED' : 'CLOSED';
    this.dirty.add(provider);
  }

  onFailure(provider: string, now: number, status: number, error: string): void {
    let b = this.map.get(provider);
    if (b === undefined) {
      b = { provider, state: 'CLOSED', failures: 0, openCycles: 0 };
      this.map.set(provider, b);
    }
    this.refresh(b, now);
    b.lastFailureAt = now;
    b.lastStatus = status;
    b.lastError = error.slice(0, 300);
    this.dirty.add(provider);
    const p = this.profileOf(provider);
    if (b.state === 'HALF_OPEN') {
      this.open(b, now);
      return;
    }
    if (b.state === 'OPEN') return; // late failure of an attempt admitted before the breaker opened
    b.failures++;
    if (b.failures >= p.failureThreshold) this.open(b, now);
    else if (b.failures >= p.degradationThreshold) b.state = 'DEGRADED';
  }

  /** An outcome that says nothing about the provider (429, client error, abort): a probe is given back. */
  onNeutral(provider: string): void {
    const b = this.map.get(provider);
    if (b?.state === 'HALF_OPEN' && b.probeAt !== undefined) {
      b.probeAt = undefined;
    }
  }

  private open(b: BreakerRecord, now: number): void {
    b.state = 'OPEN';
    b.openedAt = now;
    b.openCycles++;
    b.probeAt = undefined;
    this.tell(b.provider, 'opened');
  }

  /** Reset one provider's breaker or all of them; returns how many were not CLOSED-and-clean. */
  reset(provider?: string): number {
    if (provider !== undefined) {
      const had = this.map.delete(provider);
      if (had) this.dirty.add(provider);
      return had ? 1 : 0;
    }
    const n = this.map.size;
    for (const id of this.map.keys()) this.dirty.add(id);
    this.map.clear();
    return n;
  }

  /** Forget providers that no longer exist. */
  prune(exists: (provider: string) => boolean): void {
    for (const id of this.map.keys()) {
      if (!exists(id)) {
        this.map.delete(id);
        this.dirty.add(id);
      }
    }
  }

  state(provider: string, now: number): BreakerState {
    const b = this.map.get(provider);
    if (!b) return 'CLOSED';
    this.refresh(b, now);
    return b.state;
  }

  get(provider: string, now: number): BreakerRecord | undefined {
    const b = this.map.get(provider);
    if (b) this.refresh(b, now);
    return b;
  }

  records(now: number): BreakerRecord[] {
    for (const b of this.map.values()) this.refresh(b, now);
    return [...this.map.values()];
  }

  /** Restore persisted records at start (a probe in flight before the restart is given back). */
  restore(records: BreakerRecord[]): void {
    for (const r of records) {
      if (typeof r?.provider !== 'string' || !['CLOSED', 'DEGRADED', 'OPEN', 'HALF_OPEN'].includes(r.state)) continue;
      this.map.set(r.provider, { ...r, probeAt: undefined });
    }
  }

  /** Another daemon's changes (shared storage): taken as they are, not marked for persistence here. */
  applyRemote(upsert: readonly BreakerRecord[], remove: readonly string[]): void {
    this.restore([...upsert]);
    for (const id of remove) this.map.delete(id);
  }

  /** Pending persistence work: records to write and providers to delete. */
  takeDirty(): { upsert: BreakerRecord[]; remove: string[] } {
    const upsert: BreakerRecord[] = [];
    const remove: string[] = [];
    for (const id of this.dirty) {
      const b = this.map.get(id);
      if (b) upsert.push({ ...b, probeAt: undefined });
      else remove.push(id);
    }
    this.dirty.clear();
    return { upsert, remove };
  }
}
