/**
 * Session affinity (notes §3.5): a session id (`X-Session-Id`, `x_session_id`, `X-Gateway-Session-Id`)
 * is pinned to the account of a provider, and to the target of a combo, that last served it, so an
 * agent's turns keep hitting the same provider prompt cache. Pins expire after `ttlMs` without use
 * (never "pinned forever"), are dropped when the pinned account fails, and are re-pinned to whatever
 * serves the next request. Bounded: the least recently used pin goes first.
 */
/** A pin made or dropped here, for the other daemons of a cluster (value undefined: dropped). */
export interface PinChange {
  session: string;
  scope: string;
  value?: string;
  expiresAt?: number;
}

export class SessionAffinity {
  /** `<session>\0<scope>` → pinned value; Map order = least recently used first. */
  private readonly pins = new Map<string, { value: string; expiresAt: number }>();
  /** Set with shared storage: pins that changed (not mere refreshes) since they were last taken. */
  private changes?: Map<string, PinChange>;

  /** Record changes from now on (they are published to the other daemons). */
  trackChanges(): void {
    this.changes ??= new Map();
  }

  takeChanges(): PinChange[] {
    if (!this.changes || this.changes.size === 0) return [];
    const out = [...this.changes.values()];
    this.changes.clear();
    return out;
  }

  /** Another daemon's pins: taken as they are, not recorded as changes here. */
  applyRemote(changes: readonly PinChange[], max: number): void {
    for (const c of changes) {
      const key = `${c.session}\u0000${c.scope}`;
      this.pins.delete(key);
      if (c.value !== undefined && c.expiresAt !== undefined) this.pins.set(key, { value: c.value, expiresAt: c.expiresAt });
    }
    while (this.pins.size > max) this.pins.delete(this.pins.keys().next().value as string);
  }

  get(session: string, scope: string, now: number): string | undefined {
    if (this.pins.size === 0) return undefined;
    const key = `${session}\u0000${scope}`;
    const p = this.pins.get(key);
    if (!p) return undefined;
    if (p.expiresAt <= now) {
      this.pins.delete(key);
      return undefined;
    }
    return p.value;
  }

  set(session: string, scope: string, value: string, now: number, ttlMs: number, max: number): void {
    const key = `${session}\u0000${scope}`;
    if (this.changes && this.pins.get(key)?.value !== value) this.changes.set(key, { session, scope, value, expiresAt: now + ttlMs });
    this.pins.delete(key);
    this.pins.set(key, { value, expiresAt: now + ttlMs });
    while (this.pins.size > max) {
      const oldest = this.pins.keys().next().value as string;
      this.pins.delete(oldest);
    }
  }

  /** Forget a pin (when `value` is given, only if it still points there). */
  drop(session: string, scope: string, value?: string): void {
    const key = `${session}\u0000${scope}`;
    if (value === undefined || this.pins.get(key)?.value === value) {
      if (this.pins.delete(key)) this.changes?.set(key, { session, scope });
    }
  }

  /** Live pins: session, scope (`p:<provider>` or `c:<combo>`), what it points to, until when. */
  entries(now: number): { session: string; scope: string; value: string; expiresAt: number }[] {
    const out: { session: string; scope: string; value: string; expiresAt: number }[] = [];
    for (const [key, p] of this.pins) {
      if (p.expiresAt <= now) continue;
      const at = key.indexOf('\u0000');
      out.push({ session: key.slice(0, at), scope: key.slice(at + 1), value: p.value, expiresAt: p.expiresAt });
    }
    return out;
  }

  /** Live pins (for the health view). */
  count(now: number): number {
    let n = 0;
    for (const p of this.pins.values()) if (p.expiresAt > now) n++;
    return n;
  }

  clear(): void {
    this.pins.clear();
  }
}
