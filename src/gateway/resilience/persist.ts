/**
 * What of the resilience state must survive a restart: provider breakers (an OPEN provider stays
 * open) and connection cool-downs (an account told to come back in an hour is not hammered after a
 * restart). Changes are marked dirty in memory and written in one transaction every `flushMs`, never
 * on the request path. Model lock-outs and session pins are memory only.
 */
import type { Logger } from 'pino';
import type { Store } from '../../store/index.js';
import type { BreakerRecord } from './breaker.js';
import type { CooldownRecord } from './cooldown.js';
import type { ResilientPolicy } from './policy.js';
import type { SharedResilience } from './redis.js';
import type { SchemaStep } from '../schema.js';

/** Resilience state: this capability's share of the gateway's SQLite migrations (placed by version in gateway/schema.ts). */
export const RESILIENCE_SCHEMA: SchemaStep[] = [
  {
    // Breaker and connection-cooldown state that must survive a restart (written in batches).
    version: 2,
    up: `
-- Breaker and connection-cooldown state that must survive a restart (written in batches).
CREATE TABLE resilience_state (
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  data TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (kind, key)
);
`,
  },
];

export class ResilienceState {
  private timer: NodeJS.Timeout | undefined;
  /** With storage.redis: changes are published to the other daemons too (redis.ts). */
  private shared?: SharedResilience;

  constructor(
    private readonly store: Store,
    private readonly policy: ResilientPolicy,
    private readonly log: Logger,
    private readonly flushMs = 1000,
    /** Most session pins kept (the affinity settings' maxSessions). */
    private readonly maxPins: () => number = () => 10_000,
  ) {}

  /** Load what was persisted (call once, before traffic). */
  restore(now: number): void {
    const rows = this.store.prepare('SELECT kind, data FROM resilience_state').all() as { kind: string; data: string }[];
    const breakers: BreakerRecord[] = [];
    const cooldowns: CooldownRecord[] = [];
    for (const r of rows) {
      try {
        const v = JSON.parse(r.data) as unknown;
        if (r.kind === 'breaker') breakers.push(v as BreakerRecord);
        else if (r.kind === 'cooldown') cooldowns.push(v as CooldownRecord);
      } catch {
        /* a corrupt row is dropped */
      }
    }
    this.policy.breakers.restore(breakers);
    this.policy.cooldowns.restore(cooldowns, now);
  }

  /** Share breakers and cool-downs with the other daemons: take theirs now and as they change. */
  async share(shared: SharedResilience, now: () => number): Promise<void> {
    this.shared = shared;
    const apply = (ch: Awaited<ReturnType<SharedResilience['load']>>) => {
      this.policy.breakers.applyRemote(ch.breakers.upsert, ch.breakers.remove);
      this.policy.cooldowns.applyRemote(ch.cooldowns.upsert, ch.cooldowns.remove, now());
      if (ch.pins) this.policy.affinity.applyRemote(ch.pins, this.maxPins());
    };
    this.policy.affinity.trackChanges();
    apply(await shared.load());
    await shared.follow(apply);
  }

  /** Start the periodic flush (unref'd: it never keeps the process alive). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.flush(), this.flushMs);
    this.timer.unref();
  }

  flush(): void {
    const pins = this.shared ? this.policy.affinity.takeChanges() : [];
    if (this.policy.breakers.dirty.size === 0 && this.policy.cooldowns.dirty.size === 0 && pins.length === 0) return;
    const b = this.policy.breakers.takeDirty();
    const c = this.policy.cooldowns.takeDirty();
    const now = Date.now();
    this.shared?.publish({ breakers: b, cooldowns: c, pins }).catch((e: Error) => this.log.warn({ err: e.message }, 'gateway: publishing resilience state to the other daemons failed'));
    try {
      const up = this.store.prepare(
        'INSERT INTO resilience_state (kind, key, data, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(kind, key) DO UPDATE SET data=excluded.data, updated_at=excluded.updated_at',
      );
      const del = this.store.prepare('DELETE FROM resilience_state WHERE kind = ? AND key = ?');
      this.store.transaction(() => {
        for (const r of b.upsert) up.run('breaker', r.provider, JSON.stringify(r), now);
        for (const id of b.remove) del.run('breaker', id);
        for (const r of c.upsert) up.run('cooldown', `${r.provider}#${r.accountId}`, JSON.stringify(r), now);
        for (const key of c.remove) del.run('cooldown', key);
      });
    } catch (e) {
      this.log.warn({ err: e }, 'gateway: persisting resilience state failed (kept in memory)');
      for (const r of b.upsert) this.policy.breakers.dirty.add(r.provider);
      for (const id of b.remove) this.policy.breakers.dirty.add(id);
      for (const r of c.upsert) this.policy.cooldowns.dirty.add(`${r.provider}#${r.accountId}`);
      for (const key of c.remove) this.policy.cooldowns.dirty.add(key);
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.flush();
    this.shared?.close();
  }
}
